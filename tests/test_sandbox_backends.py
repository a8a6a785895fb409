"""The command sandbox, backend by backend: real bwrap / Landlock confinement of real bash
commands run through the execute tool (no mocks). A backend this machine lacks is skipped
by name; .ci/run installs bubblewrap so CI covers both Linux backends."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import connect_command, home_with_secrets, make_tool, processes_with, run
from sandbox_support import loopback_server as serving_hello

from agentica_cli.sandbox import Sandbox, SandboxPolicy, backend_available
from builtin_tools import BuiltinExecuteTool

LINUX_BACKENDS = [
    pytest.param("bubblewrap", marks=pytest.mark.skipif(
        not backend_available("bubblewrap"), reason="bubblewrap (bwrap) is not installed or cannot create namespaces")),
    pytest.param("landlock", marks=pytest.mark.skipif(
        not backend_available("landlock"), reason="the kernel has no Landlock (Linux >= 5.13 with landlock enabled)")),
]


@pytest.fixture(params=LINUX_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    home = home_with_secrets(tmp_path / "home")
    (home / ".netrc").write_text("machine example password NETRC-SECRET\n")
    (home / "notes.txt").write_text("ordinary file\n")
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_writes_inside_the_work_folder_and_tmpdir_work(backend: str, project: Path, fake_home: Path) -> None:
    tool = make_tool(backend, project, fake_home)
    result = run(tool, 'echo made > inside.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"')
    assert result.startswith("[exit code 0;"), result
    assert (project / "inside.txt").read_text() == "made\n"
    assert "tmp" in result


def test_a_write_outside_fails_and_the_result_says_how_to_escalate(backend: str, project: Path,
                                                                  fake_home: Path, tmp_path: Path) -> None:
    tool = make_tool(backend, project, fake_home)
    outside = tmp_path / "outside.txt"
    result = run(tool, f"echo leak > {outside}")
    assert not outside.exists()
    assert result.startswith("[exit code 1;"), result
    assert "Read-only file system" in result or "Permission denied" in result
    assert f"sandbox ({backend})" in result and "sandbox=false and a reason" in result


def test_read_only_mode_refuses_writes_in_the_work_folder(backend: str, project: Path, fake_home: Path) -> None:
    tool = make_tool(backend, project, fake_home, mode="read-only")
    result = run(tool, 'echo x > inside.txt; echo t > "$TMPDIR/t" && echo tmp-ok')
    assert not (project / "inside.txt").exists()
    assert "tmp-ok" in result


def test_secrets_under_home_cannot_be_read_but_the_rest_can(backend: str, project: Path, fake_home: Path) -> None:
    tool = make_tool(backend, project, fake_home)
    result = run(tool, f"cat {fake_home}/.ssh/id_ed25519 {fake_home}/.netrc; cat {fake_home}/notes.txt")
    assert "PRIVATE-KEY-MATERIAL" not in result
    assert "NETRC-SECRET" not in result
    assert "ordinary file" in result


def test_everyday_developer_commands_work(backend: str, project: Path, fake_home: Path) -> None:
    tool = make_tool(backend, project, fake_home)
    (project / "a.py").write_text("x = 1\n")
    py = sys.executable
    result = run(tool, f"git init -q && git status --short && {py} -m pytest --version && {py} -m pip --version",
                 timeout=60)
    assert result.startswith("[exit code 0;"), result
    assert "?? a.py" in result
    assert "pytest" in result and "pip " in result


@pytest.fixture
def loopback_server() -> Iterator[int]:
    with serving_hello() as port:
        yield port


def test_network_is_off_unless_allowed(backend: str, project: Path, fake_home: Path, loopback_server: int) -> None:
    closed = run(make_tool(backend, project, fake_home), connect_command(loopback_server))
    assert "got hello" not in closed
    assert "Error" in closed  # ConnectionRefusedError (own loopback) or PermissionError (Landlock)
    opened = run(make_tool(backend, project, fake_home, network=True), connect_command(loopback_server))
    assert "got hello" in opened, opened


def test_network_true_gives_one_command_the_network_and_nothing_more(backend: str, project: Path, fake_home: Path,
                                                                    loopback_server: int, tmp_path: Path) -> None:
    tool = make_tool(backend, project, fake_home)
    if not tool.sandbox or not tool.sandbox.network_confined:
        pytest.skip(f"{backend} cannot keep the network out here (Landlock ABI < 4)")
    closed = run(tool, connect_command(loopback_server))
    assert "got hello" not in closed and "network=true and a reason" in closed, closed
    outside = tmp_path / "outside.txt"
    opened = run(tool, f"{connect_command(loopback_server)}; echo x > {outside}; cat {fake_home}/.netrc",
                 network=True, reason="talk to the test server")
    assert "got hello" in opened, opened
    assert not outside.exists() and "NETRC-SECRET" not in opened  # still sandboxed for files
    assert "got hello" not in run(tool, connect_command(loopback_server))  # for that one command only


def test_a_runaway_fork_flood_is_killed_at_the_timeout(backend: str, project: Path, fake_home: Path) -> None:
    tool = make_tool(backend, project, fake_home)
    marker = f"60{os.getpid() % 1000}.{ {'bubblewrap': 1, 'landlock': 2}[backend] }"  # a unique sleep length
    command = f"for i in $(seq 20); do (sleep {marker} &) ; done; while :; do :; done"
    started = time.monotonic()
    result = run(tool, command, timeout=2)
    assert "exit code 124: timed out after 2 s" in result
    assert time.monotonic() - started < 30
    deadline = time.monotonic() + 5
    while processes_with(f"sleep\0{marker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(f"sleep\0{marker}") == []


def test_escalated_command_runs_outside_the_sandbox(backend: str, project: Path, fake_home: Path,
                                                    tmp_path: Path) -> None:
    """sandbox=false (once the policy has asked the user) runs with the user's rights."""
    tool = make_tool(backend, project, fake_home)
    outside = tmp_path / "outside.txt"
    result = run(tool, f"echo ok > {outside}", sandbox=False, reason="write the shared log")
    assert result.startswith("[exit code 0;"), result
    assert outside.read_text() == "ok\n"


def test_no_backend_or_mode_off_wraps_nothing(project: Path, fake_home: Path) -> None:
    off = Sandbox(SandboxPolicy.build("off", project, home=fake_home))
    assert not off.confines and off.describe() == "off"
    assert off.wrap(["bash", "-c", "true"], project) == ["bash", "-c", "true"]


def test_an_unknown_or_missing_backend_is_a_clear_error(project: Path, fake_home: Path) -> None:
    policy = SandboxPolicy.build("workspace-write", project, home=fake_home)
    with pytest.raises(ValueError, match="unknown sandbox backend 'chroot'"):
        Sandbox(policy, "chroot")
    if sys.platform != "darwin":
        with pytest.raises(ValueError, match="'seatbelt' is not available"):
            Sandbox(policy, "seatbelt")


@pytest.mark.skipif(sys.platform != "darwin", reason="macOS sandbox-exec (Seatbelt) exists only on macOS; "
                    "the profile is generated but cannot be run on Linux")
def test_seatbelt_confines_writes(project: Path, fake_home: Path, tmp_path: Path) -> None:
    tool = make_tool("seatbelt", project, fake_home)
    run(tool, f"echo x > {tmp_path}/outside.txt; echo y > inside.txt")
    assert not (tmp_path / "outside.txt").exists() and (project / "inside.txt").exists()


def test_seatbelt_profile_names_the_folders(project: Path, fake_home: Path) -> None:
    from agentica_cli.sandbox.seatbelt import seatbelt_profile

    profile = seatbelt_profile(SandboxPolicy.build("workspace-write", project, home=fake_home), Path("/tmp/x"))
    assert f'(allow file-write* (subpath "{project}"))' in profile
    assert f'(deny file-read* (subpath "{fake_home}/.ssh"))' in profile
    assert "(deny network-outbound (remote ip))" in profile


def test_landlock_launcher_costs_no_site_packages() -> None:
    """The launcher starts with -I -S: it must import only the standard library."""
    from agentica_cli.sandbox.sandbox import LANDLOCK_LAUNCHER

    probe = subprocess.run([sys.executable, "-I", "-S", LANDLOCK_LAUNCHER, "--bogus"], capture_output=True, text=True)
    assert probe.returncode == 2 and "unknown launcher option" in probe.stderr


_AS_NOBODY = """
import subprocess, sys
from agentica_cli.sandbox import Sandbox, SandboxPolicy
work, outside, backend = sys.argv[1:4]
sandbox = Sandbox(SandboxPolicy.build("workspace-write", work), backend)
command = ["bash", "-c", f"echo in > in.txt; echo out > {outside}"]
env = sandbox.environment({"PATH": "/usr/bin:/bin"})
# The argv form (MCP servers; Landlock's launcher), then the way execute starts commands.
done = subprocess.run(sandbox.wrap(command, work), cwd=work, env=env, capture_output=True, text=True)
launch = sandbox.prepare(command, work)
started = launch.start(lambda: subprocess.Popen(launch.argv, cwd=work, env=env, stderr=subprocess.PIPE, text=True))
print(done.returncode, started.wait(), done.stderr, started.stderr.read())
"""


SYSTEM_PYTHON = "/usr/bin/python3"  # the venv's interpreter may live under a root-only folder (pyenv in /root)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv") or not os.path.exists(SYSTEM_PYTHON),
                    reason="needs root, setpriv and /usr/bin/python3 to run a check as the unprivileged user nobody")
def test_the_backend_works_for_an_unprivileged_user(backend: str) -> None:
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="agentica-nobody-"))  # pytest's tmp_path is root-only (0700)
    try:
        work = base / "work"
        work.mkdir()
        base.chmod(0o777)
        work.chmod(0o777)
        outside = base / "outside.txt"
        probe = subprocess.run(["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                SYSTEM_PYTHON, "-c", _AS_NOBODY, str(work), str(outside), backend],
                               capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(Path.cwd())})
        assert probe.returncode == 0, probe.stderr
        assert probe.stdout.startswith("1 1 ") and ("Read-only" in probe.stdout or "Permission denied" in probe.stdout)
        assert probe.stdout.count("outside.txt") == 2, probe.stdout  # both ways refused the write
        assert (work / "in.txt").read_text() == "in\n"
        assert (work / "in.txt").stat().st_uid != 0  # really written by nobody
        assert not outside.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_task_sub_agents_run_their_commands_in_the_same_sandbox(project: Path, fake_home: Path) -> None:
    from builtin_tools import get_builtin_tools

    sandbox = Sandbox(SandboxPolicy.build("workspace-write", project, home=fake_home))
    tools = get_builtin_tools(project, sandbox=sandbox)
    task = next(t for t in tools if t.name == "task")
    sub_execute = [t for t in task.sub_agent_tools(None) if isinstance(t, BuiltinExecuteTool)]  # no parent limit
    assert [t.sandbox for t in sub_execute] == [sandbox]


def test_landlock_grants_device_writes_only_to_harmless_devices(project: Path, fake_home: Path) -> None:
    """Root may write a disk through /dev; the Landlock rules name single character devices.
    The probe only opens a block device for appending (it writes nothing)."""
    import stat

    if not backend_available("landlock"):
        pytest.skip("the kernel has no Landlock (Linux >= 5.13 with landlock enabled)")
    blocks = [f"/dev/{n}" for n in sorted(os.listdir("/dev")) if stat.S_ISBLK(os.stat(f"/dev/{n}").st_mode)]
    if not blocks or not os.access(blocks[0], os.W_OK):
        pytest.skip("no block device in /dev that this user could open for writing anyway")
    tool = make_tool("landlock", project, fake_home)
    result = run(tool, f"echo ok > /dev/null && echo null-ok; exec 3>>{blocks[0]} && echo opened-disk")
    assert "null-ok" in result
    assert "opened-disk" not in result and "Permission denied" in result
