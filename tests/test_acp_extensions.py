"""`agentica acp` and the user's extensions, driven by the SDK's client side as an editor:
SessionStart when the session opens, sub-agents reading the editor's buffers, /undo and /redo
through the editor, a custom command keeping the prompt's images."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from acp import image_block, text_block
from acp_support import EditorClient, editor_session, message_text
from cli_support import tool_results

from agentica_cli.testing import ScriptedModelServer, turns

PNG = "iVBORw0KGgo="


def records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


async def wait_for_records(path: Path, count: int, timeout: float = 30) -> list[dict]:
    deadline = time.monotonic() + timeout
    while len(seen := records(path)) < count:
        assert time.monotonic() < deadline, f"only {seen}"
        await asyncio.sleep(0.05)
    return seen


def test_session_start_sub_agent_buffers_custom_command_images_and_undo_redo(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notes = str(project / "notes.txt")
    (project / "notes.txt").write_text("hello from the disk\n")
    log = tmp_path / "hooks.jsonl"
    (home / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": f"{{ cat; echo; }} >> {log}"}]}]}}))
    (home / "commands").mkdir()
    (home / "commands/look.md").write_text("Look at $1 and the picture. Branch: !`printf on-main`")
    script = [
        turns.tool_calls(turns.call("task", {"description": "read the notes", "prompt": "Read notes.txt"}, id="t1")),
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="s1")),  # the sub-agent
        turns.text("The notes say hello from the buffer."),
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "notes.txt", "old_string": "from the buffer",
                                                  "new_string": "from the agent"}, id="e1")),
        turns.text("Edited."),
    ]
    client = EditorClient(terminal=False)
    client.buffers[notes] = "hello from the buffer\n"  # unsaved in the editor
    client.answers = ["once", "once"]  # the command's !`printf`, then the edit

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                sid = session.session_id
                started = await wait_for_records(log, 1)  # no prompt yet: opening the session fired it
                first = await conn.prompt(session_id=sid, prompt=[text_block("/look notes"),
                                                                  image_block(PNG, "image/png")])
                after_edit = client.buffers[notes]
                undone = await conn.prompt(session_id=sid, prompt=[text_block("/undo")])
                after_undo = client.buffers[notes]
                redone = await conn.prompt(session_id=sid, prompt=[text_block("/redo")])
                await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
                resumed = await wait_for_records(log, 2)
            return sid, started, first, after_edit, undone, after_undo, redone, resumed, server.requests

    sid, started, first, after_edit, undone, after_undo, redone, resumed, requests = asyncio.run(
        asyncio.wait_for(scenario(), 90))
    assert (started[0]["source"], started[0]["session_id"]) == ("startup", sid)
    assert (resumed[1]["source"], resumed[1]["session_id"]) == ("resume", sid)
    assert first.stop_reason == undone.stop_reason == redone.stop_reason == "end_turn"
    # The custom command's text replaced the typed one; the image stayed with it.
    parts = requests[0]["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": "Look at notes and the picture. Branch: on-main"}
    asked, _ = client.permission_requests[0]  # the !`command` was asked about through the editor
    assert asked.raw_input == {"command": "printf on-main"} and asked.kind == "execute"
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    # The sub-agent read the editor's buffer, not the disk.
    assert "hello from the buffer" in tool_results(requests[2])["s1"]
    assert client.fs_reads.count(notes) >= 2
    # /undo put the buffer back through the editor; /redo re-applied the edit.
    assert after_edit == "hello from the agent\n"
    assert after_undo == "hello from the buffer\n"
    assert client.buffers[notes] == "hello from the agent\n"
    said = message_text(client, sid)
    assert f"Undid turn 1 (/look notes): 1 file(s)\n- {notes}" in said
    assert f"Redid turn 1 (/look notes): 1 file(s)\n- {notes}" in said
    assert (project / "notes.txt").read_text() == "hello from the disk\n"  # never written to disk
    assert len(requests) == 6  # /undo and /redo are ours, not the model's


def test_undo_without_the_editors_files_restores_the_disk_and_respects_later_changes(home: Path,
                                                                                    tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    target = project / "notes.txt"
    target.write_text("hello from the disk\n")
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "notes.txt", "old_string": "from the disk",
                                                  "new_string": "from the agent"}, id="e1")),
        turns.text("Edited."),
    ]
    client = EditorClient(fs=False, terminal=False)
    client.answers = ["once"]

    async def scenario():
        with ScriptedModelServer(script) as server:
            async with editor_session(client, server, project, home) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                sid = session.session_id
                await conn.prompt(session_id=sid, prompt=[text_block("change the notes")])
                target.write_text("hello from the agent\nand the user\n")  # changed since, outside the agent
                await conn.prompt(session_id=sid, prompt=[text_block("/undo")])
                kept = target.read_text()
                await conn.prompt(session_id=sid, prompt=[text_block("/undo force")])
                await client.wait_for(lambda: client.of_kind("available_commands_update"))
            return sid, kept

    sid, kept = asyncio.run(asyncio.wait_for(scenario(), 90))
    said = message_text(client, sid)
    assert "Changed since the agent's edits:\n- notes.txt\nNothing was changed; `/undo force`" in said
    assert kept == "hello from the agent\nand the user\n"
    assert "Undid turn 1 (change the notes): 1 file(s)\n- notes.txt" in said
    assert target.read_text() == "hello from the disk\n"
    offered = {c.name for c in client.of_kind("available_commands_update")[0].available_commands}
    assert {"undo", "redo"} <= offered
