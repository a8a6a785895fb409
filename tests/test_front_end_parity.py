"""The same scenario through the three front ends (the REPL on a pty, `-p` in a subprocess, ACP
driven by an editor client), outcomes compared: the drifts of issue 27, each impossible now that
the application core decides and the front ends only show.

Each test drives the real `agentica` command against the scripted model server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest
from acp import RequestError, text_block
from acp_support import PATIENT_TRANSPORT, EditorClient, editor_session
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


@dataclass
class FrontEnds:
    """The three front ends, each started the way a user starts it, in `project` with `home`,
    against a scripted model server; every test below drives the same scenario through them."""

    home: Path
    project: Path

    def print_run(self, server: ScriptedModelServer, prompt: str, *flags: str) -> subprocess.CompletedProcess[str]:
        """`agentica -p PROMPT FLAGS` in a subprocess."""
        return run_cli(["-p", prompt, *flags, *model_args(server)], cwd=self.project, home=self.home)

    @contextmanager
    def repl(self, server: ScriptedModelServer, *flags: str, columns: int = 120) -> Iterator[pexpect.spawn]:
        """The REPL on a pseudo-terminal; left with Ctrl-D if it still runs when the block ends
        (the block waits for the prompt first), ended whatever happens."""
        child = spawn_agentica(self.home, self.project, [*model_args(server), *flags], columns=columns, timeout=30)
        try:
            yield child
            if child.isalive():
                exit_repl(child)
        finally:
            if child.isalive():
                child.terminate(force=True)

    @staticmethod
    def turn(child: pexpect.spawn, prompt: str, *shown: str) -> None:
        """At the REPL's prompt: type `prompt`, then see each of `shown` in order."""
        child.expect_exact("❯")
        child.send(prompt + "\r")
        for text in shown:
            child.expect_exact(text)

    def editor(self, server: ScriptedModelServer, *prompts: str, answers: tuple[str, ...] = (),
               until: Callable[[EditorClient], Any] | None = None) -> tuple[EditorClient, list[str]]:
        """`agentica acp` driven by an editor client: one new session, each prompt in turn
        (permission questions answered with `answers`), then waiting for `until(client)` if
        given. The client, and the text of the agent's messages for each prompt."""
        client = EditorClient(terminal=False)
        client.answers = list(answers)
        said: list[str] = []

        async def scenario() -> None:
            async with editor_session(client, server, self.project, self.home) as conn:
                session = await conn.new_session(cwd=str(self.project), mcp_servers=[])
                for prompt in prompts:
                    before = len(client.of_kind("agent_message_chunk"))
                    await conn.prompt(session_id=session.session_id, prompt=[text_block(prompt)])
                    said.append("".join(u.content.text for u in client.of_kind("agent_message_chunk")[before:]))
                if until is not None:
                    await client.wait_for(lambda: until(client))

        run(scenario())
        return client, said

    def editor_refusal(self, server: ScriptedModelServer) -> RequestError:
        """The error the editor's session/new gets."""
        async def scenario() -> RequestError:
            async with editor_session(EditorClient(), server, self.project, self.home) as conn:
                with pytest.raises(RequestError) as raised:
                    await conn.new_session(cwd=str(self.project), mcp_servers=[])
            return raised.value

        return run(scenario())


@pytest.fixture
def front_ends(home: Path, project: Path) -> FrontEnds:
    return FrontEnds(home, project)


def _network_confined(tmp_path: Path) -> bool:
    if best_backend() is None:
        return False
    return bool(Sandbox(SandboxPolicy.build("workspace-write", tmp_path)).network_confined)


# -- drift 1: the permission question is the policy's, in every front end ------------------------

def test_drift1_a_network_request_offers_always_nowhere(front_ends: FrontEnds, tmp_path: Path) -> None:
    """A sandboxed command that asks for the network: asked each time with its reason, never with
    "always" (ACP used to offer it, and remembered the grant); -p, which cannot ask, refuses."""
    if not _network_confined(tmp_path):
        pytest.skip("no sandbox backend that keeps the network out here (bubblewrap, Landlock ABI >= 4)")
    note = "uses the NETWORK (still sandboxed for files): talk to the test server"
    with loopback_server() as port:
        args = {"command": connect_command(port), "network": True, "reason": "talk to the test server"}

        def script() -> list[Any]:
            return [turns.tool_calls(turns.call("execute", args, id="x1")), turns.text("done")]

        with ScriptedModelServer(script()) as server, front_ends.repl(server) as child:  # the REPL
            front_ends.turn(child, "reach the server", note, "no, and stop")
            repl_offers_always = "don't ask again" in child.before
            child.expect_exact("Allow?")
            child.send("y")
            child.expect_exact("done")
            child.expect_exact("❯")
        repl_result = tool_results(server.requests[1])["x1"]

        with ScriptedModelServer(script()) as server:  # ACP
            client, _ = front_ends.editor(server, "reach the server", answers=("once",))
            acp_requests = server.requests
        asked, options = client.permission_requests[0]
        acp_note = asked.content[0].content.text

        with ScriptedModelServer(script()) as server:  # -p
            proc = front_ends.print_run(server, "reach the server")
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
    assert policy.apply_answer(call, plain, Answer("always")).granted == "execute: `pytest` commands (this session)"
    assert policy.evaluate(call).kind == "allow"
    assert {str(r) for r in Reason} >= {"network", "escalation", "sensitive", "rule", "egress", "plan", "outside"}


# -- drift 2: a config error is the same message everywhere, never an internal error -------------

@pytest.mark.parametrize(("config", "says"), [
    ('[tools]\nenable = ["no-such-toolkit"]\n', "'tools.enable'"),
    ("[checkpoints]\nkeep_days = -1\n", "'checkpoints.keep_days' must be >= 0, got -1"),
])
def test_drift2_a_config_error_reads_the_same_in_every_front_end(front_ends: FrontEnds, config: str,
                                                                 says: str) -> None:
    (front_ends.home / "config.toml").write_text(config)
    with ScriptedModelServer([turns.text("never asked")]) as server:
        printed = front_ends.print_run(server, "hi")  # -p
        with front_ends.repl(server) as child:  # the REPL
            child.expect(pexpect.EOF)
            child.close()
            repl_screen, repl_code = child.before, child.exitstatus
        error = front_ends.editor_refusal(server)  # ACP
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


def test_drift4_mcp_servers_get_the_work_folder_as_root_in_every_front_end(front_ends: FrontEnds) -> None:
    import sys

    from mcp_repl_support import wait_until_server_ready

    (front_ends.home / "config.toml").write_text(
        f'[mcp_servers.feat]\ncommand = "{sys.executable}"\nargs = ["{FEATURES}"]\nprotocol = "legacy"\n')

    def script() -> list[Any]:
        return [turns.tool_calls(turns.call("feat__list_roots", {}, id="r1")), turns.text("listed")]

    with ScriptedModelServer(script()) as server:  # -p
        printed = front_ends.print_run(server, "list the roots", "--yes")
        assert printed.returncode == 0, printed.stderr
        print_roots = tool_results(server.requests[1])["r1"]

    with ScriptedModelServer(script()) as server, front_ends.repl(server, "--yes", columns=160) as child:  # the REPL
        child.expect_exact("❯")
        wait_until_server_ready(child, "feat", tries=60)
        front_ends.turn(child, "list the roots", "listed")
        child.expect_exact("❯")
    repl_roots = tool_results(server.requests[1])["r1"]

    with ScriptedModelServer(script()) as server:  # ACP
        front_ends.editor(server, "list the roots", answers=("once",))
        acp_roots = tool_results(server.requests[1])["r1"]
    root = front_ends.project.resolve().as_uri()
    assert {"-p": print_roots, "repl": repl_roots, "acp": acp_roots} == {"-p": root, "repl": root, "acp": root}


# -- drift 5: what an untrusted project sets is said by every front end --------------------------

def test_drift5_an_untrusted_projects_commands_are_reported_in_every_front_end(front_ends: FrontEnds) -> None:
    (front_ends.project / ".agentica" / "commands").mkdir(parents=True)
    (front_ends.project / ".agentica" / "commands" / "ship.md").write_text("Ship it.\n")
    with ScriptedModelServer([turns.text("hello"), turns.text("hello")]) as server:
        printed = front_ends.print_run(server, "hi")  # -p
        with front_ends.repl(server) as child:  # the REPL asks
            child.expect_exact("Trust this project? [y/N]")
            repl_said = " ".join(child.before.split())
            child.send("n\r")
            child.expect_exact("❯")
        client, _ = front_ends.editor(server, "hi")  # ACP
    thoughts = "".join(u.content.text for u in client.of_kind("agent_thought_chunk"))
    assert "ignoring this untrusted project's commands (run with --trust to use them)" in printed.stderr
    assert "This project has its own commands" in repl_said
    assert "ignoring this untrusted project's commands (run `agentica --trust` there to use them)" in thoughts


# -- drift 3: one token counter, sub-agents and earlier processes included -----------------------

def _task_script() -> list[Any]:
    """The agent starts a sub-agent (the task tool), which answers; 1300 input tokens in all."""
    task = {"description": "look", "prompt": "Say hi"}
    return [turns.tool_calls(turns.call("task", task, id="t1"), usage={"prompt_tokens": 100, "completion_tokens": 10}),
            turns.text("hi from the sub-agent", usage={"prompt_tokens": 1000, "completion_tokens": 20}),
            turns.text("done", usage={"prompt_tokens": 200, "completion_tokens": 30})]


def test_drift3_cost_counts_sub_agents_and_earlier_processes_in_every_front_end(front_ends: FrontEnds) -> None:
    with ScriptedModelServer(_task_script()) as server:  # -p
        printed = front_ends.print_run(server, "go", "--yes", "--output-format", "json")
    assert printed.returncode == 0, printed.stderr
    print_usage = json.loads(printed.stdout)["usage"]

    def repl_cost(server: ScriptedModelServer, flags: list[str], prompt: str | None) -> str:
        with front_ends.repl(server, *flags, "--yes") as child:
            if prompt is not None:
                front_ends.turn(child, prompt, "done")
            front_ends.turn(child, "/cost")
            child.expect(r"tokens this session: [0-9,]+ in · [0-9,]+ out")
            said = str(child.after)
            child.expect_exact("❯")
        return said

    with ScriptedModelServer(_task_script()) as server:  # the REPL, then --continue in a new process
        repl_said = repl_cost(server, [], "go")
        continued_said = repl_cost(server, ["--continue"], None)

    with ScriptedModelServer(_task_script()) as server:  # ACP
        _, (_, acp_said) = front_ends.editor(server, "go", "/cost", answers=("once", "once", "once"))
    assert (print_usage["input_tokens"], print_usage["output_tokens"]) == (1300, 60)
    expected = "tokens this session: 1,300 in · 60 out"
    assert {"repl": repl_said, "repl --continue": continued_said, "acp": acp_said[:len(expected)]} == {
        "repl": expected, "repl --continue": expected, "acp": expected}


# -- drift 6: one registry of slash commands, one /model ------------------------------------------

def test_drift6_shared_commands_have_one_help_text_in_the_repl_and_the_editor(front_ends: FrontEnds) -> None:
    from agentica_cli.app.commands import COMMANDS, commands_for

    shared = sorted(set(commands_for("tui")) & set(commands_for("acp")))
    assert set(shared) >= {"compact", "model", "tools", "todos", "cost", "undo", "redo"}
    with ScriptedModelServer([turns.text("hello")]) as server:
        with front_ends.repl(server, columns=200) as child:  # the REPL
            front_ends.turn(child, "/help", "keys:")
            repl_help = " ".join(child.before.split())
            child.expect_exact("❯")
        client, _ = front_ends.editor(server, until=lambda c: c.of_kind("available_commands_update"))  # ACP
        update = client.of_kind("available_commands_update")[0]
        editor = {c.name: c.description for c in update.available_commands}
    for name in shared:
        assert editor[name] == COMMANDS[name].help, name
        assert f"/{name}" in repl_help and COMMANDS[name].help in repl_help, name


def test_drift6_a_model_that_cannot_be_built_leaves_the_settings_as_they_were(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.app.commands import switch_model
    from agentica_cli.app.settings.config import load_settings

    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "home"))
    for name in ("AGENTICA_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(tmp_path, {"model.provider": "deepseek", "model.name": "deepseek-chat"}, trusted=False)
    switched = switch_model(settings, "deepseek-reasoner")
    assert not switched.ok and "Could not switch to deepseek-reasoner" in switched.problem
    assert settings.model_name == "deepseek-chat"


@pytest.mark.parametrize(("config", "says"), [
    ('[tools]\nenable = ["no-such-toolkit"]\n', "'tools.enable'"),
    ("[checkpoints]\nkeep_days = -1\n", "'checkpoints.keep_days' must be >= 0, got -1"),
])
def test_drift2_the_mcp_server_front_end_checks_the_config_as_the_others_do(
        home: Path, project: Path, config: str, says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`agentica mcp serve` (a fourth front end) goes through the same start-up checks: its
    sessions refuse the config -p refuses, with the same message."""
    from agentica_cli.mcp_serve.errors import ServeError
    from agentica_cli.mcp_serve.hub import ServeOptions, SessionHub

    (home / "config.toml").write_text(config)
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    printed = run_cli(["-p", "hi", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"], cwd=project, home=home)
    message = next(line for line in printed.stderr.splitlines() if "config error" in line).removeprefix("agentica: ")
    with pytest.raises(ServeError) as raised:  # a served session opens as the others do (AppSession.open)
        asyncio.run(SessionHub(ServeOptions()).create(str(project), None, None))
    assert says in message and str(raised.value) == message


# -- drift 7: one sandbox and one extensions lookup per session ------------------------------------

COUNTING = """
import atexit, os, sys
import agentica_cli.app.extension_setup as extension_setup
import agentica_cli.sandbox.sandbox as sandbox_module
counts = {"sandbox": 0, "extensions": 0}
real_init, real_load = sandbox_module.Sandbox.__init__, extension_setup.load_extensions
def counted_init(self, *args, **kwargs):
    counts["sandbox"] += 1
    real_init(self, *args, **kwargs)
def counted_load(*args, **kwargs):
    counts["extensions"] += 1
    return real_load(*args, **kwargs)
sandbox_module.Sandbox.__init__ = counted_init
extension_setup.load_extensions = counted_load
atexit.register(lambda: open(os.environ["COUNTS_FILE"], "w").write(repr(counts)))
from agentica_cli.cli.app import main
sys.argv[0] = "agentica"
main()
"""


def test_drift7_a_session_builds_its_sandbox_and_finds_its_extensions_once(home: Path, project: Path,
                                                                            tmp_path: Path) -> None:
    """Counted in the real process: -p and ACP (which found the extensions twice: once for the
    agent, once for custom commands) each build one sandbox and look for extensions once."""
    import ast
    import sys

    from acp import spawn_agent_process
    from cli_support import cli_env, scripted_key_file

    (project / ".agentica" / "commands").mkdir(parents=True)
    (project / ".agentica" / "commands" / "hi.md").write_text("Say hi.\n")
    counted = [sys.executable, "-c", COUNTING]

    def counts(name: str) -> dict[str, int]:
        return ast.literal_eval((tmp_path / name).read_text())

    with ScriptedModelServer([turns.text("hello"), turns.text("hello")]) as server:
        import subprocess

        printed = subprocess.run([*counted, "-p", "/hi", "--trust", *model_args(server)], cwd=project,
                                 env=cli_env(home, COUNTS_FILE=str(tmp_path / "print")), stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=60)
        assert printed.returncode == 0, printed.stderr

        client = EditorClient(terminal=False)

        async def acp_scenario() -> None:
            args = ["acp", "--base-url", server.base_url, "--api-key-file", scripted_key_file(), "--model",
                    "scripted-model"]
            env = cli_env(home, COUNTS_FILE=str(tmp_path / "acp"))
            # The counts are written at the agent's exit: give it time to end on its own after stdin
            # closes (the library's 2 s, then SIGTERM, was too short beside two CPU burners).
            async with spawn_agent_process(client, counted[0], *counted[1:], *args, env=env, cwd=str(project),
                                           transport_kwargs=PATIENT_TRANSPORT) as (conn, _proc):
                await conn.initialize(protocol_version=1, client_capabilities=client.capabilities())
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                await conn.prompt(session_id=session.session_id, prompt=[text_block("/hi")])

        run(acp_scenario())
        said = [r["messages"][-1]["content"] for r in server.requests]
    assert said == ["Say hi.", "Say hi."]  # the custom command ran in both (the project is trusted by -p's --trust)
    expected = {"sandbox": 1, "extensions": 1}
    assert {"-p": counts("print"), "acp": counts("acp")} == {"-p": expected, "acp": expected}
