"""Everything a session started ends with it: agentica becomes a child subreaper, and at exit
it kills whatever is left below it.

A daemonised command (`setsid cmd >/dev/null &`) leaves the command's process group and
session, so the group kills (timeout, /kill, the group watcher) miss it, and once its parent
exits it would be adopted by init and outlive agentica. With PR_SET_CHILD_SUBREAPER it is
adopted by agentica instead (every orphan below agentica is, however often it forked or
called setsid), and `end_descendants` SIGKILLs every descendant still there, in rounds, since
a killed process's own children are adopted next. bubblewrap does not need it (its PID
namespace dies with the command: --die-with-parent) nor does Landlock run by root (a PID
namespace of its own, landlock_spawn.py); it covers Landlock run by a user and anything else
the session started. Not covered: agentica SIGKILLed (nothing runs at its exit; the orphans go
to init then): docs/security.md says so. Linux only; elsewhere nothing is done. Standard
library only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 5
_registered = False


def children_of(pid: int) -> list[int]:
    """The children of `pid` (all its threads'), from /proc/PID/task/*/children."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants_of(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children."""
    found: list[int] = []
    queue = children_of(pid)
    while queue:
        child = queue.pop(0)
        if child in found:
            continue
        found.append(child)
        queue += children_of(child)
    return found


def _exited(pid: int) -> bool:
    """`pid` has ended and waits to be reaped (a zombie), or is gone: /proc/PID/stat's state."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:][:1] in (b"Z", b"X")  # the name, in parentheses, may hold anything


def _reap(pids: set[int] | None = None) -> None:
    """Reap this process's children that have exited (all of them, or those in `pids`)."""
    for pid in children_of(os.getpid()):
        if (pids is None or pid in pids) and _exited(pid):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def end_descendants() -> int:
    """SIGKILL every process below this one (repeated while orphans are being adopted);
    reaps the direct children it killed. Returns how many it killed. Descendants that have
    exited already (an adopted orphan, the sandbox probe's process inside bubblewrap) are
    reaped, not killed: then a run that leaves nothing alive waits for nothing (it slept 20 ms
    at every `agentica -p` exit)."""
    me = os.getpid()
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        _reap()
        found = [p for p in descendants_of(me) if p not in killed and not _exited(p)]
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.02)  # let the kernel reparent the orphans of the killed ones
        _reap(killed)
    return len(killed)


def _prctl(option: int, value: int) -> bool:
    """prctl(option, value) == 0, through ctypes' C core (the ctypes package costs ~2 ms of start-up)."""
    try:
        import _ctypes

        # typeshed's dlopen omits None (NULL: this process, as dlopen(3) allows)
        prctl = _ctypes.dlsym(_ctypes.dlopen(None, os.RTLD_NOW), "prctl")  # type: ignore[arg-type]
        return _ctypes.call_function(prctl, (option, value, 0, 0, 0)) == 0
    except (ImportError, AttributeError, OSError):
        pass
    try:
        import ctypes

        return ctypes.CDLL(None).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def end_descendants_at_exit() -> bool:
    """Make this process a child subreaper and end its descendants when it exits (once per
    process; for the agentica application, not for a library user's process). False when the
    kernel refuses (not Linux)."""
    global _registered
    if not sys.platform.startswith("linux"):
        return False
    if _registered:
        return True
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
        return False
    _registered = True
    atexit.register(end_descendants)
    return True
