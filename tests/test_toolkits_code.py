"""ShellTool and CodeTool: real subprocesses, the execute engine, the OS sandbox where it exists."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from pathlib import Path

import pytest
from conftest import scripted_model

from agentica_cli import Agent, CodeTool, ShellTool
from agentica_cli.agent import Decision
from agentica_cli.testing import turns


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_code_tool_returns_the_last_value_output_and_files_written(tmp_path: Path) -> None:
    tool = CodeTool(timeout=20, work_dir=tmp_path)
    result = run(tool.run_python("import sys\nprint('hello')\nprint('oops', file=sys.stderr)\n"
                                 "open('out.csv', 'w').write('a,b\\n1,2\\n')\n{'answer': 6 * 7}"))
    assert result.startswith("[exit code 0;")
    assert "--- value ---\n{'answer': 42}" in result
    assert "--- stdout ---\nhello" in result
    assert "--- stderr ---\noops" in result
    assert "--- files written ---\nout.csv (8 bytes)" in result
    assert (tmp_path / "out.csv").read_text() == "a,b\n1,2\n"
    # a fresh interpreter each time: nothing but files persists; isolated mode (-I)
    second = run(tool.run_python("import sys, os\n[('answer' in globals()), sys.flags.isolated, "
                                 "sorted(os.listdir('.'))]"))
    assert "[False, 1, ['.agentica-code', 'out.csv']]" in second
    assert "files written" not in second


def test_code_tool_shows_the_traceback_of_an_error(tmp_path: Path) -> None:
    result = run(CodeTool(timeout=20, work_dir=tmp_path).run_python("x = 1\n1 / 0\n"))
    assert result.startswith("[exit code 1;")
    assert 'File "<code>", line 2' in result and "1 / 0" in result and "ZeroDivisionError" in result


def test_code_tool_kills_an_infinite_loop_at_the_timeout(tmp_path: Path) -> None:
    tool = CodeTool(timeout=1, work_dir=tmp_path)
    result = run(tool.run_python("import subprocess, sys\n"
                                 "subprocess.Popen([sys.executable, '-c', 'while True: pass'])\nwhile True: pass"))
    assert result.startswith("[killed: timed out after 1 s;")


def test_code_tool_stops_a_memory_hog_at_the_limit(tmp_path: Path) -> None:
    tool = CodeTool(timeout=20, memory_mb=200, work_dir=tmp_path)
    result = run(tool.run_python("hog = bytearray(400 * 1024 * 1024)\nlen(hog)"))
    assert "the memory limit (200 MB) was reached" in result and "MemoryError" in result
    assert "--- value ---" not in result
    assert "--- value ---\n52428800" in run(tool.run_python("len(bytearray(50 * 1024 * 1024))"))


@pytest.mark.skipif(sys.platform != "linux", reason="the network check uses the Linux sandbox backends")
def test_code_tool_cannot_reach_loopback_when_the_sandbox_is_on(tmp_path: Path) -> None:
    tool = CodeTool(timeout=20, work_dir=tmp_path)
    if not (tool.sandbox.confines and tool.sandbox.network_confined):
        pytest.skip(f"no sandbox that confines the network here ({tool.sandbox.describe()})")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n'connected'"
    try:
        confined = run(tool.run_python(code))
        assert "'connected'" not in confined and "Error" in confined
        assert not accepted
        # the same code without the sandbox reaches the listener: the check above is the sandbox's doing
        free = run(CodeTool(timeout=20, work_dir=tmp_path, sandbox=None).run_python(code))
        assert "--- value ---\n'connected'" in free
    finally:
        listener.close()


def test_code_tool_asks_before_running(scripted, tmp_path: Path) -> None:
    server = scripted(turns.tool_calls(turns.call("run_python", {"code": "2 ** 10"}, id="c1")), turns.text("1024"))
    asked: list[str] = []

    def approve(call):  # type: ignore[no-untyped-def]
        asked.append(call.args["code"])
        return Decision.allow()

    agent = Agent(scripted_model(server), tools=[CodeTool(work_dir=tmp_path)], approve=approve)
    assert agent.run_sync("compute").content == "1024"
    assert asked == ["2 ** 10"]
    tool_message = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert "--- value ---\n1024" in tool_message["content"]
    assert "scratch folder" in server.requests[0]["messages"][0]["content"]


def test_shell_tool_uses_the_execute_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET_TOKEN", "hunter2")
    tool = ShellTool(timeout=1, work_dir=tmp_path)
    assert list(tool.functions) == ["run_shell_command"]
    assert tool.functions["run_shell_command"].is_destructive
    out = run(tool.run_shell_command("pwd; echo ${MY_SECRET_TOKEN:-scrubbed}; exit 3"))
    assert out.startswith("[exit code 3;")
    assert str(tmp_path) in out and "scrubbed" in out and "hunter2" not in out
    slow = run(tool.run_shell_command("sleep 30", timeout=100))  # capped at the tool's timeout
    assert "timed out after 1 s" in slow
    with pytest.raises(ValueError, match="timeout must be"):
        ShellTool(timeout=0)


def test_toolkits_import_nothing_heavy_until_used() -> None:
    import subprocess

    code = ("import sys\nfrom agentica_cli import CodeTool, SqlTool, OcrTool, DalleTool, CogViewTool, "
            "ImageAnalysisTool, ShellTool\nSqlTool('sqlite:///x.db'); OcrTool(); DalleTool(); CodeTool(sandbox=None)\n"
            "print(sorted(m for m in ('sqlalchemy', 'PIL', 'rapidocr_onnxruntime', 'openai', 'onnxruntime', 'httpx')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_code_tool_never_writes_or_reads_through_a_planted_private_symlink(tmp_path: Path) -> None:
    """An earlier call replaced .agentica-code with a symlink to a folder outside (and left a
    symlink where the next value file would be read): the script must not land outside, and
    no outside file is read back as the value."""
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    scratch.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET\n")
    tool = CodeTool(timeout=20, work_dir=scratch)
    plant = (f"import os, shutil\nshutil.rmtree('.agentica-code')\nos.symlink({str(outside)!r}, '.agentica-code')\n"
             "print('planted')")
    assert "--- stdout ---\nplanted" in run(tool.run_python(plant))
    assert (scratch / ".agentica-code").is_symlink()
    result = run(tool.run_python("6 * 7"))
    assert "--- value ---\n42" in result
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # nothing written outside
    assert not (scratch / ".agentica-code").is_symlink()
    # The code itself points its value file at the secret: the parent does not read it back.
    steal = ("import os, sys, glob\nvalue = [a for a in open('/proc/self/cmdline').read().split('\\0') "
             "if a.endswith('.txt')][0]\n"
             f"os.symlink({str(outside / 'secret.txt')!r}, value)\nNone")
    stolen = run(tool.run_python(steal))
    assert "TOP-SECRET" not in stolen
