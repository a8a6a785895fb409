"""Sandbox escapes from the third security review (issue 25), on both Linux backends, as root
and as an unprivileged user: every command runs through tests/sandbox_probe.py, which starts it
the way the execute tool does (Sandbox.prepare + run_in_group). Run as root, the "user" cases
create a system user once (useradd) and switch to it with setpriv; run as a user, the "root"
cases are skipped. A backend this machine lacks is skipped by name."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_support import Who, loopback_server, processes_with
from sandbox_support import unprivileged_user as make_unprivileged_user

from agentica_cli.sandbox import backend_available

REPO = Path(__file__).resolve().parent.parent
PROBE = str(REPO / "tests" / "sandbox_probe.py")
MSG_FASTOPEN = 0x20000000
IPPROTO_MPTCP = 262

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux backends only")


@pytest.fixture(scope="session")
def unprivileged_user() -> Who:
    """Root: a system user made for these tests (useradd), run through setpriv. A user: itself."""
    found = make_unprivileged_user()
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(params=["root", "user"])
def who(request: pytest.FixtureRequest) -> Who:
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("the root cases need root (CI runs as root)")
        return Who("root", (), sys.executable, 0, 0)
    return request.getfixturevalue("unprivileged_user")


@pytest.fixture(params=[
    pytest.param("bubblewrap", marks=pytest.mark.skipif(
        not backend_available("bubblewrap"), reason="bubblewrap (bwrap) is not installed or cannot create namespaces")),
    pytest.param("landlock", marks=pytest.mark.skipif(
        not backend_available("landlock"), reason="the kernel has no Landlock (Linux >= 5.13 with landlock enabled)")),
])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@dataclass
class Place:
    base: Path
    home: Path
    work: Path
    who: Who


@pytest.fixture
def place(who: Who) -> Iterator[Place]:
    """A home with secrets and a git project, owned by `who` (pytest's tmp_path is root-only)."""
    base = Path(tempfile.mkdtemp(prefix="agentica-escape-"))
    home, work = base / "home", base / "home" / "project"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-MATERIAL\n")
    (home / ".agentica").mkdir()
    (home / ".agentica" / "config.toml").write_text('api_key = "sk-CONFIG-KEY"\n')
    (home / ".npmrc").write_text("//registry/:_authToken=NPM-TOKEN\n")
    (home / ".codex").mkdir()
    (home / ".codex" / "auth.json").write_text('{"token": "CODEX-TOKEN"}\n')
    (home / ".bash_history").write_text("export TOKEN=HISTORY-TOKEN\n")
    (home / ".bashrc").write_text("# rc\n")
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (work / ".agentica").mkdir()
    (work / ".agentica" / "config.toml").write_text("# project\n")
    (work / ".vscode").mkdir()
    (work / ".mcp.json").write_text("{}\n")
    (work / "src").mkdir()
    (work / "README.md").write_text("readme\n")
    for path in [base, *base.rglob("*")]:
        os.lchown(path, who.uid, who.gid)
    base.chmod(0o755)
    try:
        yield Place(base, home, work, who)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def probe(place: Place, backend: str, command: str, **spec: object) -> dict:
    """The probe's {"code", "output"} for `command`, run as place.who in `backend`."""
    full = {"backend": backend, "work": str(place.work), "home": str(place.home), "command": command, **spec}
    done = subprocess.run([*place.who.prefix, place.who.python, PROBE, json.dumps(full)], capture_output=True,
                          text=True, timeout=60, cwd=place.base, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# -- item 2: config that runs later stays read-only ---------------------------------------------

def test_protected_config_in_the_work_folder_stays_read_only(backend: str, place: Place) -> None:
    work = place.work
    before = {p: p.read_bytes() for p in (work / ".git" / "config", work / ".agentica" / "config.toml",
                                          work / ".mcp.json", place.home / ".bashrc")}
    result = probe(place, backend, (
        "cd .gi? && echo '[core] fsmonitor = touch /tmp/PWNED' >> config; cd ..; "
        "cd .agentic? && echo '[hooks] x = 1' >> config.toml; cd ..; "
        "echo 'touch /tmp/PWNED' > .git/hooks/post-checkout; echo '{\"mcpServers\": 1}' > .mcp.json; "
        "mv .vscode vs; rm -rf .git/hooks; echo 'touch /tmp/PWNED' >> ~/.bashrc; "
        "echo made > src/new.txt && echo src-ok; echo more >> README.md && echo readme-ok"))
    assert {p: p.read_bytes() for p in before} == before, result
    assert not (work / ".git" / "hooks" / "post-checkout").exists()
    assert (work / ".vscode").is_dir() and (work / ".git" / "hooks").is_dir()
    assert "src-ok" in result["output"] and "readme-ok" in result["output"], result  # the rest stays writable
    assert (work / "src" / "new.txt").read_text() == "made\n"


# -- item 6: the common credential files are hidden ---------------------------------------------

def test_common_credential_files_are_hidden(backend: str, place: Place) -> None:
    home = place.home
    result = probe(place, backend, f"cat {home}/.npmrc {home}/.codex/auth.json {home}/.bash_history "
                                   f"{home}/.agentica/config.toml {home}/.ssh/id_ed25519; cat {home}/project/README.md")
    for secret in ("NPM-TOKEN", "CODEX-TOKEN", "HISTORY-TOKEN", "sk-CONFIG-KEY", "PRIVATE-KEY"):
        assert secret not in result["output"], result
    assert "readme" in result["output"]


def test_a_secret_hidden_inside_the_work_folder_is_neither_read_nor_written(backend: str, place: Place) -> None:
    """Landlock used to grant read with write on the work folder, which re-opened a secret inside it."""
    secret = place.work / "src" / "deploy.key"
    secret.write_text("DEPLOY-SECRET\n")
    other = place.work / "src" / "other.txt"  # (Landlock: no new entries beside a secret, existing ones stay writable)
    other.write_text("")
    for path in (secret, other):
        os.chown(path, place.who.uid, place.who.gid)
    result = probe(place, backend, f"cat {secret}; echo overwritten > {secret}; echo other > src/other.txt && echo ok",
                   hide=[str(secret)])
    assert "DEPLOY-SECRET" not in result["output"] and "ok" in result["output"], result
    assert secret.read_text() == "DEPLOY-SECRET\n"


# -- item 3: no network through MPTCP or TCP Fast Open ------------------------------------------

_NET_PROBE = f"""
import socket, sys
port = int(sys.argv[1])
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, {IPPROTO_MPTCP}); s.settimeout(5)
    s.connect(("127.0.0.1", port)); print("MPTCP-GOT", s.recv(5))
except OSError as e: print("mptcp refused:", e)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.sendto(b"x", {MSG_FASTOPEN}, ("127.0.0.1", port)); s.settimeout(5); print("TFO-GOT", s.recv(5))
except OSError as e: print("fastopen refused:", e)
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b"x", ("127.0.0.1", port)); print("UDP-SENT")
except OSError as e: print("udp refused:", e)
"""


@pytest.fixture
def counting_server() -> Iterator[tuple[int, list[int]]]:
    """A TCP server on 127.0.0.1 that answers b"hello" and counts its connections."""
    accepted: list[int] = []
    with loopback_server(accepted) as port:
        yield port, accepted


def test_mptcp_and_tcp_fast_open_do_not_reach_the_host(backend: str, place: Place,
                                                      counting_server: tuple[int, list[int]]) -> None:
    port, accepted = counting_server
    script = place.base / "net.py"
    script.write_text(_NET_PROBE)
    # The probe works unconfined: the server is reachable both ways.
    unconfined = subprocess.run([sys.executable, str(script), str(port)], capture_output=True, text=True, timeout=30)
    assert "TFO-GOT b'hello'" in unconfined.stdout, unconfined.stdout + unconfined.stderr
    accepted.clear()
    result = probe(place, backend, f"python3 {script} {port}")
    assert "MPTCP-GOT" not in result["output"] and "TFO-GOT" not in result["output"], result
    assert "refused" in result["output"]
    assert accepted == [], result
    if backend == "landlock":  # the seccomp filter refuses every socket but AF_UNIX
        assert "udp refused" in result["output"], result


# -- item 4: root inside is powerless -----------------------------------------------------------

def test_root_inside_cannot_unmount_remount_or_read_the_hidden_config(backend: str, place: Place) -> None:
    home = place.home
    result = probe(place, backend, (
        f"umount {home}/.agentica; umount -l {home}/.ssh; cat {home}/.agentica/config.toml {home}/.ssh/id_ed25519; "
        f"mount -o remount,bind,rw /; echo x > {place.base}/outside.txt; mknod {place.work}/src/disk b 8 0; "
        "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; grep NoNewPrivs /proc/self/status"))
    out = result["output"]
    assert "sk-CONFIG-KEY" not in out and "PRIVATE-KEY" not in out, result
    assert not (place.base / "outside.txt").exists()
    assert not (place.work / "src" / "disk").exists()
    masks = {line.split(":")[0]: int(line.split()[-1], 16) for line in out.splitlines() if line.startswith("Cap")}
    assert masks["CapEff"] == masks["CapPrm"] == 0, result
    if place.who.name == "root" or backend == "bubblewrap":
        assert masks["CapBnd"] == 0, result
    else:  # a user cannot empty its bounding set (no CAP_SETPCAP); no_new_privs keeps exec from granting any
        assert "NoNewPrivs:\t1" in out, result


# -- item 5: no handle on the user's terminal ---------------------------------------------------

_TTY_PROBE = r"""
import fcntl, os, sys, termios
for path in ("/dev/tty", sys.argv[1]):
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    except OSError as e:
        print("open refused:", path, e.strerror); continue
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"X"); print("TIOCSTI-DONE", path)
    except OSError as e:
        print("tiocsti refused:", path, e.strerror)
    try:
        os.write(fd, b"\x1b]52;c;UFdORUQ=\x07\x1b[2J fake: 212 tests passed\n"); print("WROTE", path)
    except OSError as e:
        print("write refused:", path, e.strerror)
print("isatty", [os.isatty(n) for n in (0, 1, 2)])
"""


def test_the_users_terminal_is_out_of_reach(backend: str, place: Place) -> None:
    """The agent's terminal is a pty here (the user's would be one too): the command opens
    neither /dev/tty nor that pty's /dev/pts/N, so TIOCSTI, OSC 52 and screen clearing reach nothing."""
    master, slave = os.openpty()
    try:
        slave_path = os.ttyname(slave)
        os.chown(slave_path, place.who.uid, place.who.gid)  # the user's own terminal
        script = place.base / "tty.py"
        script.write_text(_TTY_PROBE)
        result = probe(place, backend, f"python3 {script} {slave_path}")
        out = result["output"]
        assert "TIOCSTI-DONE" not in out and "WROTE" not in out, result
        assert "isatty [False, False, False]" in out, result
        os.set_blocking(master, False)
        try:
            leaked = os.read(master, 4096)
        except BlockingIOError:
            leaked = b""
        assert leaked == b"", leaked
    finally:
        os.close(master)
        os.close(slave)


# -- item 9: key agents ---------------------------------------------------------------------------

def test_agent_sockets_are_left_out_of_the_environment_and_hidden(backend: str, place: Place) -> None:
    sock_path = place.base / "agent.sock"
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(sock_path))
    agent.listen()
    os.chown(sock_path, place.who.uid, place.who.gid)
    gnupg = place.home / ".gnupg"
    gnupg.mkdir()
    try:
        env = {"SSH_AUTH_SOCK": str(sock_path), "GPG_AGENT_INFO": f"{gnupg}/S.gpg-agent:0:1", "SSH_AGENT_PID": "1"}
        result = probe(place, backend, 'echo "ssh=[$SSH_AUTH_SOCK] gpg=[$GPG_AGENT_INFO] pid=[$SSH_AGENT_PID]"; '
                                       f"ls -l {sock_path}", env=env)
        assert "ssh=[] gpg=[] pid=[]" in result["output"], result
        if backend == "bubblewrap":  # the socket itself is covered (Landlock cannot: docs/security.md)
            assert "srw" not in result["output"], result
    finally:
        agent.close()


_UNIX_PROBE = """
import socket, sys
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path); print("CONNECTED", path, s.recv(5))
    except OSError as e:
        print("refused:", path, e)
"""


@contextlib.contextmanager
def unix_server(path: Path, who: Who, accepted: list[str]) -> Iterator[None]:
    """A stand-in key agent on the Unix socket `path` (owned by `who`, so only the sandbox stops
    them): it answers b"agent" and records each connection in `accepted`."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    os.chown(path, who.uid, who.gid)
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(str(path))
            with conn:
                conn.sendall(b"agent")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_no_unix_socket_is_reachable_unless_allowed(backend: str, place: Place) -> None:
    """Issue 25 item 9: Landlock cannot refuse connect() by path, and bubblewrap's read-only mount
    does not either: a command reached an agent socket wherever it found one."""
    hidden, visible = place.home / ".ssh" / "agent.sock", place.work / "agent.sock"
    script = place.base / "unix.py"
    script.write_text(_UNIX_PROBE)
    accepted: list[str] = []
    ordinary = ("python3 -c \"import subprocess, multiprocessing; a, b = multiprocessing.Pipe(); a.send('pipe-ok'); "
                "print(b.recv()); print(subprocess.run(['echo', 'sub-ok'], capture_output=True, text=True).stdout)\"; "
                "git init -q src/repo && git -C src/repo status --short && echo git-ok")
    with unix_server(hidden, place.who, accepted), unix_server(visible, place.who, accepted):
        result = probe(place, backend, f"python3 {script} {hidden} {visible}; {ordinary}",
                       env={"SSH_AUTH_SOCK": str(visible)})
        assert accepted == [] and "CONNECTED" not in result["output"], result
        for works in ("pipe-ok", "sub-ok", "git-ok"):
            assert works in result["output"], result
        # The setting lets commands use Unix sockets again (the visible one; the hidden one stays hidden on bwrap).
        allowed = probe(place, backend, f"python3 {script} {visible}", unix_sockets=True)
        assert f"CONNECTED {visible}" in allowed["output"], allowed
        assert accepted == [str(visible)]


# -- item 13: nothing outlives the session ------------------------------------------------------


def _gone(marker: str, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not processes_with(marker)


def _marker(backend: str, who: Who, case: int) -> str:
    backend_digit = {"bubblewrap": 1, "landlock": 2}[backend]
    return f"7{os.getpid() % 100}.{case}{backend_digit}{ {'root': 1, 'user': 2}[who.name] }"


def test_a_daemonised_command_does_not_outlive_a_normal_exit(backend: str, place: Place) -> None:
    marker = _marker(backend, place.who, 1)
    try:
        result = probe(place, backend, f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & echo started", reap=True)
        assert "started" in result["output"]
        assert _gone(f"sleep\0{marker}"), "the daemon outlived the session"
    finally:
        for pid in processes_with(f"sleep\0{marker}"):
            os.kill(pid, signal.SIGKILL)


_DAEMONS = {
    "setsid": "setsid sleep {marker} >/dev/null 2>&1 < /dev/null & sleep 60",
    # the subshell exits at once: the daemon is an orphan, adopted by the agent (a subreaper)
    "double-fork": "(setsid sleep {marker} >/dev/null 2>&1 < /dev/null &); sleep 60",
}


@pytest.mark.parametrize("daemon", sorted(_DAEMONS))
def test_a_daemonised_command_does_not_survive_sigkill_of_the_agent(backend: str, place: Place, daemon: str) -> None:
    """Landlock run by a user: no PID namespace; the session reaper (sandbox/reaper.py) ends them."""
    marker = _marker(backend, place.who, 2 if daemon == "setsid" else 3)
    spec = {"backend": backend, "work": str(place.work), "home": str(place.home), "reap": True,
            "command": _DAEMONS[daemon].format(marker=marker)}
    # The same user's process that the session did not start: the reaper must leave it alone.
    bystander = subprocess.Popen([*place.who.prefix, "sleep", f"{marker}1"], start_new_session=True)
    agent = subprocess.Popen([*place.who.prefix, place.who.python, PROBE, json.dumps(spec)], cwd=place.base,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
    try:
        deadline = time.monotonic() + 20
        while not processes_with(f"sleep\0{marker}\0") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(f"sleep\0{marker}\0"), "the daemon never started"
        os.kill(agent.pid, signal.SIGKILL)  # the probe itself: setpriv execs it, so the pid is the same
        agent.wait(timeout=10)
        assert _gone(f"sleep\0{marker}\0", 10), "the daemon survived the agent's SIGKILL"
        assert bystander.poll() is None, "a process the session did not start was killed"
    finally:
        agent.kill()
        agent.wait()
        bystander.kill()
        bystander.wait()
        for pid in processes_with(f"sleep\0{marker}"):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_the_argv_form_mcp_servers_use_applies_the_same_protections(backend: str, tmp_path: Path) -> None:
    """MCP servers start from an argv (Landlock: `python -I -S landlock.py ... -- CMD`; bubblewrap:
    the seccomp launcher inside bwrap), not from the spawn threads."""
    from agentica_cli.sandbox import Sandbox, SandboxPolicy

    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / "src").mkdir()
    sandbox = Sandbox(SandboxPolicy.build("workspace-write", work, home=tmp_path / "home"), backend)
    command = ("echo x >> .git/config; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' "
               "2>&1 | tail -1; python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1; "
               "grep -E '^CapEff' /proc/self/status; echo ok > src/m.txt && echo wrote")
    done = subprocess.run(sandbox.wrap(["bash", "-c", command], work), cwd=work, capture_output=True, text=True,
                          env=sandbox.environment({"PATH": "/usr/bin:/bin"}), timeout=60, stdin=subprocess.DEVNULL)
    assert (work / ".git" / "config").read_text() == "[core]\n", done
    lines = done.stdout.splitlines()
    assert "PermissionError: [Errno 1] Operation not permitted" in lines[-3], done  # AF_UNIX refused
    if backend == "landlock":  # bubblewrap: AF_INET is allowed in its network namespace, which has no route
        assert "Operation not permitted" in lines[-4], done
    assert "CapEff:\t0000000000000000" in done.stdout, done
    assert "wrote" in done.stdout
