"""task: a sub-agent over the scripted model server, its events in the parent's stream."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from builtin_support import call_tool
from conftest import scripted_model

from agentica_cli.agent import Decision
from agentica_cli.agent.events import ApprovalRequested, ToolCallFinished, ToolCallStarted, TurnFinished
from agentica_cli.deep import DeepAgent
from agentica_cli.testing import turns
from builtin_tools import BuiltinTaskTool
from builtin_tools.task import SUB_AGENT_PROMPT

FULL_SET = {"ls", "read_file", "write_file", "edit_file", "multi_edit_file", "glob", "grep", "execute",
            "read_background_output", "stop_background", "write_todos", "web_search", "fetch_url"}
BACKGROUND = {"read_background_output", "stop_background"}  # execute's: they go with it


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or ()}


def is_sub_agent(body: dict[str, Any]) -> bool:
    return body["messages"][0]["content"].startswith(SUB_AGENT_PROMPT.splitlines()[0])


async def collect(agent: DeepAgent, prompt: str) -> list[Any]:
    return [event async for event in agent.run_stream(prompt)]


def test_task_runs_a_sub_agent_with_fresh_context_and_forwards_its_events(scripted, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("# TODO: fix\n")
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "find todos", "prompt": "Find TODO comments"}, id="t1")),
        turns.tool_calls(turns.call("grep", {"pattern": "TODO"}, id="g1")),
        turns.text("a.py:1 has a TODO"),
        turns.text("The sub-agent found it."),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path)
    events = asyncio.run(collect(agent, "Look for TODOs"))

    parent_first, sub_first, sub_second, parent_second = server.requests
    assert tool_names(parent_first) == FULL_SET | {"task"}
    # fresh context: the sub-agent's first request is its own system prompt and the task prompt only
    assert [m["role"] for m in sub_first["messages"]] == ["system", "user"]
    assert is_sub_agent(sub_first)
    assert sub_first["messages"][1]["content"] == "Find TODO comments"
    assert tool_names(sub_first) == FULL_SET
    assert sub_second["messages"][-1]["content"] == "a.py:1:# TODO: fix\n[1 matching lines in 1 files]"
    assert parent_second["messages"][-1] == {"role": "tool", "tool_call_id": "t1", "content": "a.py:1 has a TODO"}

    sub_events = [e for e in events if e.source == "task:t1"]
    assert any(isinstance(e, ToolCallStarted) and e.name == "grep" and e.args["pattern"] == "TODO"
               for e in sub_events)
    assert any(isinstance(e, ToolCallFinished) and e.name == "grep" and e.status == "ok" for e in sub_events)
    assert [e.content for e in sub_events if isinstance(e, TurnFinished)] == ["a.py:1 has a TODO"]
    # the sub-agent's events arrive while the task call runs, between its start and finish
    kinds = [(type(e).__name__, e.source, getattr(e, "name", "")) for e in events]
    start = kinds.index(("ToolCallStarted", "", "task"))
    finish = kinds.index(("ToolCallFinished", "", "task"))
    assert all(start < i < finish for i, e in enumerate(events) if e.source == "task:t1")
    assert [e.content for e in events if isinstance(e, TurnFinished) and not e.source] == ["The sub-agent found it."]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "tool", "assistant"]


def test_sub_agent_uses_the_parents_approval_and_never_gets_more_tools(scripted, tmp_path: Path) -> None:
    asked: list[str] = []

    def approve(call: Any) -> Decision:
        asked.append(call.name)
        return Decision.deny("the user said no")

    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "write", "prompt": "Create new.txt"}, id="t9")),
        turns.tool_calls(turns.call("write_file", {"file_path": "new.txt", "content": "x"}, id="w1")),
        turns.text("I was not allowed to write new.txt"),
        turns.text("done"),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, exclude_tools=("execute", "fetch_url"),
                      approve=approve)
    events = asyncio.run(collect(agent, "make a file"))
    assert asked == ["write_file"]
    assert not (tmp_path / "new.txt").exists()
    assert tool_names(server.requests[1]) == FULL_SET - {"execute", "fetch_url"} - BACKGROUND
    assert any(isinstance(e, ApprovalRequested) and e.source == "task:t9" and e.name == "write_file" for e in events)
    denied = [e for e in events if isinstance(e, ToolCallFinished) and e.source == "task:t9"]
    assert [e.status for e in denied] == ["denied"]
    assert "the user said no" in server.requests[2]["messages"][-1]["content"]
    assert server.requests[3]["messages"][-1]["content"] == "I was not allowed to write new.txt"


def test_long_answers_are_capped(scripted, tmp_path: Path) -> None:
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "big", "prompt": "Say a lot"}, id="t2")),
        turns.text("w" * 30_000),
        turns.text("ok"),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path)
    agent.run_sync("go")
    result = server.requests[2]["messages"][-1]["content"]
    assert result == "w" * 20_000 + "\n[... sub-agent answer cut: 10,000 more characters]"


def test_read_only_sub_agents_run_in_parallel(scripted, tmp_path: Path) -> None:
    def route(body: dict[str, Any]) -> dict[str, Any]:
        if is_sub_agent(body):
            prompt = body["messages"][1]["content"]
            # reading a background process's output (the parent's dev server log) is read-only too
            assert tool_names(body) == {"ls", "read_file", "glob", "grep", "web_search", "fetch_url",
                                        "read_background_output"}
            return turns.text(f"answer to {prompt}", delay=0.8)
        if body["messages"][-1]["role"] == "tool":
            return turns.text("both done")
        return turns.tool_calls(
            turns.call("task", {"description": "one", "prompt": "question one"}, id="p1"),
            turns.call("task", {"description": "two", "prompt": "question two"}, id="p2"),
        )

    server = scripted(route, route, route, route)
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, builtin_options={"task_read_only": True})
    task_function = agent.functions["task"]
    assert task_function.concurrency_safe and task_function.is_read_only
    result = agent.run_sync("two questions")
    assert result.content == "both done"
    tool_results = {m["tool_call_id"]: m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"}
    assert tool_results == {"p1": "answer to question one", "p2": "answer to question two"}
    # The server's own spans, not the run's wall time: the second sub-agent's request arrived
    # while the first one's 0.8 s answer was still being written, so they ran side by side.
    first, second = sorted((r for r in server.request_log if is_sub_agent(r.body)), key=lambda r: r.received_at)
    assert second.received_at < first.finished_at, "the sub-agents ran one after the other"


def test_sub_agent_model_failure_is_a_tool_error(scripted, tmp_path: Path) -> None:
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "fails", "prompt": "x"}, id="t3")),
        turns.error(401, "bad key"),
        turns.text("the task failed"),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path)
    events = asyncio.run(collect(agent, "go"))
    finished = [e for e in events if isinstance(e, ToolCallFinished) and e.name == "task"]
    assert finished[0].status == "error"
    assert finished[0].result.startswith("Error: SubAgentError: the sub-agent for 'fails' failed: ")
    assert server.requests[2]["messages"][-1]["content"] == finished[0].result


def test_task_outside_an_agent_is_refused(tmp_path: Path) -> None:
    call = call_tool(BuiltinTaskTool(tmp_path), "task", description="x", prompt="y")
    assert call.error == ("Error: SubAgentError: task can only run inside an agent (no parent agent in the "
                          "tool context).")
