"""The Claude protocol's parts in process: the control channel's requests both ways (answers,
errors, cancellation, stdin's end), stdin lines sorted into control and user messages, and
tool inputs mapped between Claude's names and ours."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentica_cli.headless.claude_protocol.channel import (
    ControlChannel,
    ControlError,
    ControlLine,
    SdkUserMessage,
    decode,
)
from agentica_cli.headless.claude_protocol.tool_names import claude, claude_input, our_input, ours
from agentica_cli.headless.stream_input import InputError


def test_a_request_gets_its_answer_and_an_error_answer_raises() -> None:
    async def main() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        channel = ControlChannel(sent.append)
        first = asyncio.create_task(channel.request({"subtype": "can_use_tool", "tool_name": "Write"}))
        second = asyncio.create_task(channel.request({"subtype": "hook_callback", "callback_id": "hook_0"}))
        await asyncio.sleep(0)
        ids = [line["request_id"] for line in sent]
        channel.answer({"type": "control_response", "response": {"subtype": "error", "request_id": ids[1],
                                                                 "error": "callback raised"}})
        channel.answer({"type": "control_response", "response": {"subtype": "success", "request_id": ids[0],
                                                                 "response": {"behavior": "allow"}}})
        with pytest.raises(ControlError, match="callback raised"):
            await second
        return sent, await first

    sent, answer = asyncio.run(main())
    assert answer == {"behavior": "allow"}
    assert [line["type"] for line in sent] == ["control_request", "control_request"]
    assert len({line["request_id"] for line in sent}) == 2


def test_a_cancelled_request_tells_the_sdk_and_stdin_closing_fails_the_rest() -> None:
    async def main() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        channel = ControlChannel(sent.append)
        asked = asyncio.create_task(channel.request({"subtype": "can_use_tool"}))
        waiting = asyncio.create_task(channel.request({"subtype": "mcp_message"}))
        await asyncio.sleep(0)
        asked.cancel()  # an interrupted turn
        with pytest.raises(asyncio.CancelledError):
            await asked
        channel.close("the SDK closed agentica's stdin")
        with pytest.raises(ControlError, match="closed"):
            await waiting
        with pytest.raises(ControlError):
            await channel.request({"subtype": "can_use_tool"})  # nothing can answer any more
        return sent

    sent = asyncio.run(main())
    assert sent[2] == {"type": "control_cancel_request", "request_id": sent[0]["request_id"]}
    assert len(sent) == 3


def test_stdin_lines_are_control_messages_user_messages_or_errors() -> None:
    control = decode(json.dumps({"type": "control_request", "request_id": "req_1",
                                 "request": {"subtype": "interrupt"}}).encode(), 1)
    assert isinstance(control, ControlLine) and control.kind == "control_request"
    user = decode(json.dumps({"type": "user", "session_id": "", "parent_tool_use_id": None,
                              "message": {"role": "user", "content": "hi"}}).encode(), 2)
    assert isinstance(user, SdkUserMessage) and user.text == "hi" and not user.verbatim
    verbatim = decode(json.dumps({"type": "user", "client_composed": True,
                                  "message": {"role": "user", "content": "/greet Ada"}}).encode(), 5)
    assert isinstance(verbatim, SdkUserMessage) and verbatim.verbatim  # verbatim_prompts: no command run
    assert isinstance(decode(b"not json", 3), InputError)
    assert decode(b"   ", 4) is None


@pytest.mark.parametrize(("ours_name", "args", "wire"), [
    ("execute", {"command": "ls", "timeout": 30, "sandbox": True, "network": False, "reason": "",
                 "background": True}, {"command": "ls", "timeout": 30000, "run_in_background": True}),
    ("execute", {"command": "ls", "timeout": 120, "sandbox": True, "network": False, "reason": "",
                 "background": False}, {"command": "ls"}),
    ("grep", {"pattern": "x", "ignore_case": True, "context": 2, "max_results": 5},
     {"pattern": "x", "-i": True, "-C": 2, "head_limit": 5}),
    ("write_file", {"file_path": "a", "content": "b"}, {"file_path": "a", "content": "b"}),
])
def test_tool_inputs_map_both_ways(ours_name: str, args: dict[str, Any], wire: dict[str, Any]) -> None:
    assert claude_input(ours_name, args) == wire
    back = our_input(ours_name, wire)
    assert {k: v for k, v in back.items()} == {k: v for k, v in args.items() if k in back}


def test_tool_names_map_both_ways() -> None:
    pairs = {"Bash": "execute", "Read": "read_file", "Write": "write_file", "Edit": "edit_file", "Grep": "grep",
             "Glob": "glob", "Task": "task", "TodoWrite": "write_todos", "WebFetch": "fetch_url",
             "WebSearch": "web_search", "mcp__calc__add": "calc__add"}
    for wire, name in pairs.items():
        assert ours(wire) == name and claude(name) == wire
