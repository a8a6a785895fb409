"""The command sandbox through the real `agentica` command and the scripted model server."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest
from cli_support import AGENTICA, cli_env, model_args, run_cli, tool_results
from sandbox_support import connect_command, loopback_server
from screen_support import spawn_agentica

from agentica_cli.sandbox import best_backend
from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.skipif(best_backend() is None, reason="no sandbox backend (bubblewrap or Landlock) here")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def run_execute(home: Path, project: Path, arguments: dict[str, object], *flags: str,
                env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], str]:
    """`agentica -p` whose model makes one execute call: the run and the call's result."""
    script = [turns.tool_calls(turns.call("execute", arguments, id="x1")), turns.text("done")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", *flags, *model_args(server)], cwd=project, home=home, env=env)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    return proc, tool_results(requests[1])["x1"]


def test_accept_edits_runs_a_sandboxed_command_unasked(home: Path, project: Path) -> None:
    _, result = run_execute(home, project, {"command": "touch ran.txt"}, "--permission-mode", "accept-edits")
    assert (project / "ran.txt").exists()
    assert result.startswith("[exit code 0;")


def test_a_denied_write_tells_the_model_how_to_escalate(home: Path, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    _, result = run_execute(home, project, {"command": f"echo x > {outside}"}, "--yes")
    assert not outside.exists()
    assert "workspace-write sandbox" in result and "sandbox=false and a reason" in result


def test_escalation_is_refused_under_yes_with_how_to_lift_the_sandbox(home: Path, project: Path,
                                                                      tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    args = {"command": f"echo x > {outside}", "sandbox": False, "reason": "write the shared log"}
    proc, result = run_execute(home, project, args, "--yes")
    assert not outside.exists()
    assert "outside the sandbox" in result
    assert "--sandbox off" in proc.stderr


def test_sandbox_off_runs_commands_unconfined(home: Path, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    run_execute(home, project, {"command": f"echo x > {outside}"}, "--yes", "--sandbox", "off")
    assert outside.read_text() == "x\n"


def test_config_sets_the_mode_and_a_missing_backend_is_a_config_error(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[sandbox]\nbackend = "seatbelt"\n')
    proc = run_cli(["-p", "hi", "--base-url", "http://127.0.0.1:9", "--api-key", "k"], cwd=project, home=home)
    assert proc.returncode == 2
    assert "sandbox.backend" in proc.stderr and "not available" in proc.stderr
    (home / "config.toml").write_text('[sandbox]\nmode = "everything"\n')
    proc = run_cli(["-p", "hi"], cwd=project, home=home)
    assert proc.returncode == 2 and "'sandbox.mode' must be one of" in proc.stderr


def test_a_sigkilled_agent_takes_its_sandboxed_command_with_it(home: Path, project: Path) -> None:
    command = "touch started; (sleep 2; touch LATE_CHILD) & sleep 2; touch LATE"
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x1")), turns.text("never")]
    with ScriptedModelServer(script) as server:
        proc = subprocess.Popen([*AGENTICA, "-p", "run it", "--yes", *model_args(server)], cwd=project,
                                env=cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while not (project / "started").exists():
                assert time.monotonic() < deadline, "the command never started"
                time.sleep(0.02)
        finally:
            proc.kill()
            proc.communicate(timeout=10)
        time.sleep(3)  # past the moment the command would have touched its files
    assert not (project / "LATE").exists()
    assert not (project / "LATE_CHILD").exists()


@contextmanager
def repl(home: Path, project: Path, server: ScriptedModelServer, *extra: str) -> Iterator[pexpect.spawn]:
    """An interactive session on a pseudo-terminal; left with /exit at its next prompt."""
    child = spawn_agentica(home, project, [*model_args(server), *extra], timeout=20)
    try:
        yield child
        child.expect_exact("❯")
        child.send("/exit\r")
        child.expect(pexpect.EOF, timeout=15)
    finally:
        if child.isalive():
            child.terminate(force=True)


@pytest.mark.parametrize(("flag", "shown"),
                         [((), "sandbox: workspace-write ("), (("--sandbox", "off"), "sandbox: off")])
def test_banner_and_status_show_the_sandbox(home: Path, project: Path, flag: tuple[str, ...], shown: str) -> None:
    with ScriptedModelServer([]) as server, repl(home, project, server, *flag) as child:
        child.expect_exact(shown)  # the banner
        child.expect_exact("❯")
        child.send("/status\r")
        child.expect_exact("permission mode: default")
        child.expect_exact(shown)
        if not flag:
            child.expect_exact(f"writable: {project}")


def test_env_allow_passes_named_variables_and_the_basics_stay(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[sandbox]\nenv_allow = ["DEPLOY_TOKEN"]\n')
    command = 'echo "deploy=$DEPLOY_TOKEN other=$OTHER_TOKEN path=${PATH:+set} home=$HOME term=$TERM lang=$LANG"'
    env = cli_env(home, DEPLOY_TOKEN="dt-123", OTHER_TOKEN="ot-456", HOME=str(project), TERM="xterm", LANG="C.UTF-8")
    _, result = run_execute(home, project, {"command": command}, "--yes", env=env)
    assert f"deploy=dt-123 other= path=set home={project} term=xterm lang=C.UTF-8" in result


def test_the_repl_asks_an_escalation_with_its_reason_and_offers_no_always(home: Path, project: Path,
                                                                         tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    args = {"command": f"touch {outside}", "sandbox": False, "reason": "needs the shared log"}
    script = [turns.tool_calls(turns.call("execute", args, id="x1")), turns.text("ok, not done")]
    with ScriptedModelServer(script) as server:
        with repl(home, project, server, "--permission-mode", "accept-edits") as child:
            child.expect_exact("❯")
            child.send("write the log\r")
            child.expect_exact("runs OUTSIDE the sandbox: needs the shared log")
            child.expect_exact("no, and stop")
            assert "don't ask again" not in child.before
            child.expect_exact("Allow?")  # keys typed before the question reads them are dropped
            child.send("n")
            child.expect_exact("ok, not done")
        requests = server.requests
    assert not outside.exists()
    assert "declined" in tool_results(requests[1])["x1"]


def test_a_network_request_is_refused_where_nobody_can_answer(home: Path, project: Path) -> None:
    with loopback_server() as port:
        args = {"command": connect_command(port), "network": True, "reason": "talk to the test server"}
        proc, result = run_execute(home, project, args, "--yes")
    assert "got hello" not in result and "asked for the network" in result
    assert "network = true under [sandbox]" in proc.stderr


def test_the_repl_asks_for_the_network_with_its_reason_and_only_then_connects(home: Path, project: Path) -> None:
    with loopback_server() as port:
        plain = {"command": connect_command(port)}
        networked = {**plain, "network": True, "reason": "talk to the local test server"}
        script = [turns.tool_calls(turns.call("execute", plain, id="x1")),
                  turns.tool_calls(turns.call("execute", networked, id="x2")), turns.text("connected")]
        with ScriptedModelServer(script) as server:
            with repl(home, project, server, "--permission-mode", "accept-edits") as child:
                child.expect_exact("❯")
                child.send("reach the server\r")  # x1 runs unasked (sandboxed), x2 asks
                child.expect_exact("uses the NETWORK (still sandboxed for files): talk to the local test server")
                child.expect_exact("no, and stop")
                assert "don't ask again" not in child.before
                child.expect_exact("Allow?")  # keys typed before the question reads them are dropped
                child.send("y")
                child.expect_exact("connected")
            requests = server.requests
    first, second = tool_results(requests[1])["x1"], tool_results(requests[2])["x2"]
    assert "got hello" not in first and "network=true and a reason" in first
    assert "got hello" in second
