"""The session's Landlock domain and its reaper (reaper.py says why and how).

The session thread is the one thread of this process that makes the threads which start
Landlock-confined commands (one short-lived thread per command, made ahead of time:
`standby_worker`; landlock_spawn.py). When it starts it confines itself with a ruleset that
only scopes signals (Landlock ABI >= 6; no file or network rule, so it loses nothing it uses)
and starts the reaper, which inherits that domain. Below ABI 6 it confines nothing and starts
no reaper: a user's agentica SIGKILLed then leaves a daemonised command behind (docs/security.md).

Cost: the reaper is one `python -I -S` process per session, started with the first command
(~1 ms to start it; its own start-up runs beside the command). A command pays nothing more:
its spawn thread is made ahead of time by the session thread instead of on demand.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from agentica_cli.sandbox.landlock import (
    PR_SET_NO_NEW_PRIVS,
    SCOPE_SIGNAL,
    SYS_CREATE_RULESET,
    LandlockError,
    RulesetAttr,
    _libc,
    abi_version,
    enforce_ruleset,
)

REAPER = str(Path(__file__).with_name("reaper.py"))
SCOPE_ABI = 6


class _State:
    reaper: subprocess.Popen[bytes] | None = None
    pipe_write_end: int | None = None  # only this process holds it (close-on-exec)
    scoped = False


_state = _State()
_thread: threading.Thread | None = None
_thread_lock = threading.Lock()


def _scope_ruleset(libc: ctypes.CDLL) -> int:
    attr = RulesetAttr(0, 0, SCOPE_SIGNAL)
    fd = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                      ctypes.c_uint32(0))
    if fd < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset (signal scope) failed")
    return fd


def _enter_session_domain() -> None:
    """The session thread's setup: the signal-scoped domain, then the reaper inside it."""
    if not sys.platform.startswith("linux") or abi_version() < SCOPE_ABI:
        return
    libc = _libc()
    fd = _scope_ruleset(libc)
    try:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        enforce_ruleset(fd, libc)
    finally:
        os.close(fd)
    _state.scoped = True
    _start_reaper()


def interpreters() -> list[str]:
    """Pythons that can run a standard-library-only helper (the reaper, the launchers), the
    runnable ones first, this one first among them. This one's path may not be executable by
    this user (a venv whose interpreter lives under a root-only home)."""
    found = [sys.executable, getattr(sys, "_base_executable", ""), shutil.which("python3") or "", "/usr/bin/python3"]
    paths = [path for path in dict.fromkeys(found) if path]
    return sorted(paths, key=lambda path: not os.access(path, os.X_OK))


def runnable_python() -> str:
    return interpreters()[0]


def _start_reaper() -> None:
    read_end, write_end = os.pipe()  # both close-on-exec; the reaper gets the read end by pass_fds
    try:
        for python in interpreters():
            try:
                _state.reaper = subprocess.Popen(
                    [python, "-I", "-S", REAPER, str(read_end), str(os.getpid())],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    pass_fds=(read_end,), start_new_session=True, close_fds=True,
                    env={"PATH": os.defpath})  # it needs nothing of agentica's environment
                break
            except OSError:
                continue
    finally:
        os.close(read_end)
    if _state.reaper is None:
        os.close(write_end)  # no reaper: commands still run (the gap docs/security.md names)
        return
    _state.pipe_write_end = write_end


class Worker:
    """A thread made by the session thread (so in the session's domain), waiting for one job."""

    def __init__(self) -> None:
        self.job: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.done = threading.Event()
        self.tid: int | None = None

    def _serve(self) -> None:
        self.tid = threading.get_native_id()
        try:
            self.job.get()()
        finally:
            self.done.set()

    def run(self, job: Callable[[], None]) -> None:
        """`job()` on this thread, which ends after it (one job per worker)."""
        self.job.put(job)
        self.done.wait()


_ready: queue.SimpleQueue[Worker | BaseException] = queue.SimpleQueue()
_taken: queue.SimpleQueue[None] = queue.SimpleQueue()


def _make_workers() -> None:
    """The session thread's job, for the life of the process: always one worker waiting, made
    ahead of time so a command's start does not wait for a thread to be created (or a hop
    through this thread)."""
    while True:
        worker = Worker()
        threading.Thread(target=worker._serve, daemon=True, name="agentica-landlock-spawn").start()
        _ready.put(worker)
        _taken.get()


def _serve_session() -> None:
    try:
        _enter_session_domain()
    except BaseException as exc:  # fail closed: every spawn raises it
        while True:
            _ready.put(exc)
            _taken.get()
    _make_workers()


def standby_worker() -> Worker:
    """A fresh thread in the session's domain (the session thread and its reaper start with
    the first call) for one spawn; LandlockError if the session's domain could not be made."""
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = threading.Thread(target=_serve_session, daemon=True, name="agentica-landlock-session")
            _thread.start()
    found = _ready.get()
    _taken.put(None)
    if isinstance(found, BaseException):
        raise found
    return found


def _forget_in_child() -> None:
    """A forked child has none of these threads (only the forking one) nor its own reaper: it
    makes its own when it first starts a confined command."""
    global _thread, _ready, _taken, _state
    if _state.pipe_write_end is not None:  # the parent's: its reaper waits for the parent alone
        with contextlib.suppress(OSError):
            os.close(_state.pipe_write_end)
    _thread, _ready, _taken, _state = None, queue.SimpleQueue(), queue.SimpleQueue(), _State()


os.register_at_fork(after_in_child=_forget_in_child)


def session_thread_id() -> int | None:
    """The session thread's kernel id once it runs (its /proc/self/task entry)."""
    return _thread.native_id if _thread is not None else None


def reaper_pid() -> int | None:
    """The reaper's pid once the first confined command started it (None: none, ABI < 6)."""
    return _state.reaper.pid if _state.reaper is not None else None
