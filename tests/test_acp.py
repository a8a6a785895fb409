"""`agentica acp` end to end: the real command in a subprocess, driven by the ACP SDK's client
side as an editor drives it, against the scripted model server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import image_block, resource_block, text_block
from acp.schema import TextResourceContents
from acp_support import EditorClient, editor_session, message_text
from cli_support import last_user_message, tool_results

from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello from the disk\n")
    return path


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


def test_a_prompt_reads_edits_with_permission_runs_a_command_and_writes_a_plan(home: Path, project: Path) -> None:
    notes = str(project / "notes.txt")
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="c1")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "notes.txt", "old_string": "from the buffer",
                                                  "new_string": "from the agent"}, id="c2")),
        turns.tool_calls(turns.call("execute", {"command": "echo ran-in-the-terminal"}, id="c3")),
        turns.tool_calls(turns.call("write_todos", {"todos": [
            {"content": "Fix the notes", "status": "completed"},
            {"content": "Run the tests", "status": "in_progress"},
        ]}, id="c4")),
        turns.text("All done."),
    ]
    client = EditorClient()
    client.buffers[notes] = "hello from the buffer\n"  # unsaved in the editor; the disk says otherwise
    client.answers = ["once", "once"]

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                response = await conn.prompt(session_id=session.session_id, prompt=[text_block("fix the notes")])
                await client.wait_for(lambda: client.of_kind("available_commands_update"))
            return session, response, server.requests

    session, response, requests = run(scenario())
    sid = session.session_id
    assert response.stop_reason == "end_turn"
    assert session.modes.current_mode_id == "default"
    assert {m.id for m in session.modes.available_modes} >= {"default", "accept-edits", "plan"}
    assert session.config_options[0].id == "model"
    assert session.config_options[0].current_value == "scripted-model"

    # The model saw the editor's buffer, not the file on disk.
    assert "hello from the buffer" in tool_results(requests[1])["c1"]
    assert notes in client.fs_reads
    # The edit asked once, showing the diff; it landed in the editor, not on disk.
    assert len(client.permission_requests) == 2
    asked, options = client.permission_requests[0]
    assert asked.tool_call_id == "c2" and asked.kind == "edit"
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    diff = asked.content[0]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff", notes, "hello from the buffer\n", "hello from the agent\n")
    assert client.fs_writes == [(notes, "hello from the agent\n")]
    assert (project / "notes.txt").read_text() == "hello from the disk\n"
    assert tool_results(requests[2])["c2"].startswith("Edited notes.txt: 1 replacement")

    starts = {u.tool_call_id: u for u in client.of_kind("tool_call")}
    assert {k: u.kind for k, u in starts.items()} == {"c1": "read", "c2": "edit", "c3": "execute", "c4": "think"}
    assert starts["c1"].locations[0].path == notes
    assert (starts["c1"].status, starts["c2"].status) == ("in_progress", "pending")  # the edit waits for the answer
    assert starts["c3"].title == "Run `echo ran-in-the-terminal`"
    finals = {u.tool_call_id: u for u in client.of_kind("tool_call_update") if u.status in ("completed", "failed")}
    assert {k: u.status for k, u in finals.items()} == dict.fromkeys(("c1", "c2", "c3", "c4"), "completed")
    edit_diff = finals["c2"].content[0]
    assert (edit_diff.type, edit_diff.old_text, edit_diff.new_text) == (
        "diff", "hello from the buffer\n", "hello from the agent\n")

    # The command ran in an editor terminal, shown in the tool call; its output reached the model.
    command, args, cwd = client.terminal_commands[0]
    assert command == "env" and args[0] == "-i" and args[-1] == "echo ran-in-the-terminal"
    assert cwd == str(project)
    from agentica_cli.app.sandbox_settings import sandbox_for
    from agentica_cli.app.settings.config import load_settings

    confined = sandbox_for(load_settings(project, {}, trusted=False), project, []).confines
    program = next(a for a in args[1:] if "=" not in a)  # after `-i` and the environment
    assert (Path(program).name != "bash") == confined  # wrapped by the OS sandbox whenever it confines
    assert not any(a.startswith("AGENTICA_API_KEY=") or "test-key" in a for a in args)
    assert finals["c3"].content[0].type == "terminal"
    assert "ran-in-the-terminal" in tool_results(requests[3])["c3"]

    plans = client.of_kind("plan")
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("Fix the notes", "completed"), ("Run the tests", "in_progress")]
    assert message_text(client, sid) == "All done."
    commands = {c.name for c in client.of_kind("available_commands_update")[0].available_commands}
    assert {"compact", "model", "mode"} <= commands
    saved = home / "sessions" / f"{sid}.jsonl"
    assert "fix the notes" in saved.read_text()


def test_plan_mode_refuses_the_edit_without_asking(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": "new.txt", "content": "x\n"}, id="w1")),
        turns.text("Plan: create new.txt."),
    ]
    client = EditorClient(fs=False, terminal=False)

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
                response = await conn.prompt(session_id=session.session_id, prompt=[text_block("add new.txt")])
            return response, server.requests

    response, requests = run(scenario())
    assert response.stop_reason == "end_turn"
    assert client.permission_requests == []
    assert not (project / "new.txt").exists()
    assert "Plan mode is on" in requests[0]["messages"][0]["content"]  # told up front, in the system prompt
    assert "Plan mode is on: 'write_file' is not a read-only tool" in tool_results(requests[1])["w1"]
    final = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "w1"][-1]
    assert final.status == "failed"


def test_cancel_mid_turn_then_the_session_goes_on(home: Path, project: Path) -> None:
    script = [turns.hang(limit=30), turns.text("Back again.")]
    client = EditorClient()

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                sid = session.session_id
                turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("take forever")]))
                while not server.requests:  # the model has the request: the turn is under way
                    await asyncio.sleep(0.01)
                await conn.cancel(session_id=sid)
                cancelled = await turn
                again = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
            return cancelled, again, server.requests

    cancelled, again, requests = run(scenario())
    assert cancelled.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn"
    assert message_text(client) == "Back again."
    roles = [(m["role"], m.get("content")) for m in requests[1]["messages"][1:]]
    assert roles[0] == ("user", "take forever")
    assert roles[1][0] == "assistant" and "interrupted" in roles[1][1]
    assert roles[2] == ("user", "and now?")


def test_load_replays_a_saved_session_and_continues_it_with_images_and_context(home: Path, project: Path,
                                                                                monkeypatch) -> None:
    from agentica_cli.app.sessions import SessionStore

    store = SessionStore(home / "sessions")
    saved = store.create(project, "scripted-model")
    for message in [
        {"role": "user", "content": "what do the notes say?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "r1", "type": "function", "function": {
            "name": "read_file", "arguments": json.dumps({"file_path": "notes.txt"})}}]},
        {"role": "tool", "tool_call_id": "r1", "content": "     1\thello from the disk"},
        {"role": "assistant", "content": "They say hello."},
    ]:
        saved.append(message)
    saved.close()
    client = EditorClient()
    png = "iVBORw0KGgo="

    async def scenario():
        with ScriptedModelServer([turns.text("Still hello.")]) as server:
            async with editor_session(client, server, project, home) as conn:
                await conn.load_session(cwd=str(project), session_id=saved.id, mcp_servers=[])
                replayed = len(client.updates)
                response = await conn.prompt(session_id=saved.id, prompt=[
                    text_block("and this picture?"),
                    image_block(png, "image/png"),
                    resource_block(TextResourceContents(uri=f"file://{project}/notes.txt", text="ctx line")),
                ])
            return replayed, response, server.requests

    replayed, response, requests = run(scenario())
    replay = [u for _, _, u in client.updates[:replayed]]
    assert [u.session_update for u in replay] == ["user_message_chunk", "tool_call", "agent_message_chunk"]
    assert replay[0].content.text == "what do the notes say?"
    assert (replay[1].tool_call_id, replay[1].kind, replay[1].status) == ("r1", "read", "completed")
    assert replay[2].content.text == "They say hello."
    assert response.stop_reason == "end_turn"
    messages = requests[0]["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    parts = messages[-1]["content"]
    assert parts[0]["type"] == "text" and "and this picture?" in parts[0]["text"] and "ctx line" in parts[0]["text"]
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}
    assert "and this picture?" in last_user_message(requests[0])


def test_allow_always_grants_commands_and_edits_and_the_editor_picks_the_model(home: Path, project: Path) -> None:
    from acp.schema import McpServerStdio
    from mcp_servers.support import DEMO_SERVER, PYTHON

    script = [
        turns.tool_calls(turns.call("execute", {"command": "printf one"}, id="e1")),
        turns.tool_calls(turns.call("execute", {"command": "printf two"}, id="e2")),
        turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "a\n"}, id="w1")),
        turns.tool_calls(turns.call("write_file", {"file_path": "b.txt", "content": "b\n"}, id="w2"),
                         turns.call("demo__echo", {"text": "via the editor's MCP server"}, id="m1")),
        turns.text("Done."),
    ]
    client = EditorClient(fs=False, terminal=False)  # no editor fs or terminal: the disk, local commands
    client.answers = ["always", "always"]

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home, "--sandbox", "off") as conn:
                demo = McpServerStdio(name="demo", command=PYTHON, args=[str(DEMO_SERVER)], env=[])
                session = await conn.new_session(cwd=str(project), mcp_servers=[demo])
                sid = session.session_id
                picked = await conn.set_config_option(config_id="model", session_id=sid, value="other-model")
                response = await conn.prompt(session_id=sid, prompt=[text_block("make files")])
                listed = await conn.list_sessions(cwd=str(project))
            return sid, picked, response, listed, server.requests

    sid, picked, response, listed, requests = run(scenario())
    assert response.stop_reason == "end_turn"
    assert picked.config_options[0].current_value == "other-model"
    assert {r["model"] for r in requests} == {"other-model"}
    assert len(client.permission_requests) == 2  # e2 and w2 ran on the grants
    (first, first_options), (edit, _) = client.permission_requests
    assert first.tool_call_id == "e1"
    assert [o.name for o in first_options if o.kind == "allow_always"] == ["Always allow `printf` commands"]
    assert edit.tool_call_id == "w1" and edit.content[0].old_text is None  # a new file
    assert [u.current_mode_id for u in client.of_kind("current_mode_update")] == ["accept-edits"]
    assert (project / "a.txt").read_text() == "a\n" and (project / "b.txt").read_text() == "b\n"
    results = tool_results(requests[4])
    assert "one" in tool_results(requests[1])["e1"] and "two" in tool_results(requests[2])["e2"]
    assert results["m1"] == "via the editor's MCP server"
    finals = {u.tool_call_id: u for u in client.of_kind("tool_call_update") if u.status == "completed"}
    assert "two" in finals["e2"].content[0].content.text  # a local command's output, in the tool call
    live = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "e1" and u.status == "in_progress"]
    assert any(u.content and "one" in u.content[0].content.text for u in live)  # shown while it ran
    assert sid in [s.session_id for s in listed.sessions]


def test_cancel_while_the_editor_asks_for_permission(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("write_file", {"file_path": "x.txt", "content": "x"}, id="w1"))]
    client = EditorClient(fs=False)
    client.answers = ["cancel"]

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])

                async def editor_cancels(tool_call):  # the user presses stop while the question is open
                    await conn.cancel(session_id=session.session_id)

                client.on_permission = editor_cancels
                return await conn.prompt(session_id=session.session_id, prompt=[text_block("write x")])

    response = run(scenario())
    assert response.stop_reason == "cancelled"
    assert not (project / "x.txt").exists()


def test_without_an_api_key_sessions_need_authentication(home: Path, project: Path) -> None:
    from acp import RequestError, spawn_agent_process
    from acp.schema import ClientCapabilities
    from acp_support import PATIENT_TRANSPORT, agent_env
    from cli_support import AGENTICA

    async def scenario():
        client = EditorClient()
        async with spawn_agent_process(client, AGENTICA[0], *AGENTICA[1:], "acp", env=agent_env(home),
                                       cwd=str(project), transport_kwargs=PATIENT_TRANSPORT) as (conn, _):
            hello = await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
            with pytest.raises(RequestError) as refused:
                await conn.new_session(cwd=str(project), mcp_servers=[])
            return hello, refused.value

    hello, refused = run(scenario())
    assert hello.agent_capabilities.load_session is True
    assert hello.agent_capabilities.prompt_capabilities.image is True
    assert hello.auth_methods[0].vars[0].name == "AGENTICA_API_KEY"
    assert refused.code == RequestError.auth_required().code
    assert "no API key configured" in str(refused.data)


def test_custom_commands_are_offered_and_expand_with_their_model(home: Path, project: Path) -> None:
    commands = home / "commands"
    commands.mkdir()
    (commands / "review.md").write_text(
        "---\ndescription: review a file\nargument-hint: FILE\nmodel: review-model\n---\n"
        "Review $1 for bugs and say what you find.\n")
    script = [turns.text("Looks fine."), turns.text("Plain again.")]
    client = EditorClient(fs=False, terminal=False)

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                first = await conn.prompt(session_id=session.session_id, prompt=[text_block("/review notes.txt")])
                second = await conn.prompt(session_id=session.session_id, prompt=[text_block("and now?")])
                await client.wait_for(lambda: client.of_kind("available_commands_update"))
            return first, second, server.requests

    first, second, requests = run(scenario())
    assert first.stop_reason == second.stop_reason == "end_turn"
    offered = {c.name: c for c in client.of_kind("available_commands_update")[0].available_commands}
    assert offered["review"].description == "review a file"
    assert {"compact", "model", "mode"} <= offered.keys()
    assert last_user_message(requests[0]) == "Review notes.txt for bugs and say what you find."
    assert requests[0]["model"] == "review-model"  # the command's model, for its turn only
    assert requests[1]["model"] != "review-model"


def test_requests_from_a_file_are_answered_into_a_file_and_the_end_of_the_file_ends_it(home: Path, project: Path,
                                                                                      tmp_path: Path) -> None:
    # A script's `agentica acp < requests.jsonl > replies.jsonl`: regular files, which asyncio's
    # pipe transports refuse; they are read on a thread and written with blocking writes.
    import subprocess

    from acp_support import agent_env
    from cli_support import AGENTICA, scripted_key_file

    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(m) + "\n" for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(project), "mcpServers": []}},
    ]))
    replies = tmp_path / "replies.jsonl"
    with ScriptedModelServer([]) as server, requests.open("rb") as stdin, replies.open("wb") as stdout:
        done = subprocess.run([*AGENTICA, "acp", "--base-url", server.base_url, "--api-key-file", scripted_key_file()],
                              stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=agent_env(home), cwd=project,
                              timeout=60)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, replies.read_text().splitlines())}
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[2]["result"]["sessionId"]


def test_stdin_at_dev_null_ends_the_server_at_once(home: Path, project: Path) -> None:
    # epoll refuses /dev/null, so it is read on the thread that reads files: its end is the end.
    import subprocess

    from acp_support import agent_env
    from cli_support import AGENTICA

    done = subprocess.run([*AGENTICA, "acp"], stdin=subprocess.DEVNULL, capture_output=True, env=agent_env(home),
                          cwd=project, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
