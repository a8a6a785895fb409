"""Shared test setup.

A guard makes any attempt to reach a host other than loopback an error: tests never talk
to a real model provider (or anything else on the network), in this process or in the
processes the tests start (tests/test_testing_server.py proves both).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path

import pytest

# Bytecode is written, whatever the environment says (PYTHONDONTWRITEBYTECODE=1 here and on CI):
# pytest_sessionstart below compiles agentica's modules up front; this lets each test process
# also keep pytest's assertion-rewritten test modules (without it every xdist worker rewrote and
# compiled all ~160 test files again: collection 10.9 -> 5.2 s of CPU per worker) and lets the
# processes the tests start cache whatever else they import. The cache is the ordinary __pycache__.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

_real_getaddrinfo = socket.getaddrinfo


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile agentica's modules to bytecode once, before any test starts a process.

    The package is an editable install, so its .pyc files are written only by imports; with
    PYTHONDONTWRITEBYTECODE=1 (set on CI's image and on this machine) they never are, and
    every `agentica` subprocess and pty in the suite recompiled each module it imported from
    source: about 0.1 s of CPU per start, hundreds of starts. compileall writes them whatever
    that variable says. Once, in the controller: xdist workers see the same files.
    """
    if hasattr(session.config, "workerinput"):
        return
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("agentica_cli", "builtin_tools", "tests"):
        if (root / package).is_dir():
            compileall.compile_dir(str(root / package), quiet=2, workers=1)

_real_connect = socket.socket.connect


def _is_local(host: object) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded_getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    if not _is_local(host):
        raise OSError(f"tests may not reach the network: lookup of {host!r} refused by tests/conftest.py")
    return _real_getaddrinfo(host, *args, **kwargs)


def _guarded_connect(self, address):  # type: ignore[no-untyped-def]
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
        raise OSError(f"tests may not reach the network: connect to {address!r} refused by tests/conftest.py")
    return _real_connect(self, address)


def _closed_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True, scope="session")
def _no_network():
    socket.getaddrinfo = _guarded_getaddrinfo
    socket.socket.connect = _guarded_connect
    # Child processes (the `agentica` command, MCP servers) do not get the patch above; they
    # inherit a proxy on a closed loopback port instead, which every HTTP client honours
    # (httpx, urllib, requests): a request to any host but loopback fails at once.
    dead_proxy = f"http://127.0.0.1:{_closed_loopback_port()}"
    proxy_env = {name: dead_proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                               "http_proxy", "https_proxy", "all_proxy")}
    proxy_env |= {"NO_PROXY": "127.0.0.1,localhost,::1", "no_proxy": "127.0.0.1,localhost,::1"}
    saved = {name: os.environ.get(name) for name in proxy_env}
    os.environ.update(proxy_env)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    socket.getaddrinfo = _real_getaddrinfo
    socket.socket.connect = _real_connect


# -- the scripted model server ----------------------------------------------------------------


@pytest.fixture
def scripted():
    """`scripted(*turns)` starts a ScriptedModelServer on 127.0.0.1 (stopped after the test).

    After the test, every request any of them received is checked for the loop's invariant:
    each tool call in the history has exactly one result, right after its assistant message.
    """
    from agentica_cli.testing import ScriptedModelServer, tool_call_problems

    servers = []

    def start(*turns):
        server = ScriptedModelServer(turns).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    problems = [f"request {i + 1}: {p}" for server in servers for i, body in enumerate(server.requests)
                for p in tool_call_problems(body.get("messages") or [])]
    if problems:
        pytest.fail("a request broke one-result-per-tool-call:\n" + "\n".join(problems))


def scripted_model(server, **options):
    """An OpenAIChat pointed at a scripted server, with fast retries."""
    from agentica_cli.models import OpenAIChat

    options.setdefault("retry_base_delay", 0.01)
    return OpenAIChat(id="scripted-model", api_key="sk-test", base_url=server.base_url, **options)


async def collect(agent, prompt):
    """Every event of one `agent.run_stream(prompt)`."""
    return [event async for event in agent.run_stream(prompt)]


def tool_results(body):
    """tool_call_id -> content of the tool results in a recorded request body."""
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty AGENTICA_HOME for a CLI run (config, sessions, logs)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def agentica_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTICA_HOME of this process (the library's checkpoints and sessions), not created."""
    home = tmp_path / "home"
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with one small file, notes.txt (a test file may define its own)."""
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello from the notes\n")
    return path


@pytest.fixture
def start_repl(home: Path, project: Path):
    """`start_repl(server, *flags)`: the REPL in a pseudo-terminal, in the test module's `project`,
    at its first prompt; ended after the test (tests/screen_support.py)."""
    from screen_support import started_repls

    with started_repls(home, project) as start:
        yield start
