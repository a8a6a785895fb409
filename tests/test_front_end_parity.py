"""The same scenario through the three front ends (the REPL on a pty, `-p` in a subprocess, ACP
driven by an editor client), outcomes compared: the drifts of issue 27, each impossible now that
the application core decides and the front ends only show.

Each test drives the real `agentica` command against the scripted model server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pexpect
import pytest
from acp import RequestError, text_block
from acp_support import EditorClient, editor_session
from cli_support import model_args, run_cli, tool_results
from sandbox_support import connect_command, loopback_server
from screen_support import exit_repl, spawn_agentica

from agentica_cli.sandbox import Sandbox, SandboxPolicy, best_backend
from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


def _network_confined(tmp_path: Path) -> bool:
    if best_backend() is None:
        return False
    return bool(Sandbox(SandboxPolicy.build("workspace-write", tmp_path)).network_confined)


# -- drift 1: the permission question is the policy's, in every front end ------------------------

def test_drift1_a_network_request_offers_always_nowhere(home: Path, project: Path, tmp_path: Path) -> None:
    """A sandboxed command that asks for the network: asked each time with its reason, never with
    "always" (ACP used to offer it, and remembered the grant); -p, which cannot ask, refuses."""
    if not _network_confined(tmp_path):
        pytest.skip("no sandbox backend that keeps the network out here (bubblewrap, Landlock ABI >= 4)")
    note = "uses the NETWORK (still sandboxed for files): talk to the test server"
    with loopback_server() as port:
        args = {"command": connect_command(port), "network": True, "reason": "talk to the test server"}

        def script() -> list[Any]:
            return [turns.tool_calls(turns.call("execute", args, id="x1")), turns.text("done")]

        with ScriptedModelServer(script()) as server:  # the REPL
            child = spawn_agentica(home, project, model_args(server), timeout=30)
            try:
                child.expect_exact("❯")
                child.send("reach the server\r")
                child.expect_exact(note)
                child.expect_exact("no, and stop")
                repl_offers_always = "don't ask again" in child.before
                child.expect_exact("Allow?")
                child.send("y")
                child.expect_exact("done")
                child.expect_exact("❯")
                exit_repl(child)
            finally:
                if child.isalive():
                    child.terminate(force=True)
            repl_result = tool_results(server.requests[1])["x1"]

        client = EditorClient(terminal=False)  # ACP
        client.answers = ["once"]

        async def acp_scenario() -> list[dict[str, Any]]:
            with ScriptedModelServer(script()) as server:
                async with editor_session(client, server, project, home) as conn:
                    session = await conn.new_session(cwd=str(project), mcp_servers=[])
                    await conn.prompt(session_id=session.session_id, prompt=[text_block("reach the server")])
                return server.requests

        acp_requests = run(acp_scenario())
        asked, options = client.permission_requests[0]
        acp_note = asked.content[0].content.text

        with ScriptedModelServer(script()) as server:  # -p
            proc = run_cli(["-p", "reach the server", *model_args(server)], cwd=project, home=home)
            print_result = tool_results(server.requests[1])["x1"]

    assert {"repl": repl_offers_always, "acp": "allow_always" in [o.kind for o in options]} == {
        "repl": False, "acp": False}
    assert acp_note == note
    assert "got hello" in repl_result and "got hello" in tool_results(acp_requests[1])["x1"]
    assert proc.returncode == 0, proc.stderr
    assert "got hello" not in print_result and "asked for the network" in print_result
    assert "network = true under [sandbox]" in proc.stderr


def test_drift1_an_always_the_question_did_not_offer_grants_nothing(tmp_path: Path) -> None:
    """The guard is the policy's: an "always" answer (a front end's bug, an editor sending an
    option it was not given) to a question that offered none grants nothing."""
    from agentica_cli.app.permissions.approvals import ASKED_EVERY_TIME, Answer, PermissionPolicy, Reason, Verdict
    from agentica_cli.tools.base import Function, FunctionCall

    def execute(command: str) -> str:
        """Run a command.

        Args:
            command: the command
        """
        return "ok"

    call = FunctionCall(Function.from_callable(execute, is_destructive=True), "c1", {"command": "pytest -q"})
    assert call.parse_arguments()
    policy = PermissionPolicy("default", tmp_path)
    for reason in ASKED_EVERY_TIME:
        verdict = Verdict("ask", why=reason, note="why")
        assert policy.question(call, verdict).always is None
        settled = policy.apply_answer(call, verdict, Answer("always"))
        assert settled.decision.allowed and settled.granted is None
    assert policy.grants == []
    plain = Verdict("ask", why=Reason.PLAIN)
    assert policy.question(call, plain).always == "`pytest` commands"
    assert policy.apply_answer(call, plain, Answer("always")).granted == "execute: `pytest` commands"
    assert policy.evaluate(call).kind == "allow"
    assert {str(r) for r in Reason} >= {"network", "escalation", "sensitive", "rule", "egress", "plan", "outside"}


# -- drift 2: a config error is the same message everywhere, never an internal error -------------

@pytest.mark.parametrize(("config", "says"), [
    ('[tools]\nenable = ["no-such-toolkit"]\n', "'tools.enable'"),
    ("[checkpoints]\nkeep_days = -1\n", "'checkpoints.keep_days' must be >= 0, got -1"),
])
def test_drift2_a_config_error_reads_the_same_in_every_front_end(home: Path, project: Path, config: str,
                                                                 says: str) -> None:
    (home / "config.toml").write_text(config)
    with ScriptedModelServer([turns.text("never asked")]) as server:
        printed = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)  # -p
        child = spawn_agentica(home, project, model_args(server), timeout=30)  # the REPL
        child.expect(pexpect.EOF)
        child.close()
        repl_screen, repl_code = child.before, child.exitstatus

        async def acp_scenario() -> RequestError:
            async with editor_session(EditorClient(), server, project, home) as conn:
                with pytest.raises(RequestError) as raised:
                    await conn.new_session(cwd=str(project), mcp_servers=[])
            return raised.value

        error = run(acp_scenario())
        asked = len(server.requests)
    assert asked == 0
    line = next(line for line in printed.stderr.splitlines() if "config error" in line)
    message = line.removeprefix("agentica: ")
    assert says in message
    assert (printed.returncode, repl_code) == (2, 2)
    assert message in " ".join(repl_screen.split())
    assert error.code == -32602  # invalid params, not -32603 "Internal error" with a traceback
    assert (error.data or {}).get("message") == message


# -- drift 4: MCP servers get the same roots from every front end --------------------------------

FEATURES = Path(__file__).resolve().parent / "mcp_servers" / "features_server.py"


def test_drift4_mcp_servers_get_the_work_folder_as_root_in_every_front_end(home: Path, project: Path) -> None:
    import sys

    from mcp_repl_support import wait_until_server_ready

    (home / "config.toml").write_text(
        f'[mcp_servers.feat]\ncommand = "{sys.executable}"\nargs = ["{FEATURES}"]\nprotocol = "legacy"\n')

    def script() -> list[Any]:
        return [turns.tool_calls(turns.call("feat__list_roots", {}, id="r1")), turns.text("listed")]

    with ScriptedModelServer(script()) as server:  # -p
        printed = run_cli(["-p", "list the roots", "--yes", *model_args(server)], cwd=project, home=home)
        assert printed.returncode == 0, printed.stderr
        print_roots = tool_results(server.requests[1])["r1"]

    with ScriptedModelServer(script()) as server:  # the REPL
        child = spawn_agentica(home, project, [*model_args(server), "--yes"], columns=160, timeout=30)
        try:
            child.expect_exact("❯")
            wait_until_server_ready(child, "feat", tries=60)
            child.expect_exact("❯")
            child.send("list the roots\r")
            child.expect_exact("listed")
            child.expect_exact("❯")
            exit_repl(child)
        finally:
            if child.isalive():
                child.terminate(force=True)
        repl_roots = tool_results(server.requests[1])["r1"]

    client = EditorClient(terminal=False)  # ACP
    client.answers = ["once"]

    async def acp_scenario() -> str:
        with ScriptedModelServer(script()) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                await conn.prompt(session_id=session.session_id, prompt=[text_block("list the roots")])
            return tool_results(server.requests[1])["r1"]

    acp_roots = run(acp_scenario())
    root = project.resolve().as_uri()
    assert {"-p": print_roots, "repl": repl_roots, "acp": acp_roots} == {"-p": root, "repl": root, "acp": root}


# -- drift 5: what an untrusted project sets is said by every front end --------------------------

def test_drift5_an_untrusted_projects_commands_are_reported_in_every_front_end(home: Path, project: Path) -> None:
    (project / ".agentica" / "commands").mkdir(parents=True)
    (project / ".agentica" / "commands" / "ship.md").write_text("Ship it.\n")
    with ScriptedModelServer([turns.text("hello"), turns.text("hello")]) as server:
        printed = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)

        child = spawn_agentica(home, project, model_args(server), timeout=30)  # the REPL asks
        try:
            child.expect_exact("Trust this project? [y/N]")
            repl_said = " ".join(child.before.split())
            child.send("n\r")
            child.expect_exact("❯")
            exit_repl(child)
        finally:
            if child.isalive():
                child.terminate(force=True)

        client = EditorClient(terminal=False)

        async def acp_scenario() -> None:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])

        run(acp_scenario())
    thoughts = "".join(u.content.text for u in client.of_kind("agent_thought_chunk"))
    assert "ignoring this untrusted project's commands (run with --trust to use them)" in printed.stderr
    assert "This project has its own commands" in repl_said
    assert "ignoring this untrusted project's commands (run `agentica --trust` there to use them)" in thoughts
