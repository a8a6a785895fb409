"""McpTool inside an Agent, end to end: the scripted OpenAI-compatible model on 127.0.0.1
calls the tools of real MCP servers (stdio, SSE, streamable HTTP)."""

from __future__ import annotations

import asyncio
import time

import openai  # noqa: F401 - imported up front so timings measure tools, not the import
import pytest
from conftest import scripted_model
from mcp_servers.support import demo_command, process_gone, shared_http_server, wait_gone

from agentica_cli.agent import Agent, Decision
from agentica_cli.agent.events import ApprovalRequested, ToolCallFinished, ToolCallStarted
from agentica_cli.testing import tool_call_problems, turns
from agentica_cli.tools.mcp import McpTool


def tool_results(body: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def offered(body: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {t["function"]["name"]: t["function"] for t in body.get("tools") or ()}


def assert_paired(server) -> None:  # type: ignore[no-untyped-def]
    for i, body in enumerate(server.requests):
        assert tool_call_problems(body["messages"]) == [], f"request {i + 1}"


def stdio_demo(tmp_path, **kwargs) -> McpTool:  # type: ignore[no-untyped-def]
    kwargs.setdefault("name", "demo")
    return McpTool(demo_command(), log_file=tmp_path / "demo.log", **kwargs)


@pytest.fixture
def http_server():
    return shared_http_server()


def make_tool(kind: str, tmp_path, http_server) -> McpTool:  # type: ignore[no-untyped-def]
    if kind == "stdio":
        return stdio_demo(tmp_path)
    path = {"sse": "/sse", "streamable-http": "/mcp"}[kind]
    return McpTool(url=http_server.url(path), name="demo")


@pytest.mark.parametrize("kind", ["stdio", "sse", "streamable-http"])
def test_tools_listed_called_and_read_only_ones_run_in_parallel(scripted, tmp_path, http_server, kind):
    server = scripted(
        turns.tool_calls(turns.call("demo__add", {"a": 19, "b": 23}, id="c1")),
        turns.tool_calls(
            turns.call("demo__slow_read", {"seconds": 0.5, "label": "first"}, id="s1"),
            turns.call("demo__slow_read", {"seconds": 0.5, "label": "second"}, id="s2"),
        ),
        turns.text("19 + 23 = 42"),
    )

    spans: dict[str, list[float]] = {}

    async def main() -> list:  # type: ignore[type-arg]
        async with make_tool(kind, tmp_path, http_server) as mcp:
            agent = Agent(scripted_model(server), tools=[mcp])
            events = []
            async for event in agent.run_stream("add 19 and 23, then read twice"):
                events.append(event)
                if isinstance(event, ToolCallStarted | ToolCallFinished):
                    spans.setdefault(event.call_id, []).append(time.monotonic())
            return events

    events = asyncio.run(main())
    first = server.requests[0]
    tools = offered(first)
    assert "demo__add" in tools and "demo__slow_read" in tools
    assert tools["demo__add"]["parameters"] == {
        "type": "object",
        "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
        "required": ["a", "b"],
        "title": "addArguments",
    }
    assert tools["demo__add"]["description"] == "Add two integers."
    assert tool_results(server.requests[1]) == {"c1": "42"}
    assert tool_results(server.requests[2]) == {"c1": "42", "s1": "slept 0.5 first", "s2": "slept 0.5 second"}
    assert_paired(server)
    finished = {e.call_id: e for e in events if isinstance(e, ToolCallFinished)}
    assert finished["s1"].status == finished["s2"].status == "ok"
    # The two read-only calls, 0.5 s each, ran together: 0.5 s in all, not 1 s.
    together = max(spans["s1"][1], spans["s2"][1]) - min(spans["s1"][0], spans["s2"][0])
    assert 0.5 <= together < 1.0, together


def test_destructive_mcp_tools_ask_read_only_ones_do_not(scripted, tmp_path):
    server = scripted(
        turns.tool_calls(turns.call("demo__add_note", {"text": "keep me"}, id="n1")),
        turns.tool_calls(
            turns.call("demo__delete_notes", {}, id="d1"), turns.call("demo__echo", {"text": "hi"}, id="e1")
        ),
        turns.text("I was not allowed to delete the notes."),
    )
    asked: list[str] = []

    def approve(call) -> Decision:  # type: ignore[no-untyped-def]
        asked.append(call.name)
        if call.name == "demo__delete_notes":
            return Decision.deny("Do not delete anything.")
        return Decision.allow()

    async def main() -> tuple[list, str | None]:  # type: ignore[type-arg]
        async with stdio_demo(tmp_path) as mcp:
            agent = Agent(scripted_model(server), tools=[mcp], approve=approve)
            events = [event async for event in agent.run_stream("tidy up")]
            # The denied call never reached the server: the note is still there.
            return events, await mcp.call_tool("add_note", {"text": "second"})

    events, notes = asyncio.run(main())
    assert asked == ["demo__add_note", "demo__delete_notes"]  # echo is read-only: never asked
    assert [e.name for e in events if isinstance(e, ApprovalRequested)] == asked
    assert tool_results(server.requests[1]) == {"n1": "1 notes"}
    assert tool_results(server.requests[2]) == {"n1": "1 notes", "d1": "Do not delete anything.", "e1": "hi"}
    assert notes == "2 notes"
    finished = {e.call_id: e.status for e in events if isinstance(e, ToolCallFinished)}
    assert finished == {"n1": "ok", "d1": "denied", "e1": "ok"}


def test_one_session_across_calls_and_runs(scripted, tmp_path):
    server = scripted(
        turns.tool_calls(turns.call("demo__increment", {}, id="i1")),
        turns.tool_calls(turns.call("demo__increment", {}, id="i2")),
        turns.text("counted twice"),
        turns.tool_calls(turns.call("demo__increment", {}, id="i3")),
        turns.text("three"),
    )

    async def main() -> None:
        async with stdio_demo(tmp_path) as mcp:
            pid = mcp.pid
            agent = Agent(scripted_model(server), tools=[mcp])
            assert (await agent.run("count")).content == "counted twice"
            assert (await agent.run("once more")).content == "three"
            assert mcp.pid == pid and mcp.restarts == 0

    asyncio.run(main())
    assert tool_results(server.requests[2]) == {"i1": "1", "i2": "2"}
    assert tool_results(server.requests[4])["i3"] == "3"


def test_server_exits_mid_run_then_works_after_restart(scripted, tmp_path):
    server = scripted(
        turns.tool_calls(turns.call("demo__increment", {}, id="i1")),
        turns.tool_calls(turns.call("demo__crash", {}, id="x1")),
        turns.tool_calls(turns.call("demo__increment", {}, id="i2")),
        turns.text("recovered"),
    )

    async def main() -> tuple[int | None, int | None]:
        async with stdio_demo(tmp_path) as mcp:
            first = mcp.pid
            agent = Agent(scripted_model(server), tools=[mcp], approve=lambda call: Decision.allow())
            result = await agent.run("crash it")
            assert result.content == "recovered"
            assert mcp.restarts == 1
            return first, mcp.pid

    first, second = asyncio.run(main())
    results = tool_results(server.requests[3])
    assert results["i1"] == "1"
    assert results["x1"] == (
        "Error: McpServerError: MCP server 'demo' stopped during the call: the server process exited "
        f"(its stderr is in {tmp_path / 'demo.log'}). It will be restarted on the next call."
    )
    assert results["i2"] == "1"  # a fresh server process
    assert first != second and process_gone(first) and wait_gone(second)
    assert_paired(server)


def test_no_server_process_left_after_close(scripted, tmp_path):
    server = scripted(turns.tool_calls(turns.call("demo__pid", {}, id="p1")), turns.text("ok"))

    async def main() -> None:
        async with stdio_demo(tmp_path) as mcp:
            agent = Agent(scripted_model(server), tools=[mcp])
            await agent.run("which pid?")
            assert not process_gone(mcp.pid)

    asyncio.run(main())
    pid = int(tool_results(server.requests[1])["p1"])
    assert process_gone(pid)


def test_include_exclude_and_prefix_keep_builtin_names_free(scripted, tmp_path):
    def echo(text: str) -> str:
        """The agent's own echo."""
        return f"local {text}"

    server = scripted(
        turns.tool_calls(turns.call("echo", {"text": "a"}, id="l1"), turns.call("demo__echo", {"text": "b"}, id="m1")),
        turns.text("both"),
    )

    async def main() -> None:
        async with stdio_demo(tmp_path, include_tools=["echo", "add", "fail"], exclude_tools=["fail"]) as mcp:
            agent = Agent(scripted_model(server), tools=[echo, mcp])
            await agent.run("echo twice")

    asyncio.run(main())
    assert sorted(offered(server.requests[0])) == ["demo__add", "demo__echo", "echo"]
    assert tool_results(server.requests[1]) == {"l1": "local a", "m1": "b"}


def test_run_sync_connects_an_unconnected_tool_and_leaves_no_process(scripted, tmp_path):
    server = scripted(
        turns.tool_calls(turns.call("demo__pid", {}, id="p1")),
        turns.text("first"),
        turns.tool_calls(turns.call("demo__pid", {}, id="p2")),
        turns.text("second"),
    )
    mcp = stdio_demo(tmp_path, include_tools=["pid"])
    agent = Agent(scripted_model(server), tools=[mcp])
    assert agent.run_sync("pid?").content == "first"
    assert agent.run_sync("pid again?").content == "second"  # a new event loop: a new session
    first = int(tool_results(server.requests[1])["p1"])
    second = int(tool_results(server.requests[3])["p2"])
    assert first != second
    assert wait_gone(first) and wait_gone(second)
