"""Running a shell command in its own process group, and killing all of it.

Killing the group reaches every child and grandchild that stayed in it. A process that
left the group (setsid, daemonising) but still holds our output pipes would keep the
call waiting for end-of-file forever, so on Linux those are found through /proc by the
pipes' inode numbers and killed too.

The group must also die when the agent dies, however it dies (SIGKILL, OOM, a crash): a
small watcher process (`/bin/sh`, in a session of its own so a signal to the agent's group
does not reach it) waits on a pipe whose write end only the agent holds. When the command
ends, the agent writes a line and the watcher exits quietly; when the agent dies, the kernel
closes the write end, the watcher reads end-of-file and kills the command's group. The
command's own process tree, $$, process group and exit status are as they were without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from builtin_tools.output_capture import OutputCapture

PIPE_GRACE_S = 1.0  # how long to wait for output pipes to close after the shell exited


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# `read` succeeds on the agent's "command ended" line and fails at end-of-file (agent gone).
_WATCHER_SCRIPT = 'read _ || kill -s KILL -- "-$1"'
WATCHER_SHELL = "/bin/sh"


async def watch_group(pgid: int) -> asyncio.subprocess.Process | None:
    """Start the watcher that kills group `pgid` if this process dies before unwatch_group;
    None if it cannot start (no /bin/sh, no processes left): the command still runs."""
    try:
        return await asyncio.create_subprocess_exec(*_watcher_argv(pgid), **_WATCHER_OPTIONS)
    except OSError:
        return None


def _watcher_argv(pgid: int) -> list[str]:
    return [WATCHER_SHELL, "-c", _WATCHER_SCRIPT, "agentica-group-watch", str(pgid)]


_WATCHER_OPTIONS: dict[str, Any] = {
    "stdin": subprocess.PIPE, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True,
}


def watch_group_blocking(pgid: int) -> subprocess.Popen[bytes] | None:
    """watch_group for a command that outlives the call and its event loop (a background
    process), from any thread; unwatch_group_blocking tells it the command is over."""
    try:
        return subprocess.Popen(_watcher_argv(pgid), **_WATCHER_OPTIONS)
    except OSError:
        return None


def unwatch_group_blocking(watcher: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):  # already gone, or already told
        watcher.communicate(b"\n")


async def unwatch_group(watcher: asyncio.subprocess.Process) -> None:
    """Tell the watcher the command is over (it exits without killing anything) and reap it."""
    with contextlib.suppress(OSError):  # it is already gone (killed by someone): nothing to tell
        await watcher.communicate(b"\n")


def pipe_holders(inodes: Iterable[int]) -> set[int]:
    """PIDs of processes (other than us) with one of these pipes open; empty off Linux."""
    wanted = {f"pipe:[{inode}]" for inode in inodes}
    me = os.getpid()
    found: set[int] = set()
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me:
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            for fd in os.listdir(fd_dir):
                if os.readlink(f"{fd_dir}/{fd}") in wanted:
                    found.add(pid)
                    break
        except OSError:
            continue
    return found


def kill_pipe_holders(inodes: Iterable[int]) -> int:
    holders = pipe_holders(inodes)
    for pid in holders:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(holders)


class _CaptureProtocol(asyncio.Protocol):
    def __init__(self, capture: OutputCapture, closed: asyncio.Future[None],
                 on_data: Callable[[bytes], None] | None = None):
        self.capture = capture
        self.closed = closed
        self.on_data = on_data

    def data_received(self, data: bytes) -> None:
        self.capture.feed(data)
        if self.on_data is not None:
            self.on_data(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


@dataclass
class CommandOutcome:
    returncode: int | None
    stdout: OutputCapture
    stderr: OutputCapture
    timed_out: bool = False
    pipes_left_open: bool = False  # background processes still held the output at the end


def launch_options(argv: list[str], *, cwd: str, env: dict[str, str]) -> tuple[list[str], dict[str, Any]]:
    """The argv and Popen keyword arguments (besides stdout/stderr) that every command the
    agent runs starts with, in the foreground (run_in_group) or in the background
    (background.py): stdin from /dev/null, a session and so a process group of its own.
    The one place where a command's launch is decided, so a wrapper (a sandbox) wraps them all."""
    return list(argv), {"cwd": cwd, "env": env, "stdin": subprocess.DEVNULL, "start_new_session": True}


Starter = Callable[[Callable[[], "subprocess.Popen[bytes]"]], "subprocess.Popen[bytes]"]


class _StartedProcess:
    """A subprocess.Popen started by a `start` hook (not by asyncio), awaited without a
    thread: a pidfd becomes readable when the process ends."""

    def __init__(self, popen: subprocess.Popen[bytes]):
        self.popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    async def wait(self) -> int:
        if self.popen.poll() is not None:
            return self.popen.returncode
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfds (old kernel): a thread waits instead
            return await asyncio.to_thread(self.popen.wait)
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()
        loop.add_reader(pidfd, lambda: ended.done() or ended.set_result(None))
        try:
            await ended
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return self.popen.wait()


async def run_in_group(argv: list[str], *, cwd: str, env: dict[str, str], timeout: float,
                       on_output: Callable[[int, bytes], None] | None = None,
                       start: Starter | None = None) -> CommandOutcome:
    """Run `argv` with stdin from /dev/null in a new session; kill the whole group on
    timeout or cancellation. Output is captured in bounded memory; `on_output(stream, data)`
    (0 stdout, 1 stderr) also sees each chunk as it arrives, for a live view. `start` (a
    sandbox's, e.g. Landlock's confined thread) is handed the function that starts the process."""
    loop = asyncio.get_running_loop()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    inodes = (os.fstat(out_r).st_ino, os.fstat(err_r).st_ino)
    proc: Any
    try:
        argv, options = launch_options(argv, cwd=cwd, env=env)
        if start is None:
            proc = await asyncio.create_subprocess_exec(*argv, stdout=out_w, stderr=err_w, **options)
        else:
            proc = _StartedProcess(start(lambda: subprocess.Popen(argv, stdout=out_w, stderr=err_w, **options)))
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)

    outcome = CommandOutcome(None, OutputCapture(), OutputCapture())
    out_closed: asyncio.Future[None] = loop.create_future()
    err_closed: asyncio.Future[None] = loop.create_future()
    transports: list[asyncio.BaseTransport] = []
    pipes = [os.fdopen(out_r, "rb", buffering=0), os.fdopen(err_r, "rb", buffering=0)]
    watcher: asyncio.subprocess.Process | None = None
    try:
        # Everything after the start is inside this try: a cancellation at any await (also
        # while the pipes are being connected) must still kill the group.
        watcher = await watch_group(proc.pid)
        for stream, (pipe, capture, closed) in enumerate(
            ((pipes[0], outcome.stdout, out_closed), (pipes[1], outcome.stderr, err_closed))
        ):
            on_data = None if on_output is None else functools.partial(on_output, stream)
            transport, _ = await loop.connect_read_pipe(
                lambda capture=capture, closed=closed, on_data=on_data: _CaptureProtocol(capture, closed, on_data),
                pipe,
            )
            transports.append(transport)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except asyncio.TimeoutError:
            outcome.timed_out = True
            kill_group(proc.pid)
            await proc.wait()
            if not (out_closed.done() and err_closed.done()):
                await asyncio.sleep(0.05)  # let the kernel close the killed group's pipe ends
                kill_pipe_holders(inodes)
        _, pending = await asyncio.wait([out_closed, err_closed], timeout=PIPE_GRACE_S)
        outcome.pipes_left_open = bool(pending)
        outcome.returncode = proc.returncode
    except BaseException:
        kill_group(proc.pid)
        kill_pipe_holders(inodes)
        raise
    finally:
        for transport in transports:
            transport.close()
        for pipe in pipes[len(transports):]:
            pipe.close()
        if watcher is not None:
            # shielded: a second cancellation must not leave the watcher unreaped
            await asyncio.shield(unwatch_group(watcher))
    return outcome
