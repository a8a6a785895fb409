"""Whether a process is still running, for any layer (sessions' lock holders, MCP servers),
and waiting for a child's exit without polling: no UI, no imports beyond the standard library."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Waitable(Protocol):
        """What wait_for_exit needs of a child: a subprocess.Popen, or a ForkedChild."""

        pid: int
        args: Any

        def wait(self, timeout: float | None = None) -> int: ...


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a process we may not signal counts as
    running: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"
    except (OSError, ValueError, IndexError):  # no /proc (macOS): kill() said it exists
        return True


def wait_for_exit(proc: Waitable, timeout: float) -> int:
    """`proc`'s exit code, waiting at most `timeout` seconds (subprocess.TimeoutExpired past it,
    the process left running). Popen.wait(timeout) polls, sleeping 0.5 ms, then 1, 2, 4 ... up
    to 50 ms between looks, so it notices an exit up to twice as late as it happens (the 5 ms
    bubblewrap probe took 8 ms). On Linux a pidfd wakes the waiter at the exit itself; elsewhere
    (or where the pidfd cannot be had) this is Popen.wait."""
    pidfd_open = getattr(os, "pidfd_open", None)
    fd = None
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:  # reaped already, or no pidfd here: Popen.wait knows
            pass
    if fd is not None:
        try:
            ended, _, _ = select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
        if not ended:
            raise subprocess.TimeoutExpired(proc.args, timeout)
    return proc.wait(timeout)  # after the pidfd said it ended: reaps it at once


class ForkedChild:
    """A child made by os.fork() (no exec), seen as a subprocess.Popen is: pid, poll(), wait(),
    kill(), returncode; wait_for_exit() takes it."""

    def __init__(self, pid: int, name: str) -> None:
        self.pid = pid
        self.args = [name]
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            while self.returncode is None:
                self._reap(0)
            return self.returncode
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:  # only where no pidfd said it ended (wait_for_exit)
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped by someone else: its code is lost
            self.returncode = 255
            return
        except InterruptedError:
            return
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)
