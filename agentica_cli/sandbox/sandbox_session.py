"""The session's Landlock domain and its reaper (reaper.py says why and how).

`session_thread()` is the one thread of this process that starts Landlock-confined commands
(through a short-lived thread of its own per command: landlock_spawn.py). On its first job
it confines itself with a ruleset that only scopes signals (Landlock ABI >= 6; no file or
network rule, so it loses nothing it uses) and starts the reaper, which inherits that
domain. Below ABI 6 it confines nothing and starts no reaper: a user's agentica SIGKILLed
then leaves a daemonised command behind (docs/security.md).

Cost: the reaper is one `python -I -S` process per session, started with the first command
(~1 ms to start it; its own start-up runs beside the command); each command pays a hand-off
to this thread (~0.1 ms).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import threading
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
from agentica_cli.sandbox.spawn_threads import PreparedThread

REAPER = str(Path(__file__).with_name("reaper.py"))
SCOPE_ABI = 6


class _State:
    reaper: subprocess.Popen[bytes] | None = None
    pipe_write_end: int | None = None  # only this process holds it (close-on-exec)
    scoped = False


_state = _State()
_thread: PreparedThread | None = None
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


def _interpreters() -> list[str]:
    """Pythons that can run the reaper (standard library only), this one first. This one's path
    may not be executable by this user (a venv whose interpreter lives under a root-only home)."""
    found = [sys.executable, getattr(sys, "_base_executable", ""), shutil.which("python3") or "", "/usr/bin/python3"]
    return [path for path in dict.fromkeys(found) if path]


def _start_reaper() -> None:
    read_end, write_end = os.pipe()  # both close-on-exec; the reaper gets the read end by pass_fds
    try:
        for python in _interpreters():
            try:
                _state.reaper = subprocess.Popen(
                    [python, "-I", "-S", REAPER, str(read_end), str(os.getpid())],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    pass_fds=(read_end,), start_new_session=True, close_fds=True)
                break
            except OSError:
                continue
    finally:
        os.close(read_end)
    if _state.reaper is None:
        os.close(write_end)  # no reaper: commands still run (the gap docs/security.md names)
        return
    _state.pipe_write_end = write_end


def session_thread() -> PreparedThread:
    """The thread that starts every Landlock-confined command of this process."""
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = PreparedThread("agentica-landlock-session", _enter_session_domain)
        return _thread


def reaper_pid() -> int | None:
    """The reaper's pid once the first confined command started it (None: none, ABI < 6)."""
    return _state.reaper.pid if _state.reaper is not None else None
