"""Landlock's fast path: a command starts from a short-lived thread that confined itself
(agentica_cli/sandbox/landlock_spawn.py), with no launcher process. What it must keep: the
agent itself stays unconfined, the command cannot get CAP_SYS_PTRACE back, the cached rules
follow the file system (a new file is readable, a new secret is hidden), and MCP servers
still get the launcher."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

import pytest
from builtin_support import call_tool
from sandbox_support import home_with_secrets, make_tool, run

from agentica_cli.sandbox import backend_available
from agentica_cli.sandbox.sandbox_session import session_thread_id
from builtin_tools import BuiltinExecuteTool

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="Landlock is Linux-only"),
    pytest.mark.skipif(not backend_available("landlock"),
                       reason="the kernel has no Landlock (Linux >= 5.13 with landlock enabled)"),
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return home_with_secrets(tmp_path / "home", "PRIVATE-KEY\n")


@pytest.fixture
def tool(tmp_path: Path, home: Path) -> BuiltinExecuteTool:
    work = tmp_path / "work"
    work.mkdir()
    return make_tool("landlock", work, home)


SPAWN_THREADS = ("agentica-landlock-session", "agentica-landlock-spawn", "agentica-bwrap-spawn")


def _spawn_threads() -> set[str]:
    """The sandbox's own threads (their /proc/self/task ids): the session thread, the spawn
    thread it keeps waiting for the next command, bwrap's spawn thread."""
    return {str(t.native_id) for t in threading.enumerate() if t.name in SPAWN_THREADS}


def _status(field: str, task: str = "self") -> str:
    for line in Path(f"/proc/{task}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {field} in /proc/{task}/status")


def test_no_launcher_process_and_the_agent_stays_unconfined(tool: BuiltinExecuteTool, tmp_path: Path) -> None:
    dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
    # bash's own /proc/self/status (opened by bash itself: the host's view, also when root's command is
    # the init of a PID namespace of its own, where $PPID is 0).
    result = run(tool, 'while read -r k v; do [ "$k" = PPid: ] && p=$v; [ "$k" = NoNewPrivs: ] && n=$v; '
                       'done < /proc/self/status; echo "parent=$p nnp=$n"; echo x > /etc/x')
    assert f"parent={os.getpid()} nnp=1" in result, result  # bash's parent is the agent: no launcher between
    assert "Permission denied" in result
    # No thread of this process kept the confinement or no_new_privs, and dumpable is as it was; but
    # the sandbox's own spawn threads, made for it: the session thread (a signal-scoped domain whose
    # reaper ends the commands if the agent dies: sandbox_session.py) and bwrap's (seccomp filter).
    spawners = _spawn_threads()
    threads = [t for t in os.listdir("/proc/self/task") if t not in spawners]
    assert [_status("NoNewPrivs", f"self/task/{t}") for t in threads] == ["0"] * len(threads)
    assert _status("NoNewPrivs", f"self/task/{session_thread_id()}") == "1"
    assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == dumpable
    (tmp_path / "outside-by-agent.txt").write_text("the agent still writes anywhere\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has capabilities to drop")
def test_the_command_cannot_get_cap_sys_ptrace(tool: BuiltinExecuteTool) -> None:
    """Not CAP_SYS_PTRACE (the spawn thread's memory), nor any other (issue 25 item 4: root's
    command under Landlock kept CAP_SYS_ADMIN, CAP_MKNOD, CAP_SYS_MODULE ...)."""
    result = run(tool, "grep -E '^Cap(Inh|Eff|Prm|Bnd|Amb)' /proc/self/status")
    masks = [int(line.split()[-1], 16) for line in result.splitlines() if line.startswith("Cap")]
    assert len(masks) == 5 and masks == [0] * 5, result


def test_the_cached_rules_follow_new_files_and_new_secrets(tool: BuiltinExecuteTool, home: Path) -> None:
    assert "PRIVATE-KEY" not in run(tool, f"cat {home}/.ssh/id_ed25519")
    (home / "later.txt").write_text("made after the first command\n")
    assert "made after the first command" in run(tool, f"cat {home}/later.txt")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("AWS-SECRET\n")
    result = run(tool, f"cat {home}/.aws/credentials; cat {home}/later.txt")
    assert "AWS-SECRET" not in result and "made after the first command" in result


def test_mcp_servers_still_get_the_launcher(tool: BuiltinExecuteTool) -> None:
    assert tool.sandbox is not None
    from agentica_cli.sandbox.sandbox import LANDLOCK_LAUNCHER

    assert LANDLOCK_LAUNCHER in tool.sandbox.wrap(["server"], tool.work_dir)
    assert tool.sandbox.prepare(["bash"], tool.work_dir).argv == ["bash"]


def test_a_background_process_starts_confined_from_the_spawn_thread(tool: BuiltinExecuteTool, tmp_path: Path) -> None:
    """Background processes take the same path (started from the registry's long-lived
    spawn thread, through a confined thread of their own) and stop like any other."""
    import time

    outside = tmp_path / "escaped.txt"
    started = run_call(tool, "execute", command=f"echo x > {outside}; echo inside > in.txt; echo ready; sleep 30",
                       background=True)
    process_id = started.split("background process ", 1)[1].split()[0]
    seen, deadline = started, time.monotonic() + 15
    while "ready" not in seen and time.monotonic() < deadline:
        seen += run_call(tool, "read_background_output", id=process_id)
    try:
        assert "ready" in seen and "Permission denied" in seen, seen
        assert not outside.exists() and (tool.work_dir / "in.txt").read_text() == "inside\n"
        pid = tool.background.get(process_id).pid
        assert _status("NoNewPrivs", str(pid)) == "1"  # bash itself, no launcher in between
    finally:
        assert "stopped" in run_call(tool, "stop_background", id=process_id)


def run_call(tool: BuiltinExecuteTool, name: str, **args: object) -> str:
    call = call_tool(tool, name, **args)
    assert call.error is None, call.error
    return call.result
