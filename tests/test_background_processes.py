"""Background processes: execute(background=true), incremental reads, stop, the ring buffer,
and no process left behind (checked in /proc), with real processes and a real HTTP server."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from builtin_support import call_tool
from test_builtin_execute import alive, group_members

from builtin_tools import BuiltinExecuteTool
from builtin_tools.background import BackgroundProcesses, OutputRing, background_processes

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="checks processes and groups in /proc (Linux)")

SERVER = f"{sys.executable} -u -m http.server 0 --bind 127.0.0.1"
PORT = re.compile(r"port (\d+)")


@pytest.fixture
def tool(tmp_path: Path) -> Iterator[BuiltinExecuteTool]:
    tool = BuiltinExecuteTool(tmp_path)
    yield tool
    tool.background.stop_all(grace=0.5)  # nothing a failed test started outlives it


def call(tool: BuiltinExecuteTool, name: str, **arguments: object) -> str:
    result = call_tool(tool, name, **arguments)
    assert result.error is None, result.error
    return result.result or ""


def start(tool: BuiltinExecuteTool, command: str) -> tuple[str, str]:
    """(the process id, execute's result) for a command started in the background."""
    result = call(tool, "execute", command=command, background=True)
    found = re.search(r"\b(bg\d+)\b", result)
    assert found, result
    return found.group(1), result


def read_until(tool: BuiltinExecuteTool, process_id: str, pattern: str, seen: str = "", deadline_s: float = 15) -> str:
    """Everything read_background_output returns, read by read, until `pattern` appears."""
    deadline = time.monotonic() + deadline_s
    text = seen
    while not re.search(pattern, text):
        assert time.monotonic() < deadline, f"{pattern!r} never appeared in: {text!r}"
        time.sleep(0.05)
        text += "\n" + call(tool, "read_background_output", id=process_id).split("\n", 1)[1]
    return text


def wait_gone(pid: int, deadline_s: float = 10) -> None:
    deadline = time.monotonic() + deadline_s
    while (alive(pid) or group_members(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"process {pid} is still running"
    assert group_members(pid) == [], f"group {pid} still has {group_members(pid)}"


def test_http_server_in_the_background_answers_and_its_output_is_read_incrementally(
    tool: BuiltinExecuteTool,
) -> None:
    process_id, started = start(tool, SERVER)
    # the model learns the id, and how to read and to stop it
    assert f'read_background_output(id="{process_id}")' in started
    assert f'stop_background(id="{process_id}")' in started
    assert "keeps running" in started
    first = read_until(tool, process_id, r"port \d+", seen=started)
    port = int(PORT.search(first).group(1))  # type: ignore[union-attr]

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/served-path")
    response = connection.getresponse()
    assert response.status == 404  # answered by the server in the background (the path is made up)
    response.read()
    connection.close()

    second = read_until(tool, process_id, r"GET /served-path")
    assert "Serving HTTP" not in second  # only what is new since the last read
    third = call(tool, "read_background_output", id=process_id)
    assert "(no new output)" in third and "GET /served-path" not in third
    assert re.match(rf"\[{process_id}: running, pid \d+, up \d+s\]", third)

    entry = tool.background.get(process_id)
    stopped = call(tool, "stop_background", id=process_id)
    assert stopped.startswith(f"{process_id} stopped.")
    wait_gone(entry.pid)
    assert entry.state == "stopped"
    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=5).request("GET", "/")


def test_the_process_outlives_the_event_loop_of_the_call_that_started_it(tool: BuiltinExecuteTool) -> None:
    # every call_tool runs in its own asyncio.run: a library's run_sync does the same per turn
    process_id, started = start(tool, "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.1; done; echo done")
    text = read_until(tool, process_id, r"\bdone\b", seen=started)  # the first ticks came with the start
    assert [int(n) for n in re.findall(r"tick (\d+)", text)] == list(range(1, 11))  # nothing lost, nothing twice
    assert tool.background.get(process_id).state == "exited 0"


def test_a_command_that_ends_at_once_says_how(tool: BuiltinExecuteTool) -> None:
    _, result = start(tool, "echo no such server >&2; exit 3")
    assert "ended at once: exited 3" in result
    assert "no such server" in result


def test_unknown_id_is_a_readable_error_naming_the_known_ones(tool: BuiltinExecuteTool) -> None:
    process_id, _ = start(tool, "sleep 30")
    result = call_tool(tool, "read_background_output", id="bg999999")
    assert result.error is not None
    assert "no background process 'bg999999'" in result.error and process_id in result.error
    assert tool.background.get(process_id.removeprefix("bg")).id == process_id  # /kill 3 works as /kill bg3


def test_stop_reaches_children_and_a_process_that_ignores_sigterm(tool: BuiltinExecuteTool) -> None:
    # the shell ignores SIGTERM and has a child in its group: SIGKILL after the grace period
    process_id, _ = start(tool, "trap '' TERM; sleep 300 & sleep 300; wait")
    entry = tool.background.get(process_id)
    deadline = time.monotonic() + 10
    while len(group_members(entry.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(group_members(entry.pid)) >= 3
    tool.background.stop_many([entry], grace=0.3)
    wait_gone(entry.pid)


def test_a_process_that_left_the_group_but_holds_the_output_is_killed_too(
    tool: BuiltinExecuteTool, tmp_path: Path
) -> None:
    pid_file = tmp_path / "escaped.pid"
    process_id, _ = start(tool, f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 300' & sleep 300")
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    escaped = int(pid_file.read_text())
    assert alive(escaped)
    tool.background.stop(process_id, grace=0.5)
    deadline = time.monotonic() + 10
    while alive(escaped) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(escaped)


def test_stop_all_leaves_no_process(tool: BuiltinExecuteTool) -> None:
    ids = [start(tool, "sleep 300")[0] for _ in range(3)]
    pids = [tool.background.get(i).pid for i in ids]
    stopped = tool.background.stop_all(grace=1)
    assert {e.id for e in stopped} >= set(ids)
    for pid in pids:
        wait_gone(pid)


def test_every_execute_tool_shares_the_session_registry(tmp_path: Path) -> None:
    assert BuiltinExecuteTool(tmp_path).background is BuiltinExecuteTool(tmp_path / "other").background
    assert BuiltinExecuteTool(tmp_path).background is background_processes()


def test_the_group_dies_with_the_agent(tmp_path: Path) -> None:
    # An agent killed with SIGKILL runs no cleanup: the group watcher kills its processes.
    script = textwrap.dedent(
        """
        import os, sys, time
        from builtin_tools.background import BackgroundProcesses
        entry = BackgroundProcesses().start(["/bin/sh", "-c", "sleep 300"], command="sleep 300",
                                            cwd=".", env=dict(os.environ))
        print(entry.pid, flush=True)
        time.sleep(300)
        """
    )
    agent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parent.parent)
    try:
        pid = int(agent.stdout.readline())  # type: ignore[union-attr]
        assert alive(pid)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
    wait_gone(pid)


def test_ring_keeps_the_last_bytes_and_a_read_says_what_was_dropped() -> None:
    ring = OutputRing(limit=100)
    ring.feed(b"a" * 80)
    ring.feed(b"b" * 80)
    assert ring.end == 160 and ring.start == 60
    data, dropped = ring.since(0)
    assert data == b"a" * 20 + b"b" * 80 and dropped == 60
    data, dropped = ring.since(150)
    assert data == b"b" * 10 and dropped == 0


def test_a_read_is_capped_and_a_split_character_is_read_whole_next_time(tmp_path: Path) -> None:
    registry = BackgroundProcesses()
    entry = registry.start(["/bin/sh", "-c", "sleep 30"], command="sleep 30", cwd=str(tmp_path), env=dict(os.environ))
    try:
        entry.output.feed(b"x" * 50 + "é".encode()[:1])  # the first byte of a two-byte character
        assert entry.read_new() == "x" * 50
        entry.output.feed("é".encode()[1:] + b" done\n")
        assert entry.read_new() == "é done\n"
        entry.output.feed(b"0123456789" * 10)
        capped = entry.read_new(limit=25)
        assert capped == "[... 75 earlier bytes skipped ...]\n" + ("0123456789" * 3)[-25:]
    finally:
        registry.stop_all(grace=0.5)


def _sandbox(work_dir: Path, **policy: object):  # type: ignore[no-untyped-def]
    from agentica_cli.sandbox import Sandbox, SandboxPolicy, best_backend

    if best_backend() is None:
        pytest.skip("no sandbox backend on this machine (neither bubblewrap nor Landlock)")
    return Sandbox(SandboxPolicy(work_dir=work_dir, **policy))  # type: ignore[arg-type]


def test_a_background_command_runs_in_the_sandbox_like_any_command(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    tool = BuiltinExecuteTool(work, sandbox=_sandbox(work))
    try:
        process_id, started = start(tool, f"touch inside; touch {outside}/escaped; echo finished")
        read_until(tool, process_id, "finished", seen=started)
        assert (work / "inside").exists()
        assert not (outside / "escaped").exists()
    finally:
        tool.background.stop_all(grace=0.5)


def test_a_server_in_the_sandbox_without_network_is_said_to_be_out_of_reach(tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    if not sandbox.network_confined:
        pytest.skip(f"the {sandbox.backend} backend cannot confine the network here (Landlock ABI < 4)")
    offline = BuiltinExecuteTool(tmp_path, sandbox=sandbox)
    online = BuiltinExecuteTool(tmp_path, sandbox=_sandbox(tmp_path, network=True))
    try:
        _, result = start(offline, "sleep 30")
        assert "without network: nothing can connect" in result and "network=true" in result
        _, result = start(online, "sleep 30")
        assert "without network" not in result
    finally:
        offline.background.stop_all(grace=0.5)


def test_a_process_started_from_a_thread_that_ends_keeps_running(tmp_path: Path) -> None:
    # Like bwrap --die-with-parent: the command asks for SIGKILL when its parent goes, and the
    # kernel's "parent" is the thread that forked it. The tool's worker thread ends with its
    # event loop (after every -p run, every run_sync turn); the process must not end with it.
    command = (f"exec {sys.executable} -c 'import ctypes, time; ctypes.CDLL(None).prctl(1, 9); "
               "print(\"armed\", flush=True); time.sleep(60)'")
    registry = BackgroundProcesses()
    started: list = []
    release = threading.Event()

    def worker() -> None:
        started.append(registry.start(["/bin/sh", "-c", command], command=command, cwd=str(tmp_path),
                                      env=dict(os.environ)))
        release.wait(30)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while not (started and "armed" in started[0].output.since(0)[0].decode()):
            assert time.monotonic() < deadline, "the command never armed its parent-death signal"
            time.sleep(0.02)
        release.set()
        thread.join()
        time.sleep(0.5)
        assert started[0].running, started[0].state
    finally:
        release.set()
        registry.stop_all(grace=0.5)
