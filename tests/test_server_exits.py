"""`agentica acp` and `agentica mcp serve` end as `-p` does once their client closes stdin:
the atexit functions run (the end of the session's descendants, temporary folders, telemetry),
the interpreter's teardown does not (app/fast_exit.py: 171 -> 45 ms for acp, 254 -> 11 ms for
mcp serve, from the end of stdin to the process's end)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_support import AGENTICA, cli_env

# Run before agentica by `site`: one mark from an atexit function (and the modules loaded by
# then), one from an object that only the interpreter's teardown deletes.
HOOK = """\
import atexit, os, sys
_OUT = os.environ.get("EXIT_MARKS")
if _OUT:
    atexit.register(lambda: open(_OUT + ".atexit", "w").write("ran"))
    atexit.register(lambda: open(_OUT + ".modules", "w").write("\\n".join(sorted(sys.modules))))

    class _Teardown:
        def __del__(self, open=open, out=_OUT):
            open(out + ".teardown", "w").write("ran")

    _kept_until_teardown = _Teardown()
"""

HELLO = {
    "acp": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}},
    "mcp serve": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "1"}}},
}


@pytest.fixture
def hook(tmp_path: Path) -> Path:
    folder = tmp_path / "hook"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(HOOK)
    return folder


def test_the_hook_tells_a_teardown_from_none(tmp_path: Path, hook: Path) -> None:
    """The two marks mean what the test below reads them as: a plain interpreter writes both."""
    import sys

    marks = tmp_path / "plain"
    subprocess.run([sys.executable, "-c", "pass"], env={"PYTHONPATH": str(hook), "EXIT_MARKS": str(marks)},
                   check=True, timeout=60)
    assert Path(f"{marks}.atexit").exists() and Path(f"{marks}.teardown").exists()


@pytest.mark.parametrize("command", list(HELLO))
def test_the_end_of_stdin_ends_the_server_after_its_atexit_work_without_a_teardown(
        command: str, tmp_path: Path, hook: Path) -> None:
    home, project, marks = tmp_path / "home", tmp_path / "project", tmp_path / "marks"
    home.mkdir()
    project.mkdir()
    env = cli_env(home, PYTHONPATH=str(hook), EXIT_MARKS=str(marks))
    proc = subprocess.Popen([*AGENTICA, *command.split()], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=project)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(HELLO[command]) + "\n").encode())
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    proc.stdin.close()
    code = proc.wait(timeout=60)
    assert reply["id"] == 1 and "result" in reply
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    assert Path(f"{marks}.atexit").read_text() == "ran"
    assert not Path(f"{marks}.teardown").exists()


def test_mcp_serve_answers_initialize_without_loading_a_sessions_runtime(tmp_path: Path, hook: Path) -> None:
    """The runtime (agent, tools, app session: ~170 ms of imports) is loaded by the first
    tools/call, not before `initialize` is answered."""
    home, marks = tmp_path / "home", tmp_path / "marks"
    home.mkdir()
    done = subprocess.run([*AGENTICA, "mcp", "serve"], input=(json.dumps(HELLO["mcp serve"]) + "\n").encode(),
                          capture_output=True, env=cli_env(home, PYTHONPATH=str(hook), EXIT_MARKS=str(marks)),
                          cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1
    loaded = set(Path(f"{marks}.modules").read_text().split())
    assert "agentica_cli.mcp_serve.server" in loaded
    assert not loaded & {"agentica_cli.app.session", "agentica_cli.mcp_serve.session", "agentica_cli.agent.agent"}
