"""Running a shell command in its own process group, and killing all of it.

Killing the group reaches every child and grandchild that stayed in it. A process that
left the group (setsid, daemonising) but still holds our output pipes would keep the
call waiting for end-of-file forever, so on Linux those are found through /proc by the
pipes' inode numbers and killed too.

The group must also die when the agent dies, however it dies (SIGKILL, OOM, a crash): a
small watcher process (`/bin/sh`, in a session of its own so a signal to the agent's group
does not reach it) waits on a pipe whose write end only the agent holds. It starts BEFORE
the command, so from the moment the command exists a watcher holds it: the agent then tells
it the command's pgid (first line) and, when the command ends, that it ended (second line),
and the watcher exits quietly. When the agent dies, the kernel closes the write end and the
watcher reads end-of-file: after the pgid it kills the command's group; before it (the agent
died while starting the command) it kills, found through /proc on Linux, whatever has the
command's output pipes open for writing (their inode numbers are in its argv) and those
processes' groups. The command's own process tree, $$, process group and exit status are as
they were without it.
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

from agentica_cli.tools.local.output_capture import OutputCapture

PIPE_GRACE_S = 1.0  # how long to wait for output pipes to close after the shell exited


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# The watcher's stdin carries two lines from the agent: the command's pgid (empty: no command
# started, nothing to watch), then "ended". `read` fails at end-of-file, i.e. the agent died.
# After the pgid the watcher moves into /proc/PGID, so its cwd shows which group it holds.
# Before the pgid it looks for the writers to the output pipes ($@: their inode numbers) in
# `ls -l /proc/*/fd` ("/proc/PID/fd:" headers, "l-wx... -> pipe:[INODE]" entries: an fd open
# for writing; the agent's read ends never match) and kills each one's group (if it leads
# one) and the process itself.
_WATCHER_SCRIPT = r"""
if read g; then
  case $g in ''|*[!0-9]*) exit 0;; esac
  cd "/proc/$g" 2>/dev/null || cd /
  read _ || kill -s KILL -- "-$g"
  exit 0
fi
[ $# -gt 0 ] || exit 0
ls -l /proc/[0-9]*/fd 2>/dev/null | while IFS= read -r l; do
  case $l in
    /proc/*/fd:) p=${l#/proc/}; p=${p%/fd:} ;;
    l?w*" -> pipe:["*"]") i=${l##*"pipe:["}; i=${i%"]"}
      for w; do [ "$i" = "$w" ] && kill -s KILL -- "-$p" "$p"; done 2>/dev/null ;;
  esac
done
exit 0  # not the last kill's status: it fails for a process its group's kill already took
"""
WATCHER_SHELL = "/bin/sh"
WATCHER_NAME = "agentica-group-watch"  # its $0: how `ps` (and the tests) tell a watcher


def _watcher_argv(pipe_inodes: Iterable[int]) -> list[str]:
    return [WATCHER_SHELL, "-c", _WATCHER_SCRIPT, WATCHER_NAME, *(str(inode) for inode in pipe_inodes)]


_WATCHER_OPTIONS: dict[str, Any] = {
    "stdin": subprocess.PIPE, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
    "start_new_session": True, "bufsize": 0,  # unbuffered: each line reaches the watcher when written
}


def start_watcher(pipe_inodes: Iterable[int]) -> subprocess.Popen[bytes] | None:
    """Start a watcher for a command that is about to start with these output pipes (their
    inode numbers); None if it cannot start (no /bin/sh, no processes left): the command still
    runs. Tell it the command's group with watch_group, the command's end with unwatch_group*."""
    try:
        return subprocess.Popen(_watcher_argv(pipe_inodes), **_WATCHER_OPTIONS)
    except OSError:
        return None


def watch_group(watcher: subprocess.Popen[bytes], pgid: int) -> None:
    """Tell the watcher the group to kill if this process dies before unwatch_group*."""
    assert watcher.stdin is not None
    with contextlib.suppress(OSError):  # it is gone (killed by someone): nothing to tell
        watcher.stdin.write(b"%d\n" % pgid)


def start_watched(start_command: Callable[[], subprocess.Popen[bytes]], pipe_inodes: Iterable[int],
                  ) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes] | None]:
    """(command, watcher or None): the watcher first, then `start_command()`, then the
    command's pgid (its pid: it starts a session) to the watcher, with no await in between.
    The watcher already exists when the command does; if this process dies before the pgid is
    written, the watcher finds the command by its output pipes (see _WATCHER_SCRIPT)."""
    watcher = start_watcher(pipe_inodes)
    try:
        command = start_command()
    except BaseException:
        if watcher is not None:
            unwatch_group_blocking(watcher)  # no command: it exits at once, killing nothing
        raise
    if watcher is not None:
        watch_group(watcher, command.pid)
    return command, watcher


def unwatch_group_blocking(watcher: subprocess.Popen[bytes]) -> None:
    """Tell the watcher the command is over (or never started): it exits without killing
    anything; reap it. From any thread, for a command that outlives its event loop."""
    with contextlib.suppress(OSError, ValueError):  # already gone, or already told
        watcher.communicate(b"\n")


async def unwatch_group(watcher: subprocess.Popen[bytes]) -> None:
    """unwatch_group_blocking for the event loop: the watcher is awaited, not waited for."""
    assert watcher.stdin is not None
    with contextlib.suppress(OSError, ValueError):  # already gone, or already told
        watcher.stdin.write(b"\n")
    with contextlib.suppress(OSError):
        watcher.stdin.close()
    await _StartedProcess(watcher).wait()


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
    """A subprocess.Popen (started by run_in_group or a `start` hook, not by asyncio, so that
    nothing is awaited between the start and the watcher's pgid), awaited without a thread: a
    pidfd becomes readable when the process ends."""

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

        def on_exit() -> None:
            if not ended.done():
                ended.set_result(None)

        loop.add_reader(pidfd, on_exit)
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
    try:
        argv, options = launch_options(argv, cwd=cwd, env=env)

        def popen() -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, stdout=out_w, stderr=err_w, **options)

        command, watcher = start_watched(popen if start is None else lambda: start(popen), inodes)
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    proc = _StartedProcess(command)

    outcome = CommandOutcome(None, OutputCapture(), OutputCapture())
    out_closed: asyncio.Future[None] = loop.create_future()
    err_closed: asyncio.Future[None] = loop.create_future()
    transports: list[asyncio.ReadTransport] = []
    pipes = [os.fdopen(out_r, "rb", buffering=0), os.fdopen(err_r, "rb", buffering=0)]
    try:
        # Everything after the start is inside this try: a cancellation at any await (also
        # while the pipes are being connected) must still kill the group.
        for stream, (pipe, capture, closed) in enumerate(
            ((pipes[0], outcome.stdout, out_closed), (pipes[1], outcome.stderr, err_closed))
        ):
            on_data = None if on_output is None else functools.partial(on_output, stream)
            transport, _ = await loop.connect_read_pipe(
                functools.partial(_CaptureProtocol, capture, closed, on_data), pipe)
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
        await asyncio.shield(proc.wait())  # reaped here: nobody else waits for it
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
