"""Programs written for the Claude Agent SDK run on agentica: the real `claude-agent-sdk`
package drives the real `agentica` command (`ClaudeAgentOptions(cli_path=...)`) against the
scripted model server on 127.0.0.1. One SDK session per test; sdk_support.no_real_claude keeps
the SDK from ever running its bundled Claude Code or a `claude` on PATH."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import SCRIPT, scripted_key_file, tool_results

from agentica_cli.testing import ScriptedModelServer, turns

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a test dependency (pip install -e .[test])")
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from sdk_support import no_real_claude  # noqa: E402, F401  (autouse: the SDK never runs Claude Code itself)

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed `agentica` script as cli_path")


def options(server: ScriptedModelServer, project: Path, home: Path, **extra: Any) -> ClaudeAgentOptions:
    """What a program changes to run on agentica: cli_path, and where the model is."""
    stderr: list[str] = []
    extra.setdefault("stderr", stderr.append)
    return ClaudeAgentOptions(
        cli_path=str(SCRIPT), cwd=str(project), model=extra.pop("model", "scripted-model"),
        env={"AGENTICA_HOME": str(home), "NO_COLOR": "1"},
        extra_args={"base-url": server.base_url, "api-key-file": scripted_key_file()},
        **extra,
    )


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def response(client: ClaudeSDKClient) -> list[Any]:
    return [message async for message in client.receive_response()]


def test_query_returns_the_assistant_text_and_a_successful_result(project: Path, home: Path) -> None:
    with ScriptedModelServer([turns.text("The notes say hello.", reasoning="Read the notes.")]) as server:
        async def main() -> list[Any]:
            opts = options(server, project, home, include_partial_messages=True, disallowed_tools=["WebFetch"])
            return [m async for m in query(prompt="what do the notes say?", options=opts)]

        messages = run(main())
    init = messages[0]
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert {"Read", "Write", "Edit", "Bash", "Grep", "Glob"} <= set(init.data["tools"])
    assert "WebFetch" not in init.data["tools"]  # disallowed: out of the model's tools, as in Claude Code
    assert "fetch_url" not in [t["function"]["name"] for t in server.requests[0]["tools"]]
    [reply] = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [type(b).__name__ for b in reply.content] == ["ThinkingBlock", "TextBlock"]
    assert reply.content[0].thinking == "Read the notes." and reply.content[1].text == "The notes say hello."
    events = [m.event for m in messages if isinstance(m, StreamEvent)]  # include_partial_messages
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    streamed = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    assert streamed == "The notes say hello."
    assert messages.index(reply) > max(i for i, m in enumerate(messages) if isinstance(m, StreamEvent))
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result, result.num_turns) == ("success", False,
                                                                                 "The notes say hello.", 1)
    assert result.session_id == init.data["session_id"] and result.usage["output_tokens"] > 0
    assert server.requests[0]["messages"][-1] == {"role": "user", "content": "what do the notes say?"}


def test_can_use_tool_sees_the_write_and_allow_and_deny_both_work(project: Path, home: Path) -> None:
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": "kept.txt", "content": "draft"}, id="call_a")),
        turns.tool_calls(turns.call("write_file", {"file_path": "refused.txt", "content": "no"}, id="call_b")),
        turns.text("One file written, one refused."),
    ]
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, dict(tool_input)))
        if tool_input["file_path"] == "kept.txt":
            return PermissionResultAllow(updated_input={**tool_input, "content": "reviewed"})
        return PermissionResultDeny(message="not that file")

    with ScriptedModelServer(script) as server:
        async def main() -> list[Any]:
            async with ClaudeSDKClient(options(server, project, home, can_use_tool=can_use_tool)) as client:
                await client.query("write two files")
                return await response(client)

        messages = run(main())
    assert asked == [("Write", {"file_path": "kept.txt", "content": "draft"}),
                     ("Write", {"file_path": "refused.txt", "content": "no"})]
    assert (project / "kept.txt").read_text() == "reviewed"  # the program's updated input ran
    assert not (project / "refused.txt").exists()
    results = tool_results(server.requests[2])
    assert "not that file" in results["call_b"]
    uses = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolUseBlock)]
    assert [(b.name, b.id) for b in uses] == [("Write", "call_a"), ("Write", "call_b")]
    denied = messages[-1].permission_denials
    assert [d["tool_use_id"] for d in denied] == ["call_b"]
    tool_errors = {b.tool_use_id: b.is_error for m in messages if isinstance(m, UserMessage)
                   for b in m.content if hasattr(b, "tool_use_id")}
    assert tool_errors == {"call_a": False, "call_b": True}


def test_a_pre_tool_use_hook_is_called_and_can_block(project: Path, home: Path) -> None:
    script = [
        turns.tool_calls(turns.call("execute", {"command": "echo hi > out.txt"}, id="call_1")),
        turns.text("The hook said no."),
    ]
    seen: list[dict[str, Any]] = []

    async def guard(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append({"event": hook_input["hook_event_name"], "tool": hook_input["tool_name"],
                     "input": hook_input["tool_input"], "id": tool_use_id})
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "no shell redirections"}}

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]}
    with ScriptedModelServer(script) as server:
        async def main() -> list[Any]:
            # bypassPermissions: nothing but the hook can stop the command
            opts = options(server, project, home, hooks=hooks, permission_mode="bypassPermissions")
            async with ClaudeSDKClient(opts) as client:
                await client.query("write out.txt")
                return await response(client)

        messages = run(main())
    assert seen == [{"event": "PreToolUse", "tool": "Bash", "input": {"command": "echo hi > out.txt"},
                     "id": "call_1"}]
    assert not (project / "out.txt").exists()
    assert "no shell redirections" in tool_results(server.requests[1])["call_1"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"


def test_interrupt_stops_a_running_turn(project: Path, home: Path) -> None:
    with ScriptedModelServer([turns.hang(limit=30), turns.text("Still here.")]) as server:
        async def main() -> tuple[list[Any], list[Any], float]:
            async with ClaudeSDKClient(options(server, project, home)) as client:
                await client.query("a long task")
                while not server.requests:  # the turn is running: its request waits on the server
                    await asyncio.sleep(0.02)
                started = time.monotonic()
                await client.interrupt()
                first = await response(client)
                stopped = time.monotonic() - started
                await client.query("are you there?")
                return first, await response(client), stopped

        first, second, stopped = run(main())
    result = first[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_during_execution" and result.is_error
    assert stopped < 10  # not the 30 s the request would have hung
    assert any(isinstance(m, UserMessage) and "interrupted" in str(m.content) for m in first)
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "Still here."
    assert len(server.requests) == 2


def test_set_permission_mode_and_set_model_take_effect(project: Path, home: Path) -> None:
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": "plan.txt", "content": "x"}, id="call_1")),
        turns.text("Plan mode kept me from writing."),
        turns.tool_calls(turns.call("write_file", {"file_path": "plan.txt", "content": "x"}, id="call_2")),
        turns.text("Written."),
    ]
    with ScriptedModelServer(script) as server:
        async def main() -> tuple[list[Any], list[Any]]:
            async with ClaudeSDKClient(options(server, project, home, permission_mode="plan")) as client:
                await client.query("write plan.txt")
                before = await response(client)
                await client.set_permission_mode("acceptEdits")
                await client.set_model("second-model")
                await client.query("now write it")
                return before, await response(client)

        before, after = run(main())
    assert "Plan mode" in tool_results(server.requests[1])["call_1"]
    assert (project / "plan.txt").read_text() == "x"  # acceptEdits let the second write run
    assert [r["model"] for r in server.requests] == ["scripted-model"] * 2 + ["second-model"] * 2
    assert [m.model for m in after if isinstance(m, AssistantMessage)] == ["second-model"] * 2
    assert before[-1].permission_denials[0]["tool_name"] == "Write"


def test_an_sdk_mcp_server_tool_is_callable_by_the_model(project: Path, home: Path) -> None:
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    calc = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    script = [turns.tool_calls(turns.call("calc__add", {"a": 2, "b": 3}, id="call_1")), turns.text("2 + 3 = 5")]
    with ScriptedModelServer(script) as server:
        async def main() -> tuple[list[Any], dict[str, Any]]:
            opts = options(server, project, home, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
            async with ClaudeSDKClient(opts) as client:
                await client.query("what is 2 + 3?")
                messages = await response(client)
                return messages, await client.get_mcp_status()

        messages, status = run(main())
    offered = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert "calc__add" in offered
    assert calls == [{"a": 2, "b": 3}]
    assert tool_results(server.requests[1])["call_1"] == "5"
    uses = [b.name for m in messages if isinstance(m, AssistantMessage) for b in m.content
            if isinstance(b, ToolUseBlock)]
    assert uses == ["mcp__calc__add"]
    init = next(m for m in messages if isinstance(m, SystemMessage))
    assert {"name": "calc", "status": "connected"} in init.data["mcp_servers"]
    assert status["mcpServers"][0]["name"] == "calc" and status["mcpServers"][0]["status"] == "connected"


def test_the_docs_example_runs_as_written(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """docs/sdk.md's first example, with the model from the environment as the page says."""
    from readme_support import DOCS, python_blocks

    block = python_blocks(path=DOCS / "sdk.md")[0]
    (tmp_path / "app.py").write_text("print('hello')\n")
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "app.py"}, id="call_1")),
              turns.text("It prints hello.")]
    with ScriptedModelServer(script) as server:
        monkeypatch.setenv("PATH", f"{SCRIPT.parent}:{os.environ.get('PATH', '')}")
        for name, value in (("BASE_URL", server.base_url), ("API_KEY", "test-key"), ("MODEL", "scripted-model")):
            monkeypatch.setenv(f"AGENTICA_{name}", value)
        monkeypatch.setenv("AGENTICA_HOME", str(home))
        monkeypatch.chdir(tmp_path)
        exec(compile(block, "docs/sdk.md", "exec"), {"__name__": "docs_example"})
    assert "print('hello')" in tool_results(server.requests[1])["call_1"]
    printed = capsys.readouterr().out.splitlines()
    assert "It prints hello." in printed and printed[-1].startswith("success ")


def test_sdk_agents_become_sub_agents_and_json_schema_gives_structured_output(project: Path, home: Path) -> None:
    from claude_agent_sdk import AgentDefinition

    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    reviewer = AgentDefinition(description="Reviews a change", prompt="You review code.", tools=["Read", "Grep"])
    with ScriptedModelServer([turns.text('{"answer": 4}')]) as server:
        async def main() -> list[Any]:
            opts = options(server, project, home, agents={"reviewer": reviewer},
                           output_format={"type": "json_schema", "schema": schema})
            return [m async for m in query(prompt="2 + 2?", options=opts)]

        messages = run(main())
    init, result = messages[0], messages[-1]
    assert "reviewer" in init.data["agents"]
    [task] = [t["function"] for t in server.requests[0]["tools"] if t["function"]["name"] == "task"]
    assert "reviewer" in json.dumps(task)
    assert json.dumps(schema) in server.requests[0]["messages"][0]["content"]  # the model is told the schema
    assert isinstance(result, ResultMessage) and result.structured_output == {"answer": 4}


def test_resume_continues_the_session_the_result_named(project: Path, home: Path) -> None:
    with ScriptedModelServer([turns.text("Noted: 7."), turns.text("It was 7.")]) as server:
        async def main() -> tuple[ResultMessage, ResultMessage]:
            first = [m async for m in query(prompt="remember 7", options=options(server, project, home))][-1]
            again = options(server, project, home, resume=first.session_id)
            return first, [m async for m in query(prompt="which number?", options=again)][-1]

        first, second = run(main())
    assert second.session_id == first.session_id and second.result == "It was 7."
    history = [(m["role"], m["content"]) for m in server.requests[1]["messages"] if m["role"] != "system"]
    assert history == [("user", "remember 7"), ("assistant", "Noted: 7."), ("user", "which number?")]


def test_fork_session_goes_on_in_a_copy_and_session_id_names_a_new_one(project: Path, home: Path) -> None:
    """--fork-session: the resumed history goes on under a new id, the original file untouched;
    --session-id: a new session of that id, and a second one of the same id is refused."""
    import uuid

    named = str(uuid.uuid4())
    script = [turns.text("Noted: 7."), turns.text("It was 7."), turns.text("Fresh."), turns.text("unused")]
    with ScriptedModelServer(script) as server:
        async def main() -> tuple[Any, Any, Any, str, str]:
            first = [m async for m in query(prompt="remember 7", options=options(server, project, home))][-1]
            original = (home / "sessions" / f"{first.session_id}.jsonl").read_text()
            forked = options(server, project, home, resume=first.session_id, fork_session=True)
            fork = [m async for m in query(prompt="which number?", options=forked)][-1]
            fresh = [m async for m in query(prompt="hello", options=options(server, project, home,
                                                                            session_id=named))][-1]
            with pytest.raises(Exception) as again:  # the SDK raises the error result agentica sent
                _ = [m async for m in query(prompt="hello again", options=options(server, project, home,
                                                                                  session_id=named))]
            return first, fork, fresh, original, str(again.value)

        first, fork, fresh, original, again = run(main())
    assert fork.session_id != first.session_id and fork.result == "It was 7."
    history = [(m["role"], m["content"]) for m in server.requests[1]["messages"] if m["role"] != "system"]
    assert history == [("user", "remember 7"), ("assistant", "Noted: 7."), ("user", "which number?")]
    assert (home / "sessions" / f"{first.session_id}.jsonl").read_text() == original  # the original is as it was
    forked_file = (home / "sessions" / f"{fork.session_id}.jsonl").read_text()
    assert "which number?" in forked_file and "remember 7" in forked_file
    assert fresh.session_id == named and fresh.result == "Fresh."
    assert (home / "sessions" / f"{named}.jsonl").is_file()
    assert len(server.requests) == 3  # the second --session-id of the same id never reached the model
    assert f"--session-id {named}: that session exists already" in again


def test_a_sub_agents_tool_calls_come_with_the_task_call_as_parent(project: Path, home: Path) -> None:
    script = [
        turns.tool_calls(turns.call("task", {"description": "read the notes", "prompt": "What do the notes say?"},
                                    id="call_task")),
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="call_sub")),  # the sub-agent
        turns.text("They say hello."),  # the sub-agent's answer
        turns.text("The notes say hello."),
    ]
    with ScriptedModelServer(script) as server:
        async def main() -> list[Any]:
            opts = options(server, project, home, forward_subagent_text=True)
            return [m async for m in query(prompt="delegate it", options=opts)]

        messages = run(main())
    nested = [m for m in messages if isinstance(m, (AssistantMessage, UserMessage)) and m.parent_tool_use_id]
    assert [(type(m).__name__, m.parent_tool_use_id) for m in nested] == [
        ("AssistantMessage", "call_task"), ("UserMessage", "call_task"), ("AssistantMessage", "call_task")]
    sub_use, sub_text = nested[0].content[0], nested[2].content[0]
    assert (sub_use.name, sub_use.input) == ("Read", {"file_path": "notes.txt"})
    assert isinstance(sub_text, TextBlock) and sub_text.text == "They say hello."  # forward_subagent_text
    uses = [b.name for m in messages if isinstance(m, AssistantMessage) and not m.parent_tool_use_id
            for b in m.content if isinstance(b, ToolUseBlock)]
    assert uses == ["Task"]
    assert messages[-1].result == "The notes say hello."


def test_a_custom_slash_command_in_the_prompt_runs_as_in_claude_code(project: Path, home: Path) -> None:
    (home / "commands").mkdir()
    (home / "commands" / "greet.md").write_text("---\ndescription: greet someone\n---\nSay hello to $ARGUMENTS.\n")
    with ScriptedModelServer([turns.text("Hello, Ada!")]) as server:
        async def main() -> list[Any]:
            return [m async for m in query(prompt="/greet Ada", options=options(server, project, home))]

        messages = run(main())
    assert "greet" in messages[0].data["slash_commands"]
    assert server.requests[0]["messages"][-1]["content"].strip() == "Say hello to Ada."
    assert messages[-1].result == "Hello, Ada!"
