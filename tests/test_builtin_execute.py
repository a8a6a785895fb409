"""execute: real bash subprocesses, process-group kills, bounded output, scrubbed env."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from builtin_support import call_tool

from agentica_cli.tools.context import ToolContext
from builtin_tools import BuiltinExecuteTool
from builtin_tools.output_capture import OutputCapture


def run(tool: BuiltinExecuteTool, command: str, timeout: int = 30, ctx: ToolContext | None = None) -> str:
    call = call_tool(tool, "execute", tool_context=ctx, command=command, timeout=timeout)
    assert call.error is None, call.error
    return call.result


def alive(pid: int) -> bool:
    """Running (zombies awaiting a reaper count as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def group_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(name))
    return members


@pytest.fixture
def tool(tmp_path: Path) -> BuiltinExecuteTool:
    return BuiltinExecuteTool(tmp_path)


def test_exit_code_labelled_streams_and_work_dir(tool: BuiltinExecuteTool, tmp_path: Path) -> None:
    out = run(tool, "pwd; echo oops >&2; exit 3")
    assert re.fullmatch(
        rf"\[exit code 3; \d+\.\d s\]\n--- stdout ---\n{re.escape(str(tmp_path))}\n--- stderr ---\noops", out
    ), out
    assert re.fullmatch(r"\[exit code 0; \d+\.\d s\]\n\(no output\)", run(tool, "true"))
    assert tool.functions["execute"].is_destructive


def test_commands_run_in_bash(tool: BuiltinExecuteTool) -> None:
    out = run(tool, 'echo "shell=${BASH_VERSION:+bash}"; [[ a == a ]] && echo "double brackets work"')
    assert out.splitlines()[2:] == ["shell=bash", "double brackets work"]


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc or uses setsid/prctl (Linux)")
def test_stdin_is_dev_null(tool: BuiltinExecuteTool) -> None:
    start = time.monotonic()
    out = run(tool, 'read -r line; echo "read=$? line=[$line]"; cat; readlink /proc/self/fd/0', timeout=10)
    assert time.monotonic() - start < 5
    assert out.splitlines()[2:] == ["read=1 line=[]", "/dev/null"]


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc or uses setsid/prctl (Linux)")
def test_timeout_kills_the_whole_group_within_3s(tool: BuiltinExecuteTool) -> None:
    start = time.monotonic()
    out = run(tool, "echo PGID=$$; (sleep 100; echo never) & bash -c 'sleep 100' & sleep 100", timeout=2)
    elapsed = time.monotonic() - start
    assert elapsed < 3.0, elapsed
    assert out.startswith("[exit code 124: timed out after 2 s; the command and its child processes were killed")
    pgid = int(re.search(r"PGID=(\d+)", out).group(1))
    deadline = time.monotonic() + 1
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert group_members(pgid) == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc or uses setsid/prctl (Linux)")
def test_timeout_also_kills_a_grandchild_that_left_the_group_but_holds_the_pipe(tool: BuiltinExecuteTool) -> None:
    start = time.monotonic()
    out = run(tool, "setsid sh -c 'echo ESCAPED=$$; exec sleep 100' & sleep 100", timeout=2)
    assert time.monotonic() - start < 3.0
    escaped = int(re.search(r"ESCAPED=(\d+)", out).group(1))
    deadline = time.monotonic() + 1
    while alive(escaped) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(escaped)


def test_sleep_100_with_timeout_2(tool: BuiltinExecuteTool) -> None:
    start = time.monotonic()
    out = run(tool, "sleep 100", timeout=2)
    assert time.monotonic() - start < 3.0
    assert out.startswith("[exit code 124: timed out after 2 s")


async def _cancel_once_started(tool: BuiltinExecuteTool, marker: Path) -> int:
    """Run `echo $$ > marker; sleep 100`, cancel the call once the shell wrote its pid; the pid
    (its group's id too)."""
    task = asyncio.create_task(tool.execute(f"echo $$ > {marker}; sleep 100"))
    while not marker.exists() or not marker.read_text().strip():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return int(marker.read_text())


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc or uses setsid/prctl (Linux)")
def test_cancelling_the_call_kills_the_group(tool: BuiltinExecuteTool, tmp_path: Path) -> None:
    pgid = asyncio.run(_cancel_once_started(tool, tmp_path / "pgid"))
    deadline = time.monotonic() + 1
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert group_members(pgid) == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc (Linux)")
def test_a_cancelled_command_is_reaped_not_left_a_zombie(tool: BuiltinExecuteTool, tmp_path: Path) -> None:
    async def scenario() -> None:
        pid = await _cancel_once_started(tool, tmp_path / "pgid")
        # still inside the run: no later start of another process has reaped it by chance
        assert not os.path.exists(f"/proc/{pid}"), "the killed shell is a zombie"

    asyncio.run(scenario())

def test_timeout_is_capped_at_600(tool: BuiltinExecuteTool) -> None:
    assert "; timeout capped at 600 s;" in run(tool, "true", timeout=100_000)


def test_background_job_holding_the_pipe_does_not_hang_the_call(tool: BuiltinExecuteTool) -> None:
    start = time.monotonic()
    out = run(tool, "sleep 30 & echo BG=$!", timeout=20)
    assert time.monotonic() - start < 3
    assert "background processes still held the output" in out
    os.kill(int(re.search(r"BG=(\d+)", out).group(1)), signal.SIGKILL)


def test_huge_output_keeps_head_and_tail_with_exact_omitted_count(tool: BuiltinExecuteTool) -> None:
    out = run(tool, "seq 1 200000")
    body = out.split("--- stdout ---\n", 1)[1]
    assert len(body) <= 30_000 + 100
    head, marker, tail = re.split(r"\n?(\[\.\.\. \d+ lines omitted \.\.\.\])\n", body)
    assert head.startswith("1\n2\n3\n")
    assert tail.endswith("199999\n200000")
    head_numbers = [int(x) for x in head.split("\n")]
    tail_numbers = [int(x) for x in tail.split("\n")]
    omitted = int(re.search(r"\d+", marker).group())
    # whole lines on both sides, and the count is exact
    assert head_numbers == list(range(1, len(head_numbers) + 1))
    assert tail_numbers == list(range(200001 - len(tail_numbers), 200001))
    assert omitted == 200000 - len(head_numbers) - len(tail_numbers)


def test_multibyte_output_is_never_split(tool: BuiltinExecuteTool) -> None:
    out = run(tool, "python3 -c \"import sys; sys.stdout.write('é€😀' * 200000)\"")
    assert "\ufffd" not in out
    body = out.split("--- stdout ---\n", 1)[1]
    assert "[... 0 lines omitted ...]" in body
    assert set(body.replace("[... 0 lines omitted ...]", "").replace("\n", "")) == {"é", "€", "😀"}


def test_output_capture_cuts_on_character_boundaries() -> None:
    capture = OutputCapture(head_bytes=4, tail_bytes=5)
    capture.feed("ab€cd".encode())  # '€' is 3 bytes: the 4-byte head ends inside it
    capture.feed(b"x" * 100)
    capture.feed("€€€€".encode())  # the last 5 bytes start inside a '€'
    assert capture.total_bytes == 7 + 100 + 12
    assert capture.render(max_chars=1000) == "ab\n[... 0 lines omitted ...]\n€"


def test_50mb_of_output_stays_bounded_in_memory(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import asyncio, resource, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from builtin_tools import BuiltinExecuteTool
        tool = BuiltinExecuteTool({str(tmp_path)!r})
        asyncio.run(tool.execute("true"))  # warm up imports and the event loop
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = asyncio.run(tool.execute("yes | head -c 50000000", timeout=60))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(after - before, len(result), result.splitlines()[0])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    growth_kb, length, status = proc.stdout.split(maxsplit=2)
    assert int(growth_kb) < 10 * 1024, f"peak RSS grew by {growth_kb} KB"
    assert int(length) < 31_000
    assert status.startswith("[exit code 0;")


def test_secret_variables_are_not_passed(tool: BuiltinExecuteTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("DB_PASSWORD", "hunter2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("MODEL_CONFIG", "model-key-value")  # innocent name, but the model's key
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    agent = SimpleNamespace(model=SimpleNamespace(api_key="model-key-value"))
    out = run(tool, "env", ctx=ToolContext(call_id="c1", agent=agent))
    for secret in ("OPENAI_API_KEY", "sk-parent-secret", "GITHUB_TOKEN", "hunter2", "aws-secret",
                   "model-key-value", "MODEL_CONFIG"):
        assert secret not in out
    assert "PLAIN_SETTING=visible" in out
    assert "PATH=" in out


def test_the_models_key_variable_is_dropped_even_with_an_innocent_name(
    tool: BuiltinExecuteTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentica_cli.models import OpenAIChat

    class InHouseModel(OpenAIChat):  # a provider preset whose key lives in $LLM_ACCESS
        api_key_env = "LLM_ACCESS"

    monkeypatch.setenv("LLM_ACCESS", "value-of-the-model-key")
    model = InHouseModel(id="m", base_url="http://127.0.0.1:9/v1")
    assert model.api_key is None  # the key only lives in the environment
    out = run(tool, "env", ctx=ToolContext(call_id="c2", agent=SimpleNamespace(model=model)))
    assert "LLM_ACCESS" not in out and "value-of-the-model-key" not in out


def test_env_scrubbing_can_be_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("NPM_TOKEN", "npm-secret")
    kept = BuiltinExecuteTool(tmp_path, keep_env=["GITHUB_TOKEN"])
    out = run(kept, "env")
    assert "GITHUB_TOKEN=ghp-secret" in out and "npm-secret" not in out
    off = BuiltinExecuteTool(tmp_path, scrub_secrets=False)
    out = run(off, "env")
    assert "GITHUB_TOKEN=ghp-secret" in out and "NPM_TOKEN=npm-secret" in out


def test_empty_command_is_an_error(tool: BuiltinExecuteTool) -> None:
    call = call_tool(tool, "execute", command="   ")
    assert call.error == "Error: ValueError: command is empty."
