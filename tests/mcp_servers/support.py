"""Helpers for the MCP tests: where the demo servers are, starting the HTTP one, and
checking that a server process is really gone."""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO_SERVER = HERE / "demo_server.py"
HTTP_SERVER = HERE / "http_server.py"
PYTHON = sys.executable


def demo_command(*options: str) -> str:
    """The stdio demo server as one command string (what McpTool("...") takes)."""
    import shlex

    return shlex.join([PYTHON, str(DEMO_SERVER), *options])


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (gone, or a zombie nobody has reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2 :].split()[0] == b"Z"
    except OSError:
        return True


def wait_gone(pid: int, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.02)
    return process_gone(pid)


class HttpDemoServer:
    """tests/mcp_servers/http_server.py as a subprocess on 127.0.0.1 (SSE at /sse, HTTP at /mcp)."""

    def __init__(self, *options: str, port: int | None = None):
        self.options = list(options)
        self.port = port
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> HttpDemoServer:
        args = [PYTHON, str(HTTP_SERVER), *self.options]
        if self.port is not None:
            args += ["--port", str(self.port)]
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=HERE
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # "PORT <n>", printed once it listens
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"http demo server did not start: {line!r}")
        self.port = int(line.split()[1])
        return self

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)

    def __enter__(self) -> HttpDemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_shared: HttpDemoServer | None = None


def shared_http_server() -> HttpDemoServer:
    """One plain HTTP demo server for every test module that only needs one (each start
    costs ~1 s of CPU); stopped when the test process exits. Its tools keep their state in
    the server process, so tests that use it must not depend on a fresh counter or notes."""
    global _shared
    if _shared is None or _shared.process is None or _shared.process.poll() is not None:
        _shared = HttpDemoServer().start()
        atexit.register(_shared.stop)
    return _shared


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
