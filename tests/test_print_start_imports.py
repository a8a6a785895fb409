"""What `agentica -p` has imported when its first model request goes out (issue 29 item 6).

Every module loaded before the first request is start-up time a batch of hundreds of tasks
pays each time; the ones below are not needed for it and are imported later, when used. The
run is the real command line in a subprocess against the scripted server; a small wrapper
notes `sys.modules` at the moment the first request is sent (the endpoint's `_send`, after
the body is built), without changing what the command imports or when.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from agentica_cli.testing import ScriptedModelServer, turns

CHILD = textwrap.dedent("""
    import json, sys
    from agentica_cli.models.openai_chat import OpenAIChat

    out = sys.argv.pop(1)
    endpoint = OpenAIChat.endpoint

    def noting_endpoint(self):
        found = endpoint(self)
        send = found._send

        async def noting_send(params, **kwargs):
            if not hasattr(noting_send, "noted"):
                noting_send.noted = True
                with open(out, "w") as f:
                    json.dump(sorted(sys.modules), f)
            return await send(params, **kwargs)

        found._send = noting_send
        return found

    OpenAIChat.endpoint = noting_endpoint
    from agentica_cli.cli.app import main
    sys.exit(main(sys.argv[1:]))
""")

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
)


def modules_at_first_request(tmp_path: Path) -> list[str]:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "notes.txt").write_text("a small file\n")
    noted = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
    env.update(AGENTICA_HOME=str(home), AGENTICA_API_KEY="sk-test")
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(noted), "-p", "read notes.txt", "--base-url", server.base_url, "--yes"],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )
        requests = len(server.request_log)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert requests == 1
    return json.loads(noted.read_text())


def test_print_mode_sends_its_first_request_without_the_modules_it_does_not_need(tmp_path: Path) -> None:
    loaded = modules_at_first_request(tmp_path)
    assert "agentica_cli.headless.printers" in loaded  # the wrapper saw a -p run's request
    early = [name for name in loaded if name.split(".")[0] in NOT_BEFORE_FIRST_REQUEST
             or any(name == lazy or name.startswith(lazy + ".") for lazy in NOT_BEFORE_FIRST_REQUEST)]
    assert early == []
