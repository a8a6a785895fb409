"""Starting a command under Landlock without a launcher process (the execute tool's fast path).

Linux keeps credentials, and with them the Landlock domain, no_new_privs and the capability
sets, per *thread*, and a child gets the credentials of the thread that forked it. So a new
thread confines itself (no_new_privs + landlock_restrict_self with a ruleset built once per
policy), starts the command from there with subprocess.Popen (vfork + exec: no Python runs
in the child, nothing of the agent's memory is copied) and exits; the agent's other threads
never were confined. Added cost: a thread start and two syscalls, ~0.2 ms, whatever the
agent's size (a `preexec_fn` forks the whole address space: +3 ms at 100 MB, and may
deadlock in a threaded program).

The one thing this thread shares with the command is its Landlock domain, and Landlock lets
a process inspect (ptrace) others of its own domain. Three fences keep the command away
from the agent's memory and files through that thread: it lives only until the command has
exec'd; before confining itself it drops every capability (effective, permitted, inheritable,
ambient and bounding sets, so the command cannot get one back; only root has them to drop:
a root command is uid 0 without CAP_SYS_PTRACE, CAP_MKNOD, CAP_SYS_MODULE ...); and while
it lives the process is non-dumpable (the agentica CLI always is; a library process is
switched for the moment of the spawn and back once the thread is gone), so a process of the
same user without CAP_SYS_PTRACE can neither ptrace it, nor read /proc/<pid>/task/<tid>/mem,
nor take its file descriptors. What is left is a signal to that thread in the instant
between the command's exec and the thread's end (the same domain may signal): at worst it
ends the agent, it gains nothing.

A ruleset names the paths it allows by open file descriptor, so a path that appears later is
not in it: the read rules list the entries of the folders on the way to each hidden secret
($HOME, /, ...). The cached ruleset carries a fingerprint (inode and mtime of those folders,
of the folders a not-yet-existing secret would appear in, and of the writable folders) and
is rebuilt when it changes: a new file in $HOME is readable, a new ~/.aws is hidden, from the
next command on, as with a launcher that builds the rules for every command.

The thread also installs the seccomp filter (seccomp.py: no socket but AF_UNIX without the
network, no AF_UNIX socket unless the policy allows Unix sockets, no io_uring) before it starts
the command. Run by root, it first moves its future children into a new PID namespace
(unshare(CLONE_NEWPID), which root may do from one thread): the command is that namespace's
init, and when it ends the kernel kills everything left in it, a daemonised `setsid cmd &`
too. A user cannot (a new PID namespace needs a user namespace, which a threaded process
cannot enter). For both, every such thread is created by the session thread
(sandbox_session.py), whose signal-scoped Landlock domain the command's domain is nested in:
the session's reaper (reaper.py) ends everything in it when agentica dies, SIGKILL included;
descendants.py ends what is left at a normal exit.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from agentica_cli.sandbox.landlock import LandlockError, build_ruleset, drop_capabilities, enforce_ruleset

_T = TypeVar("_T")

PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
CLONE_NEWPID = 0x20000000
_THREAD_GONE_WAIT_S = 1.0


_libc: ctypes.CDLL | None = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


class PreparedRuleset:
    """A ruleset fd and the fingerprint of the file system it was built from. The fd is
    closed when the object is gone, so a spawn holding it never sees a reused number."""

    def __init__(self, fd: int, fingerprint: tuple[Any, ...], network: bool = False, unix_sockets: bool = False):
        self.fd = fd
        self.fingerprint = fingerprint
        self.network = network  # what the seccomp filter lets through (seccomp.confine_sockets)
        self.unix_sockets = unix_sockets
        weakref.finalize(self, os.close, fd)


def fingerprint(paths: Iterable[str]) -> tuple[Any, ...]:
    """(path, inode, mtime) of each path, None for a missing one: an entry added to or
    removed from a folder changes its mtime, a folder replaced changes its inode."""
    found: list[tuple[str, int, int] | tuple[str, None]] = []
    for path in sorted(set(paths)):
        try:
            st = os.stat(path)
        except OSError:
            found.append((path, None))
            continue
        found.append((path, st.st_ino, st.st_mtime_ns))
    return tuple(found)


def watched_folders(hidden: Iterable[str], writable: Iterable[str]) -> list[str]:
    """The folders whose change may change the rules: every ancestor of a hidden path (those
    whose entries the read rules list, and where a missing secret would appear) and the
    writable folders themselves."""
    folders: set[str] = set(writable)
    for path in hidden:
        parent = os.path.dirname(os.path.normpath(path))
        while True:
            folders.add(parent)
            if parent == os.path.dirname(parent):
                break
            parent = os.path.dirname(parent)
    return sorted(folders)


class RulesetCache:
    """One prepared ruleset per key (the writable folders and the network switch), rebuilt
    when the fingerprint of its watched folders changes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: dict[Any, PreparedRuleset] = {}

    def get(self, key: Any, spec: Callable[[], dict], watch: list[str]) -> PreparedRuleset:
        # Taken before the rules are read: a change during the build makes the next call rebuild.
        current = fingerprint(watch)
        with self.lock:
            found = self.entries.get(key)
            if found is not None and found.fingerprint == current:
                return found
            rules = spec()
            fd, _abi = build_ruleset(rules)
            found = PreparedRuleset(fd, current, bool(rules.get("network")), bool(rules.get("unix_sockets")))
            self.entries[key] = found
            return found


def _own_pid_namespace(libc: ctypes.CDLL) -> bool:
    """Root only: this thread's next child starts a new PID namespace (see the module's notes)."""
    if os.geteuid() != 0:
        return False
    return libc.unshare(CLONE_NEWPID) == 0


@contextlib.contextmanager
def _not_dumpable(libc: ctypes.CDLL) -> Iterator[bool]:
    """The process non-dumpable inside the block; yields whether it was switched (and is
    switched back at the end)."""
    switched = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0
    if switched and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
    try:
        yield switched
    finally:
        if switched:
            libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


_SPAWN_LOCK = threading.Lock()  # one confined thread at a time: the dumpable switch is process-wide


def spawn_confined(ruleset: PreparedRuleset, start: Callable[[], _T]) -> _T:
    """`start()` (which starts a process: subprocess.Popen) called on a new thread that
    confined itself with `ruleset` first; its result, or its exception. The thread is made by
    the session thread (sandbox_session.py), so the command is in the session's domain."""
    from agentica_cli.sandbox.sandbox_session import standby_worker

    libc = _c()
    outcome: dict[str, Any] = {}

    def confine_and_start() -> None:
        try:
            _own_pid_namespace(libc)
            drop_capabilities(libc)
            enforce_ruleset(ruleset.fd, libc)
            from agentica_cli.sandbox.seccomp import confine_sockets

            confine_sockets(libc, inet=ruleset.network, unix=ruleset.unix_sockets)
            outcome["value"] = start()
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome["error"] = exc

    with _SPAWN_LOCK, _not_dumpable(libc) as switched:
        worker = standby_worker()
        worker.run(confine_and_start)
        if switched:  # the thread's job is done before the kernel task is gone: wait for that too
            _wait_thread_gone(worker.tid)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _wait_thread_gone(tid: int | None) -> None:
    if tid is None:
        return
    path = f"/proc/self/task/{tid}"
    deadline = time.monotonic() + _THREAD_GONE_WAIT_S
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.0002)
