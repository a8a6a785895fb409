"""The bubblewrap (`bwrap`) command line for a sandbox policy.

The whole file system is bound read-only, the writable folders are bound back writable,
the hidden secrets are covered (a folder by an empty tmpfs, a file by /dev/null), and the
command gets its own /dev, /proc and PID namespace; `--unshare-net` leaves it only a
loopback of its own. It stays in the caller's process group (see bwrap_argv), so the agent's
group kills reach it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from agentica_cli.sandbox.policy import SandboxPolicy


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
        probe = subprocess.run(
            [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid",
             "--die-with-parent", "--new-session", "/bin/sh", "-c", "exit 0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def bwrap_argv(policy: SandboxPolicy, argv: list[str], *, cwd: Path, temp_dir: Path | None,
               die_with_parent: bool = False) -> list[str]:
    out = [bwrap_path() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if os.path.isdir("/dev/shm"):
        out += ["--tmpfs", "/dev/shm"]
    for folder in policy.writable(temp_dir):
        out += ["--bind", str(folder), str(folder)]
    # After the binds: a secret inside a writable folder is still covered.
    for path in policy.existing_hidden():
        if path.is_dir():
            out += ["--tmpfs", str(path), "--remount-ro", str(path)]
        else:
            out += ["--ro-bind", "/dev/null", str(path)]
    if not policy.network:
        out.append("--unshare-net")
    # No --new-session and no --die-with-parent: bwrap, its PID-namespace init and the command
    # stay in the caller's process group, so one killpg (timeout, /kill, the agent's death
    # through the group watcher) reaches all of them, and SIGKILL to the init ends everything
    # inside. --die-with-parent would tie the command to the *thread* that started it (the
    # kernel's parent-death signal follows the thread), killing background processes started
    # from a worker thread. The caller starts it in a session of its own (execute, background
    # processes and MCP servers all do): without a controlling terminal there is nothing for
    # TIOCSTI to type into, which is what --new-session would prevent.
    if die_with_parent:  # for a process started from a thread that lives as long as it should (MCP servers)
        out.append("--die-with-parent")
    out += ["--unshare-pid", "--chdir", str(cwd), "--", *argv]
    return out
