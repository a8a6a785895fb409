"""`agentica mcp serve` driven by the official `mcp` client, over stdio and streamable HTTP,
against the scripted model server: tools/list, a tools/call whose edit waits on an elicitation
(accepted: the file is written; declined: it is not), agentica_reply continuing the session, and a
client without the elicitation capability refused (fail closed).

Both protocol generations are exercised: a handshake connection (`mode="legacy"`, 2025-11-25:
elicitation/create in the middle of the call) and a 2026-07-28 one (`mode="auto"`: the question
comes back as an InputRequiredResult and the client's retry carries the answer)."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from cli_support import AGENTICA, cli_env, model_args
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from agentica_cli.testing import ScriptedModelServer, turns

EDIT = turns.tool_calls(turns.call("write_file", {"file_path": "hello.txt", "content": "hi from agentica\n"},
                                   id="call_w"))


def _script() -> list[dict[str, Any]]:
    return [EDIT, turns.text("Wrote hello.txt."), turns.text("It says hi.")]


class Answers:
    """An elicitation callback that answers each question with `action`, and keeps the questions."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.questions: list[Any] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params)
        if self.action == "accept":
            return types.ElicitResult(action="accept", content={"always": False})
        return types.ElicitResult(action=self.action)  # type: ignore[arg-type]


def _call_in_process(script: list[dict[str, Any]], prompt: str, project: Path,
                     answers: Answers | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """One `agentica` tool call to an in-process server (the official client, `answers` as its
    elicitation callback; None: a client without the capability), the server closed after it
    (its sessions' SessionEnd, their MCP servers); the call's result and the model's requests."""
    from agentica_cli.mcp_serve.hub import ServeOptions
    from agentica_cli.mcp_serve.server import AgenticaMcpServer

    with ScriptedModelServer(script) as server:
        app = AgenticaMcpServer(ServeOptions(flags={
            "model.base_url": server.base_url, "model.api_key": "test-key", "model.name": "scripted-model"}))

        async def run() -> Any:
            async with Client(app.mcp, elicitation_callback=answers) as client:
                result = await client.call_tool("agentica", {"prompt": prompt, "cwd": str(project)})
            await app.hub.close()
            return result

        return asyncio.run(run()), server.requests


def _stdio(server: ScriptedModelServer, home: Path, project: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=AGENTICA[0], args=[*AGENTICA[1:], "mcp", "serve", *model_args(server), *extra],
                                 env=cli_env(home), cwd=str(project))


@contextmanager
def _http_server(server: ScriptedModelServer, home: Path, project: Path) -> Iterator[str]:
    """`agentica mcp serve --port 0`: the URL it says it listens on (stderr), stopped after."""
    proc = subprocess.Popen([*AGENTICA, "mcp", "serve", "--port", "0", *model_args(server)], cwd=project,
                            env=cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline, seen = time.monotonic() + 30, ""
        assert proc.stderr is not None
        while "listening on " not in seen:
            ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
            line = proc.stderr.readline() if ready else ""
            if not line:
                raise AssertionError(f"the server did not start: {seen!r} (exit {proc.poll()})")
            seen += line
        url = seen.split("listening on ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")  # loopback unless --host says
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def _target(transport: str, server: ScriptedModelServer, home: Path, project: Path) -> Iterator[Any]:
    if transport == "stdio":
        yield _stdio(server, home, project)
    else:
        with _http_server(server, home, project) as url:
            yield url


def _check_protocol(client: Client, mode: str) -> None:
    """legacy: the initialize handshake (2025-11-25); auto: the server offers 2026-07-28."""
    version = client.session.protocol_version
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28"), version


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


@pytest.mark.parametrize(("transport", "mode"), [("stdio", "legacy"), ("http", "auto")])
def test_an_accepted_elicitation_lets_the_edit_run_and_agentica_reply_continues(
        transport: str, mode: str, home: Path, project: Path) -> None:
    answers = Answers("accept")
    steps: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        steps.append(message or "")

    async def run(target: Any) -> tuple[Any, Any, Any, str]:
        async with Client(target, elicitation_callback=answers, mode=mode) as client:
            _check_protocol(client, mode)
            listed = await client.list_tools()
            first = await client.call_tool("agentica", {"prompt": "write a greeting", "cwd": str(project)},
                                           progress_callback=progress)
            written = (project / "hello.txt").read_text() if (project / "hello.txt").exists() else ""
            reply = await client.call_tool("agentica_reply", {"session_id": first.structured_content["session_id"],
                                                              "prompt": "what does it say?"})
            return listed, first, reply, written

    with ScriptedModelServer(_script()) as server, _target(transport, server, home, project) as target:
        listed, first, reply, written = asyncio.run(run(target))
        requests = server.requests
    assert {t.name for t in listed.tools} == {"agentica", "agentica_reply"}
    schema = {t.name: t.input_schema for t in listed.tools}
    assert set(schema["agentica"]["properties"]) == {"prompt", "cwd", "permission_mode", "model"}
    assert schema["agentica"]["required"] == ["prompt"]
    assert set(schema["agentica_reply"]["required"]) == {"session_id", "prompt"}

    (question,) = answers.questions  # one approval, asked as a form elicitation
    assert "write_file on hello.txt" in question.message and "+hi from agentica" in question.message
    assert written == "hi from agentica\n"
    assert not first.is_error
    assert first.structured_content["files_changed"] == ["hello.txt"]
    assert first.structured_content["answer"] == "Wrote hello.txt."
    assert "files changed: hello.txt" in _text(first)
    assert steps == ["model request 1", "running write_file", "model request 2"]  # progress notifications
    # The reply went to the same conversation: the model saw the first turn's history.
    assert _text(reply).startswith("It says hi.")
    assert reply.structured_content["session_id"] == first.structured_content["session_id"]
    history = [m.get("content") for m in requests[2]["messages"]]
    assert "write a greeting" in history and "Wrote hello.txt." in history and history[-1] == "what does it say?"


@pytest.mark.parametrize(("transport", "mode"), [("stdio", "auto"), ("http", "legacy")])
def test_a_declined_elicitation_refuses_the_edit(transport: str, mode: str, home: Path, project: Path) -> None:
    answers = Answers("decline")

    async def run(target: Any) -> Any:
        async with Client(target, elicitation_callback=answers, mode=mode) as client:
            _check_protocol(client, mode)
            return await client.call_tool("agentica", {"prompt": "write a greeting", "cwd": str(project)})

    with ScriptedModelServer(_script()) as server, _target(transport, server, home, project) as target:
        result = asyncio.run(run(target))
        requests = server.requests
    assert len(answers.questions) == 1
    assert not (project / "hello.txt").exists()
    assert result.structured_content["files_changed"] == []
    tool_result = next(m["content"] for m in requests[1]["messages"] if m.get("tool_call_id") == "call_w")
    assert "declined" in tool_result  # the model is told the user said no


def test_a_client_that_cannot_answer_elicitation_gets_approvals_refused(home: Path, project: Path) -> None:
    async def run(target: Any) -> tuple[Any, Any, Any]:
        async with Client(target, mode="legacy") as client:  # no elicitation_callback: no capability declared
            refused = await client.call_tool("agentica", {"prompt": "write a greeting", "cwd": str(project)})
            auto = await client.call_tool("agentica", {"prompt": "x", "cwd": str(project), "permission_mode": "auto"})
            plan = await client.call_tool("agentica", {"prompt": "y", "cwd": str(project), "permission_mode": "plan"})
            return refused, auto, plan

    with ScriptedModelServer([EDIT, turns.text("Could not write."), EDIT, turns.text("Planned.")]) as server:
        refused, auto, plan = asyncio.run(run(_stdio(server, home, project)))
        requests = server.requests
    assert not (project / "hello.txt").exists()
    assert refused.structured_content["refused"] == ["write_file"]
    assert "cannot answer elicitation requests" in _text(refused)
    tool_result = next(m["content"] for m in requests[1]["messages"] if m.get("tool_call_id") == "call_w")
    assert "cannot ask" in tool_result
    # A client may not lift the approvals itself: auto only when the server was started with it.
    assert auto.is_error and "permission mode 'auto' was refused" in _text(auto)
    assert len(requests) == 4  # the refused auto call never reached the model
    # Plan mode refuses the edit by itself: that is not put down to the client's missing capability.
    assert plan.structured_content["refused"] == [] and "cannot answer" not in _text(plan)
    assert "plan" in next(m["content"] for m in requests[3]["messages"] if m.get("tool_call_id") == "call_w")


def test_usage_errors_exit_2_with_one_line(home: Path, project: Path) -> None:
    proc = subprocess.run([*AGENTICA, "mcp", "serve", "--port", "70000"], cwd=project, env=cli_env(home),
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr == "agentica mcp serve: --port 70000: not a port number\n"
    assert os.listdir(project) == ["notes.txt"]


def test_idle_sessions_beyond_the_limit_are_closed_and_a_saved_one_reopens(
        agentica_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.mcp_serve import hub
    from agentica_cli.mcp_serve.server import AgenticaMcpServer

    monkeypatch.setattr(hub, "MAX_LIVE_SESSIONS", 1)
    with ScriptedModelServer([turns.text("one"), turns.text("two"), turns.text("three")]) as server:
        app = AgenticaMcpServer(hub.ServeOptions(flags={
            "model.base_url": server.base_url, "model.api_key": "test-key", "model.name": "scripted-model"}))

        async def run() -> tuple[Any, Any, list[str]]:
            async with Client(app.mcp) as client:  # in process
                first = await client.call_tool("agentica", {"prompt": "first task", "cwd": str(project)})
                await client.call_tool("agentica", {"prompt": "second task", "cwd": str(project)})
                if app.hub.closing:  # the evicted session's close, under way
                    await asyncio.wait(set(app.hub.closing))
                live = list(app.hub.sessions)
                reply = await client.call_tool("agentica_reply", {"session_id": first.structured_content["session_id"],
                                                                  "prompt": "and now?"})
            await app.hub.close()
            return first, reply, live

        first, reply, live = asyncio.run(run())
        requests = server.requests
    first_id = first.structured_content["session_id"]
    assert first_id not in live and len(live) == 1  # the idle first session was closed
    assert reply.structured_content["session_id"] == first_id and reply.structured_content["answer"] == "three"
    history = [m.get("content") for m in requests[2]["messages"]]
    assert "first task" in history and "one" in history and "second task" not in history


def test_files_a_command_changed_are_reported_too(agentica_home: Path, project: Path) -> None:
    answers = Answers("accept")
    script = [turns.tool_calls(turns.call("execute", {"command": "printf made > made.txt"}, id="call_x")),
              turns.text("Made it.")]
    result, _ = _call_in_process(script, "make a file", project, answers)
    assert (project / "made.txt").read_text() == "made"
    assert "printf made > made.txt" in answers.questions[0].message  # the command, asked about
    assert result.structured_content["files_changed"] == ["made.txt"]  # from the turn's checkpoint


def test_a_served_session_has_the_folders_configured_mcp_servers(agentica_home: Path, project: Path) -> None:
    import sys

    demo = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"
    agentica_home.mkdir()
    (agentica_home / "config.toml").write_text(f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{demo}"]\n')
    script = [turns.tool_calls(turns.call("demo__add", {"a": 2, "b": 3}, id="m1")), turns.text("2 + 3 = 5")]
    result, requests = _call_in_process(script, "add", project, Answers("accept"))  # the demo server stops with it
    assert "demo__add" in {t["function"]["name"] for t in requests[0]["tools"]}
    assert next(m["content"] for m in requests[1]["messages"] if m.get("tool_call_id") == "m1") == "5"
    assert result.structured_content["answer"] == "2 + 3 = 5"


def test_a_served_session_runs_its_session_hooks_as_every_front_end_does(agentica_home: Path, project: Path,
                                                                        tmp_path: Path) -> None:
    """A served session is an AppSession: SessionStart's context reaches the first request and
    SessionEnd runs, with the session's id, when the server closes it."""
    import json

    ended = tmp_path / "ended.json"
    agentica_home.mkdir()
    (agentica_home / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo 'The release is on Friday.'"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": f"cat > {ended}"}]}],
    }}))
    result, requests = _call_in_process([turns.text("Noted.")], "when is the release?", project)
    first = requests[0]["messages"][-1]["content"]
    assert first == "when is the release?\n\nThe release is on Friday."
    record = json.loads(ended.read_text())
    assert record["hook_event_name"] == "SessionEnd"
    assert record["session_id"] == result.structured_content["session_id"]


def test_the_question_says_what_always_would_allow_as_the_policy_offers_it(agentica_home: Path, project: Path) -> None:
    """The client is asked the policy's question (app/permissions: the one place "always" is
    offered): an edit's says what "always" allows; a command with network is asked each time."""
    answers = Answers("decline")
    script = [EDIT, turns.tool_calls(turns.call("execute", {"command": "curl -s http://127.0.0.1:9/x",
                                                            "network": True}, id="call_n")),
              turns.text("Both refused.")]
    _call_in_process(script, "edit, then fetch", project, answers)
    edit, command = (q.message for q in answers.questions)
    assert "Checking 'always' also allows file edits in this folder (accept-edits)" in edit
    assert "asked about each time" in command and "Checking 'always'" not in command
    assert not (project / "hello.txt").exists()
