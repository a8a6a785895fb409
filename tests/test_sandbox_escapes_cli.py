"""Issue 25 through the real `agentica -p` and the scripted model, on each Linux backend: config
planted for later (item 2) and the --api-key-file path and content (item 10)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cli_support import AGENTICA, cli_env, model_args, run_cli, tool_results
from sandbox_support import Who, processes_with, unprivileged_user

from agentica_cli.sandbox import backend_available
from agentica_cli.testing import ScriptedModelServer, turns

BACKENDS = [
    pytest.param("bubblewrap", marks=pytest.mark.skipif(
        not backend_available("bubblewrap"), reason="bubblewrap (bwrap) is not installed or cannot create namespaces")),
    pytest.param("landlock", marks=pytest.mark.skipif(
        not backend_available("landlock"), reason="the kernel has no Landlock (Linux >= 5.13 with landlock enabled)")),
]


@pytest.fixture(params=BACKENDS)
def backend_home(request: pytest.FixtureRequest, home: Path) -> Path:
    (home / "config.toml").write_text(f'[sandbox]\nbackend = "{request.param}"\n')
    return home


def _one_execute(home: Path, project: Path, command: str, *flags: str) -> str:
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x1")), turns.text("done")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", *flags, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    return tool_results(requests[1])["x1"]


def test_accept_edits_cannot_plant_git_or_agentica_config(backend_home: Path, project: Path) -> None:
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".agentica").mkdir()
    (project / ".agentica" / "config.toml").write_text("# project config\n")
    (project / "src").mkdir()
    payload = "W2NvcmVdCglmc21vbml0b3IgPSB0b3VjaCAvdG1wL1BXTkVECg=="  # [core] fsmonitor = touch /tmp/PWNED
    result = _one_execute(backend_home, project,
                          f"echo ran > src/ran.txt; cd .gi? && echo {payload} | base64 -d >> config; cd ..; "
                          "cd .agentic? && printf '[hooks]\\n' >> config.toml",
                          "--permission-mode", "accept-edits")
    assert (project / ".git" / "config").read_text() == "[core]\n", result
    assert (project / ".agentica" / "config.toml").read_text() == "# project config\n", result
    assert (project / "src" / "ran.txt").read_text() == "ran\n"  # the command ran, unasked, in the sandbox
    assert "writes to config that runs later" in result  # the model learns why, and how to ask (sandbox=false)
    assert "sandbox=false and a reason" in result


def test_the_key_file_is_hidden_and_its_path_is_not_in_our_command_line(backend_home: Path, project: Path,
                                                                        tmp_path: Path) -> None:
    key_file = tmp_path / "keys" / "model.key"
    key_file.parent.mkdir()
    key_file.write_text("test-key\n")  # the scripted server's key
    command = (f"cat {key_file.parent}/*.key; for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done "
               "| grep -e ' -p go ' | grep -v grep")
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x1")), turns.text("done")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--yes", "--base-url", server.base_url, "--api-key-file", str(key_file),
                        "--model", "scripted-model"], cwd=project, home=backend_home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    result = tool_results(requests[1])["x1"]
    assert "test-key" not in result, result  # the file is hidden
    agentica_lines = [line for line in result.splitlines() if "--api-key-file" in line]
    if not agentica_lines:  # bubblewrap: a /proc of its own PID namespace, agentica is not in it
        assert "bubblewrap" in result, result
        return
    assert all(str(key_file) not in line for line in agentica_lines), result
    # Another test's agentica may run beside this one (pytest -n): ours is the one talking to our server.
    ours = [line for line in agentica_lines if server.base_url in line]
    assert len(ours) == 1, result
    assert "--api-key-file " + "*" * len(str(key_file)) in ours[0], result


def _sleeping(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if f"sleep\0{marker}".encode() in f.read():
                        found.append(int(name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("sandbox_flag", ["on", "off"])
def test_a_daemonised_command_ends_with_the_run(backend_home: Path, project: Path, sandbox_flag: str) -> None:
    """Issue 25 item 13: `setsid cmd >/dev/null &` outlived agentica on every backend."""
    marker = f"8{os.getpid() % 100}.{int(time.time() * 1000) % 100000}"
    flags = ["--yes"] + (["--sandbox", "off"] if sandbox_flag == "off" else [])
    try:
        command = f"setsid sleep {marker} >/dev/null 2>&1 < /dev/null & echo started"
        result = _one_execute(backend_home, project, command, *flags)
        assert "started" in result, result
        deadline = time.monotonic() + 5
        while _sleeping(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sleeping(marker) == [], "the daemon outlived agentica"
    finally:
        for pid in _sleeping(marker):
            os.kill(pid, signal.SIGKILL)


# -- item 13 under Landlock: agentica SIGKILLed, as root and as an unprivileged user ----------------

_DAEMONS = {
    "setsid": "setsid sleep {marker} >/dev/null 2>&1 & sleep 60",
    "double-fork": "(setsid sleep {marker} >/dev/null 2>&1 < /dev/null &); sleep 60",
}


@pytest.fixture(params=["root", "user"])
def who(request: pytest.FixtureRequest) -> Who:
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("the root case needs root (CI runs as root)")
        return Who("root", (), sys.executable, 0, 0)
    found = unprivileged_user(sys.executable, "agentica_cli.cli.app")
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.mark.skipif(not backend_available("landlock"), reason="the kernel has no Landlock (Linux >= 5.13 with "
                    "landlock enabled)")
@pytest.mark.parametrize("daemon", sorted(_DAEMONS))
def test_a_daemon_does_not_survive_sigkill_of_agentica_under_landlock(who: Who, daemon: str) -> None:
    """The session reaper (sandbox/reaper.py) ends it; a process of the same user that agentica
    did not start survives."""
    base = Path(tempfile.mkdtemp(prefix="agentica-reap-"))
    home, project = base / "home", base / "project"
    (home / ".agentica").mkdir(parents=True)
    (home / ".agentica" / "config.toml").write_text('[sandbox]\nbackend = "landlock"\n')
    project.mkdir()
    key = base / "key"
    key.write_text("test-key\n")
    for path in [base, *base.rglob("*")]:
        os.lchown(path, who.uid, who.gid)
    base.chmod(0o755)
    marker = f"9{os.getpid() % 100}.{int(time.time() * 1000) % 100000}{len(daemon)}{who.uid % 10}"
    script = [turns.tool_calls(turns.call("execute", {"command": _DAEMONS[daemon].format(marker=marker)}, id="x1")),
              turns.text("done")]
    bystander = subprocess.Popen([*who.prefix, "sleep", f"{marker}1"], start_new_session=True)
    env = {**cli_env(home / ".agentica"), "HOME": str(home), "PATH": "/usr/bin:/bin"}
    try:
        with ScriptedModelServer(script) as server:
            agentica = subprocess.Popen(
                [*who.prefix, *AGENTICA, "-p", "go", "--yes", "--base-url", server.base_url, "--api-key-file",
                 str(key), "--model", "scripted-model"], cwd=project, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                deadline = time.monotonic() + 30
                while not processes_with(f"sleep\0{marker}\0") and time.monotonic() < deadline:
                    if agentica.poll() is not None:
                        pytest.fail(f"agentica ended early: {agentica.communicate()}")
                    time.sleep(0.05)
                assert processes_with(f"sleep\0{marker}\0"), "the daemon never started"
                os.kill(agentica.pid, signal.SIGKILL)  # setpriv execs agentica: the same pid
                agentica.wait(timeout=10)
            finally:
                agentica.kill()
                agentica.communicate()
        deadline = time.monotonic() + 5
        while processes_with(f"sleep\0{marker}\0") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_with(f"sleep\0{marker}\0") == [], "the daemon outlived agentica's SIGKILL"
        assert bystander.poll() is None, "a process agentica did not start was killed"
    finally:
        bystander.kill()
        bystander.wait()
        for pid in processes_with(f"sleep\0{marker}"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)
