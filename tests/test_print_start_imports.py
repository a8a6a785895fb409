"""What `agentica -p` has imported when its first model request goes out (issue 29 item 6).

Every module loaded before the first request is start-up time a batch of hundreds of tasks
pays each time; the ones below are not needed for it and are imported later, when used. The
run is the real command line in a subprocess against the scripted server; a small wrapper
notes `sys.modules` at the moment the first request is sent (the endpoint's `_send`, after
the body is built), without changing what the command imports or when.
"""

from __future__ import annotations

import sys
from pathlib import Path

from first_request_probe import noted_at_first_request

MODULES = """
    def noted():
        return sorted(sys.modules)
"""

# Not needed before the first request of a -p run:
NOT_BEFORE_FIRST_REQUEST = (
    "ctypes",  # the sandbox's bwrap start and seccomp filter need it, its backend probe does not
    "agentica_cli.app.permissions.shell_parts",  # the shell parser: checking a command, not reading rules
    "agentica_cli.app.permissions.shell_grammar",
    "rich",  # the REPL's and batch's rendering; -p prints plain text
    "prompt_toolkit",  # the REPL's input
    "openai",  # the SDK: models go over httpx2 (models/chat_http.py)
    "agentica_cli.tui",  # the REPL
    "agentica_cli.acp",
    "typer",  # the command line: a plain -p line is read without it (cli/plain_flags.py)
)


def modules_at_first_request(tmp_path: Path) -> list[str]:
    return noted_at_first_request(tmp_path, MODULES, "read notes.txt")


def _not_before_first_request() -> tuple[str, ...]:
    """NOT_BEFORE_FIRST_REQUEST on this machine: where bubblewrap does not work, the session's
    sandbox backend is asked of Landlock next, whose check is a system call made with ctypes."""
    from agentica_cli.sandbox.bwrap import bwrap_works

    if sys.platform.startswith("linux") and not bwrap_works():
        return tuple(name for name in NOT_BEFORE_FIRST_REQUEST if name != "ctypes")
    return NOT_BEFORE_FIRST_REQUEST


def test_print_mode_sends_its_first_request_without_the_modules_it_does_not_need(tmp_path: Path) -> None:
    loaded = modules_at_first_request(tmp_path)
    assert "agentica_cli.headless.printers" in loaded  # the wrapper saw a -p run's request
    lazy_ones = _not_before_first_request()
    early = [name for name in loaded if name.split(".")[0] in lazy_ones
             or any(name == lazy or name.startswith(lazy + ".") for lazy in lazy_ones)]
    assert early == []


def _zygote_modules(base_url: str) -> set[str]:
    """What the batch's zygote has imported when it says it is ready (its preload, in a fresh
    interpreter, as `python -P -m agentica_cli.batch.zygote` runs it)."""
    import json
    import subprocess
    import sys

    code = ("import json, sys\nfrom agentica_cli.batch import zygote\n"
            f"zygote.preload(zygote.PRELOAD, {base_url!r})\nprint(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout))


def test_the_batch_zygote_preloads_what_p_imports_before_its_first_request_and_no_later_module(
        tmp_path: Path) -> None:
    """A batch's sessions are forked from the zygote: a module `-p` loads before its first
    request and the zygote does not is imported again by every child (N times the CPU in a wave
    of N); a module of zygote.LATER that `-p` does load before its first request belongs in the
    preload (the first sessions would each import it). The probe's `-p` run goes to the scripted
    server over plain http, as the zygote of a batch with that --base-url prepares for."""
    from agentica_cli.batch.zygote import LATER

    loaded = set(modules_at_first_request(tmp_path))
    zygote = _zygote_modules("http://127.0.0.1:1/v1")
    assert sorted(loaded - zygote) == []
    # (a module of LATER the preload has loaded already, e.g. ctypes by the sandbox's Landlock
    # check on a machine without a working bubblewrap, is in every child as the preload's are)
    assert sorted(name for name in LATER if name in loaded and name not in zygote) == []
