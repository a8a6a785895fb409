"""`Sandbox`: a policy plus the backend that enforces it, chosen at run time.

Backends, best first: bubblewrap (mount namespaces: hides secrets completely, own network
namespace), Landlock (the kernel's allow-list: see landlock.py for what it covers), macOS
Seatbelt; else none, and commands run unconfined (the UI warns).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agentica_cli.sandbox.policy import AGENT_VARIABLES, PROTECTED_NAMES, SandboxPolicy

_T = TypeVar("_T")

BACKENDS = ("bubblewrap", "landlock", "seatbelt")
LANDLOCK_LAUNCHER = str(Path(__file__).with_name("landlock.py"))
SECCOMP_LAUNCHER = str(Path(__file__).with_name("seccomp.py"))

# What a command prints when the sandbox stopped it (EROFS, EACCES, a network without routes).
_DENIED_WRITE = re.compile(r"Read-only file system|Permission denied|Operation not permitted", re.I)
_DENIED_NETWORK = re.compile(
    r"Network is unreachable|Connection refused|Temporary failure in name resolution|Could not resolve|"
    r"Name or service not known|nodename nor servname|No address associated|ConnectionRefusedError",
    re.I,
)


@dataclass(frozen=True)
class Launch:
    """How one command starts in the sandbox: the argv to run, and `start`, which calls the
    function that starts the process (subprocess.Popen with that argv) the way the backend
    needs: directly for a wrapper command (bwrap), on a confined thread for Landlock."""

    argv: list[str]
    spawn: Callable[[Callable[[], Any]], Any] | None = None

    def start(self, popen: Callable[[], _T]) -> _T:
        return popen() if self.spawn is None else self.spawn(popen)


def backend_available(name: str) -> bool:
    _wait_for_probe()
    return _available(name)


def _available(name: str) -> bool:
    if name == "bubblewrap":
        from agentica_cli.sandbox.bwrap import bwrap_works

        return sys.platform.startswith("linux") and bwrap_works()
    if name == "landlock":
        from agentica_cli.sandbox.landlock import abi_version

        return abi_version() >= 1
    if name == "seatbelt":
        from agentica_cli.sandbox.seatbelt import seatbelt_available

        return seatbelt_available()
    return False


def best_backend() -> str | None:
    """The strongest backend this machine has, or None."""
    _wait_for_probe()
    return next((name for name in BACKENDS if _available(name)), None)


_probe: threading.Thread | None = None


def probe_backends() -> None:
    """Start bubblewrap's check on a thread, once a process: it starts a sandboxed process (~10
    ms idle, 50-100 ms on a busy machine), which can run while a headless session reads its
    settings. Nothing is kept beyond this process; `best_backend()` and `backend_available()`
    wait for the thread's answer (bwrap_works caches it) instead of probing a second time beside
    it. The other backends' checks are quick and are left to the thread that asks: Landlock's
    imports ctypes, and a thread importing beside the main thread's imports can meet it in a
    circular import (on a machine without a working bubblewrap, where Landlock is asked next)."""
    global _probe
    if _probe is None:
        import agentica_cli.sandbox.bwrap  # noqa: F401  (imported here, not by the thread)

        _probe = threading.Thread(target=probe_bubblewrap, name="agentica-sandbox-probe", daemon=True)
        _probe.start()


def probe_bubblewrap() -> None:
    """bubblewrap's check (a sandboxed process; bwrap_works caches its answer), on Linux: the
    only backend check that waits rather than computes. Imports nothing that is not loaded
    already when sandbox.bwrap is (for a thread beside imports)."""
    if "bubblewrap" not in BACKENDS or not sys.platform.startswith("linux"):
        return
    try:
        from agentica_cli.sandbox.bwrap import bwrap_works

        bwrap_works()
    except Exception:
        pass  # asked again, and reported, where the sandbox is built


def _wait_for_probe() -> None:
    probe = _probe
    if probe is not None and probe is not threading.current_thread():
        probe.join()


class Sandbox:
    """Wraps a command line so it runs confined by `policy`. `backend`: one of BACKENDS,
    "auto" (the best available) or None (same as auto). A requested backend the machine
    lacks is a ValueError naming it."""

    def __init__(self, policy: SandboxPolicy, backend: str | None = "auto"):
        self.policy = policy
        if not policy.active:
            self.backend: str | None = None
        elif backend in (None, "auto"):
            self.backend = best_backend()
        elif backend not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {backend!r} (known: auto, {', '.join(BACKENDS)})")
        elif not backend_available(backend):
            raise ValueError(f"sandbox backend {backend!r} is not available on this machine")
        else:
            self.backend = backend
        self._temp: Path | None = None
        self._rulesets: Any = None  # landlock_spawn.RulesetCache, made on first use

    @property
    def confines(self) -> bool:
        """Whether commands actually run confined (a mode is on and a backend exists)."""
        return self.policy.active and self.backend is not None

    @property
    def network_confined(self) -> bool:
        if not self.confines or self.policy.network:
            return False
        if self.backend == "landlock":  # TCP by Landlock, every other socket by the seccomp filter
            from agentica_cli.sandbox.landlock import abi_version
            from agentica_cli.sandbox.seccomp import supported

            return abi_version() >= 4 and supported()
        return True

    @property
    def unix_sockets_confined(self) -> bool:
        """Whether commands are kept from creating Unix sockets (seccomp.py on both backends)."""
        if not self.confines or self.policy.unix_sockets or self.backend not in ("bubblewrap", "landlock"):
            return False
        from agentica_cli.sandbox.seccomp import supported

        return supported()

    def describe(self) -> str:
        """For the banner and /status: `workspace-write (bubblewrap)`, `off`, or the warning."""
        if not self.policy.active:
            return "off"
        if self.backend is None:
            return "none available — commands run unconfined"
        extra = ["network on"] if self.policy.network else ([] if self.network_confined else ["network not confined"])
        if self.policy.unix_sockets:
            extra.append("unix sockets on")
        elif self.backend != "seatbelt" and not self.unix_sockets_confined:
            extra.append("unix sockets not confined")
        return f"{self.policy.mode} ({self.backend}{''.join(', ' + e for e in extra)})"

    def temp_dir(self) -> Path:
        """This sandbox's private, writable temp folder (TMPDIR for its commands), removed at exit."""
        if self._temp is None:
            path = tempfile.mkdtemp(prefix="agentica-sandbox-")
            self._temp = Path(os.path.realpath(path))
            weakref.finalize(self, shutil.rmtree, path, True)
        return self._temp

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """`env` for a confined command: the private TMPDIR, and no variable that leads to a
        key agent (SSH_AUTH_SOCK, GPG_AGENT_INFO, ...: their sockets are hidden as well)."""
        if not self.confines:
            return env
        temp = str(self.temp_dir())
        kept = {name: value for name, value in env.items() if name not in AGENT_VARIABLES}
        return {**kept, "TMPDIR": temp, "TMP": temp, "TEMP": temp}

    def _policy_for(self, network: bool) -> SandboxPolicy:
        """The policy for one command: `network` (an approved per-command request) adds the network."""
        return dataclasses.replace(self.policy, network=True) if network and not self.policy.network else self.policy

    def _landlock_spec(self, policy: SandboxPolicy) -> dict:
        return {"write": [str(p) for p in policy.writable(self.temp_dir())],
                "hidden": [str(p) for p in policy.existing_hidden()],
                "protected": [str(p) for p in policy.protected()], "network": policy.network,
                "unix_sockets": policy.unix_sockets}

    def wrap(self, argv: list[str], cwd: str | os.PathLike[str], *, die_with_parent: bool = False,
             network: bool = False) -> list[str]:
        """`argv` as it runs inside the sandbox (unchanged when nothing confines it), for a
        caller that can only choose an argv (MCP servers); `prepare` is faster with Landlock.
        Run it in a session of its own and kill its process group to stop it.
        `die_with_parent` (bubblewrap): SIGKILL it when the thread that started it ends, for
        processes without a group watcher. `network`: this command may use the network."""
        if not self.confines:
            return argv
        from agentica_cli.sandbox.sandbox_session import runnable_python

        temp = self.temp_dir()
        policy = self._policy_for(network)
        if self.backend == "bubblewrap":
            from agentica_cli.sandbox.bwrap import bwrap_argv

            if not policy.unix_sockets:  # the filter from a launcher inside (prepare() spares its start-up)
                argv = [runnable_python(), "-I", "-S", SECCOMP_LAUNCHER, "--network", "--", *argv]
            return bwrap_argv(policy, argv, cwd=Path(cwd), temp_dir=temp, die_with_parent=die_with_parent)
        if self.backend == "landlock":
            from agentica_cli.sandbox.landlock import launcher_args

            return [runnable_python(), "-I", "-S", LANDLOCK_LAUNCHER, *launcher_args(self._landlock_spec(policy)),
                    "--", *argv]
        from agentica_cli.sandbox.seatbelt import seatbelt_argv

        return seatbelt_argv(policy, argv, temp)

    def prepare(self, argv: list[str], cwd: str | os.PathLike[str], *, network: bool = False) -> Launch:
        """How to start `argv` confined (see Launch). With Landlock no launcher process: the
        command starts from a thread that confined itself (landlock_spawn.py), with a ruleset
        built once and rebuilt when the folders it lists change. bubblewrap starts from a
        thread with the seccomp filter that refuses Unix sockets (unless the policy allows them)."""
        if self.confines and self.backend == "bubblewrap" and not self.policy.unix_sockets:
            from agentica_cli.sandbox.bwrap import bwrap_argv, start_without_unix_sockets

            policy = self._policy_for(network)
            return Launch(bwrap_argv(policy, list(argv), cwd=Path(cwd), temp_dir=self.temp_dir()),
                          start_without_unix_sockets)
        if not (self.confines and self.backend == "landlock"):
            return Launch(self.wrap(argv, cwd, network=network))
        from agentica_cli.sandbox.landlock_spawn import RulesetCache, spawn_confined, watched_folders

        policy = self._policy_for(network)
        if self._rulesets is None:
            self._rulesets = RulesetCache()
        writable = [str(p) for p in policy.writable(self.temp_dir())]
        hidden = [str(p) for p in policy.hidden] + [str(p) for p in policy.existing_hidden()]
        ruleset = self._rulesets.get((tuple(writable), policy.network, policy.unix_sockets),
                                     lambda: self._landlock_spec(policy),
                                     watched_folders(hidden, writable))
        return Launch(list(argv), lambda popen: spawn_confined(ruleset, popen))

    def denial_note(self, output: str, returncode: int | None, *, network: bool = False) -> str | None:
        """A plain note for the model when a failed command looks stopped by the sandbox
        (`network`: this command had the network). It names the two ways to ask for more:
        network=true keeps the command sandboxed for files, sandbox=false lifts it all."""
        if not self.confines or returncode == 0:
            return None
        offline = self.network_confined and not network
        network_denied = offline and bool(_DENIED_NETWORK.search(output))
        if not (_DENIED_WRITE.search(output) or network_denied):
            return None
        folders = ", ".join(str(p) for p in self.policy.writable(None))
        denied = [f"writes outside {folders} and $TMPDIR" if self.policy.mode == "workspace-write"
                  else "every write but to $TMPDIR", "reading the user's secrets (~/.ssh, ~/.aws, ...)"]
        if self.policy.mode == "workspace-write":
            denied.append(f"writes to config that runs later ({', '.join(PROTECTED_NAMES[:6])}, shell start-up files)")
            if self.backend == "landlock" and self.policy.protected():
                denied.append("creating, deleting or renaming entries at the top level of a work folder that holds "
                              "one of them (use the file tools there, or a subfolder)")
        if offline:
            denied.append("network access (TCP connect and listen)")
        if self.unix_sockets_confined:
            denied.append("Unix sockets (docker, a local database's socket, key agents)")
        ways = ("If it failed because it needs the network, call execute again with network=true and a reason "
                "(it stays sandboxed for files). " if offline else "")
        return (f"[sandbox: this command ran in the {self.policy.mode} sandbox ({self.backend}), which denies "
                f"{'; '.join(denied)}. {ways}If it failed because it must write elsewhere or read what is hidden, "
                "and it really needs to, call execute again with sandbox=false and a reason. The user is asked "
                "either way (refused in runs nobody can answer). Do not try to get around the sandbox in other "
                "ways.]")
