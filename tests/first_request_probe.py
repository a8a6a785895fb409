"""Run the real `agentica -p` in a subprocess against the scripted server and note something
at the moment its first model request goes out (the endpoint's `_send`, after the body is
built), without changing what the command imports or when.

Used by tests/test_print_start_imports.py (the modules loaded by then) and
tests/test_models_tls.py (the CA files read by then).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from agentica_cli.testing import ScriptedModelServer, turns

_CHILD = """
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
                json.dump(noted(), f)
        return await send(params, **kwargs)

    found._send = noting_send
    return found


OpenAIChat.endpoint = noting_endpoint
from agentica_cli.cli.app import main
sys.exit(main())  # argv None: as the console script runs it (sys.argv[1:] are its flags)
"""


def noted_at_first_request(tmp_path: Path, noted: str, prompt: str, *, drop_env: tuple[str, ...] = (),
                           base_url_in_config: bool = False, home: Path | None = None) -> Any:
    """`noted`: the source of a function `noted()` run in the child at its first request,
    returning what to report (JSON). `drop_env`: more environment variables (prefixes,
    case-insensitive) to leave out of the child's environment. `base_url_in_config`: the server's
    URL is set in the user's config.toml, not by --base-url. `home`: agentica's home folder, for
    runs that share one (default: a new one in tmp_path). Asserts the run answered "ok" with
    exactly one request, and returns what `noted()` returned."""
    home, work = home or tmp_path / "home", tmp_path / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True)
    (work / "notes.txt").write_text("a small file\n")
    out = tmp_path / "noted.json"
    dropped = tuple(name.lower() for name in ("AGENTICA_", "OPENAI_", *drop_env))
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith(dropped)}
    env.update(AGENTICA_HOME=str(home), AGENTICA_API_KEY="sk-test")
    child = textwrap.dedent(noted) + _CHILD
    with ScriptedModelServer([turns.text("ok")]) as server:
        if base_url_in_config:
            (home / "config.toml").write_text(f'[model]\nbase_url = "{server.base_url}"\n')
        where = [] if base_url_in_config else ["--base-url", server.base_url]
        proc = subprocess.run(
            [sys.executable, "-c", child, str(out), "-p", prompt, *where, "--yes"],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )
        requests = len(server.request_log)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    assert requests == 1
    return json.loads(out.read_text())
