"""The bubblewrap (`bwrap`) command line for a sandbox policy.

The whole file system is bound read-only, the writable folders are bound back writable,
the protected entries inside them (.git, .agentica, ...: policy.PROTECTED_NAMES) are bound
read-only again, the hidden secrets are covered (a folder by an empty tmpfs, a file or a
socket by /dev/null), and the command gets its own /dev (a fresh devpts: the user's terminal
is not in it), /proc and PID namespace; `--unshare-net` leaves it only a loopback of its own.

It also gets a user namespace of its own and no capabilities (`--unshare-user --cap-drop
ALL`, and no further user namespaces where bwrap can refuse them): run by root, bwrap would
otherwise keep every capability, and root inside could `umount` a hidden folder or remount
`/` writable. Root stays uid 0 inside (files keep their owners) but is powerless.

It stays in the caller's process group (see bwrap_argv), so the agent's group kills reach it.

Unix sockets: a named socket in a visible place (docker.sock, one in the project folder) is
reachable by its path even on a read-only mount and from another network namespace, so unless
the policy allows Unix sockets bwrap starts with seccomp.py's filter refusing socket(AF_UNIX)
(installed on one long-lived thread that starts every bwrap: start_without_unix_sockets);
--unshare-net already keeps abstract sockets apart.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agentica_cli.procs import wait_for_exit
from agentica_cli.sandbox.policy import SandboxPolicy
from agentica_cli.sandbox.spawn_threads import PreparedThread

_T = TypeVar("_T")
PR_SET_NO_NEW_PRIVS = 38


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def bwrap_works() -> bool:
    """Whether bwrap is installed and can create its namespaces here (a container or a
    kernel without unprivileged user namespaces makes it fail at run time)."""
    path = bwrap_path()
    if path is None:
        return False
    try:
        probe = subprocess.Popen(
            [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid",
             "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "/bin/sh", "-c", "exit 0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    except OSError:
        return False
    try:
        return wait_for_exit(probe, 10) == 0  # its exit seen as it happens: -p waits for this answer
    except subprocess.TimeoutExpired:
        probe.kill()
        probe.wait()
        return False


@functools.lru_cache(maxsize=1)
def bwrap_refuses_user_namespaces() -> bool:
    """Whether this bwrap has --disable-userns (0.8.0 and later)."""
    path = bwrap_path()
    if path is None:
        return False
    try:
        text = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "--disable-userns" in text


def bwrap_argv(policy: SandboxPolicy, argv: list[str], *, cwd: Path, temp_dir: Path | None,
               die_with_parent: bool = False) -> list[str]:
    out = [bwrap_path() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if os.path.isdir("/dev/shm"):
        out += ["--tmpfs", "/dev/shm"]
    for folder in policy.writable(temp_dir):
        out += ["--bind", str(folder), str(folder)]
    for path in policy.protected():  # after the writable binds, which they are inside
        out += ["--ro-bind", str(path), str(path)]
    # After the binds: a secret inside a writable folder is still covered.
    for path in policy.existing_hidden():
        if path.is_dir():
            out += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            out += ["--ro-bind", "/dev/null", str(path)]
    if not policy.network:
        out.append("--unshare-net")
    out += ["--unshare-user", "--cap-drop", "ALL"]
    if bwrap_refuses_user_namespaces():
        out.append("--disable-userns")
    # No --new-session: bwrap, its PID-namespace init and the command stay in the caller's
    # process group, so one killpg (timeout, /kill, the agent's death through the group
    # watcher) reaches all of them. The caller starts it in a session of its own (execute,
    # background processes and MCP servers all do): without a controlling terminal there is
    # nothing for TIOCSTI to type into, which is what --new-session would prevent.
    # --die-with-parent: bwrap's init in the PID namespace otherwise waits for every process
    # left in it, so a daemonised `setsid cmd &` outlived the command and agentica; with it,
    # the init is SIGKILLed when the command's bwrap ends, and the namespace with it. The
    # parent-death signal follows the *thread* that started bwrap: every caller starts it from
    # a thread that lives as long as the command should (the event loop's thread for execute,
    # one long-lived thread for background processes, the MCP client's task for servers).
    del die_with_parent  # always on now; the argument stays for callers that still pass it
    out += ["--die-with-parent", "--unshare-pid", "--chdir", str(cwd), "--", *argv]
    return out


def _refuse_unix_sockets() -> None:
    """The setup of the thread that starts bwrap: no_new_privs and the filter, for bwrap and
    everything it starts. A setuid bwrap would not be setuid under no_new_privs, so it is
    refused here rather than started unconfined for sockets."""
    import ctypes  # here: the -p start's backend probe imports this module and needs no ctypes

    from agentica_cli.sandbox.seccomp import confine_sockets, supported

    path = bwrap_path()
    if path and os.stat(path).st_mode & 0o4000 and os.geteuid() != 0:
        raise OSError("a setuid bwrap cannot start under no_new_privs: set [sandbox] unix_sockets = true "
                      "or use the landlock backend")
    if not supported():
        raise OSError("no seccomp filter for this architecture: commands could reach Unix sockets; "
                      "set [sandbox] unix_sockets = true to run them anyway")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    confine_sockets(libc, inet=True, unix=False)  # inet: bwrap sets up its loopback; --unshare-net isolates


@functools.lru_cache(maxsize=1)
def _spawn_thread() -> PreparedThread:
    return PreparedThread("agentica-bwrap-spawn", _refuse_unix_sockets)


def start_without_unix_sockets(start: Callable[[], _T]) -> _T:
    """`start()` (subprocess.Popen of the bwrap argv) on the thread with the filter. The thread
    lives as long as this process, which --die-with-parent needs (it follows the thread)."""
    return _spawn_thread().run(start)
