"""What the sandbox tests share: a home folder with secrets in it, an execute tool confined by
a backend and a way to run a command through it, and a TCP server on 127.0.0.1 with the
command that connects to it (to see whether a sandboxed command has the network)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from builtin_support import call_tool

from agentica_cli.sandbox import Sandbox, SandboxPolicy
from builtin_tools import BuiltinExecuteTool

REPO = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"  # the venv's interpreter may live under a root-only folder
TEST_USER = "agentica-sandbox-test"


@dataclass(frozen=True)
class Who:
    name: str  # "root" or "user"
    prefix: tuple[str, ...]  # what runs a program as that identity
    python: str
    uid: int
    gid: int


def unprivileged_user(python: str = SYSTEM_PYTHON, imports: str = "agentica_cli.sandbox") -> Who | str:
    """Root: a system user made for these tests (useradd), run through setpriv, that can import
    `imports` with `python`. A user: itself. A string: why there is none (the test skips)."""
    if os.geteuid() != 0:
        return Who("user", (), sys.executable, os.getuid(), os.getgid())
    if not (shutil.which("setpriv") and os.path.exists(python)):
        return f"needs setpriv and {python} to run as an unprivileged user"
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        if not shutil.which("useradd"):
            return "needs useradd to create the unprivileged test user"
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
                       capture_output=True)  # another test process may have made it meanwhile
        entry = pwd.getpwnam(TEST_USER)
    prefix = ("setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups")
    check = subprocess.run([*prefix, python, "-c", f"import sys; sys.path.insert(0, sys.argv[1]); import {imports}",
                            str(REPO)], capture_output=True, text=True)
    if check.returncode != 0:
        return f"the test user cannot import {imports} from {REPO}: {check.stderr.strip()[-200:]}"
    return Who("user", prefix, python, entry.pw_uid, entry.pw_gid)


def home_with_secrets(home: Path, key_text: str = "PRIVATE-KEY-MATERIAL\n") -> Path:
    """`home` with ~/.ssh/id_ed25519 holding `key_text` (hidden by default in the sandbox)."""
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(key_text)
    return home


def make_tool(backend: str, work: Path, home: Path, *, mode: str = "workspace-write",
              network: bool = False) -> BuiltinExecuteTool:
    policy = SandboxPolicy.build(mode, work, home=home, network=network)
    return BuiltinExecuteTool(work, sandbox=Sandbox(policy, backend))


def run(tool: BuiltinExecuteTool, command: str, timeout: int = 30, **extra: object) -> str:
    """The execute tool's result for `command` (the call itself must not fail)."""
    call = call_tool(tool, "execute", command=command, timeout=timeout, **extra)
    assert call.error is None, call.error
    return call.result


@contextmanager
def loopback_server(accepted: list[int] | None = None) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers every connection with b"hello"; yields its port.
    Each connection it accepts adds a 1 to `accepted`, when given (to count what reached it)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)  # accept() wakes up to see `stop` (closing the socket does not wake it)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            if accepted is not None:
                accepted.append(1)
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def connect_command(port: int) -> str:
    """A shell command that connects to `port` and prints `got hello` when it could."""
    code = (f"import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=5); "
            "print('got', s.recv(5).decode())")
    return f'{sys.executable} -c "{code}"'


def processes_with(marker: str) -> list[int]:
    """The pids whose command line contains `marker` (NUL separates its words)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found
