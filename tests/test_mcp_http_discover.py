"""Defect 4 of issue 15: a 2025 streamable-HTTP server answers the SDK's 2026 `server/discover`
probe with HTTP 400; that status must not be appended to later, unrelated errors, and after
`Agent.run_sync` (whose event loop ends with the run) the tool must not say `ready`.

The server is tests/mcp_servers/http_server.py with `--legacy-only` (a bare 400 for discover,
as server-everything answers)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import scripted_model
from mcp_servers.support import HttpDemoServer

from agentica_cli.agent import Agent
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp import McpServerError, McpTool, McpToolError


@pytest.fixture
def legacy_server():  # type: ignore[no-untyped-def]
    server = HttpDemoServer("--legacy-only").start()
    yield server
    server.stop()


def test_the_discover_probes_400_is_not_appended_to_later_errors(legacy_server: HttpDemoServer) -> None:
    after_run_sync_then_a_new_session(legacy_server)  # first, while the server is up

    async def main() -> tuple[str, str, str | None]:
        async with McpTool(url=legacy_server.url("/mcp"), name="h") as mcp:
            assert mcp._connection is not None and not mcp._connection.modern  # fell back to 2025
            assert await mcp.call_tool("echo", {"text": "hi"}) == "hi"
            with pytest.raises(McpToolError) as failed:
                await mcp.call_tool("fail", {"message": "boom"})
            legacy_server.stop()  # an unrelated error: the server goes away
            with pytest.raises(McpServerError) as gone:
                await mcp.call_tool("echo", {"text": "again"})
            return str(failed.value), str(gone.value), mcp.error

    failed, gone, error = asyncio.run(main())
    assert failed == "Error executing tool fail: boom"
    assert "stopped during the call: the connection was lost (" in gone
    assert error is not None and error.startswith("the connection was lost")
    for text in (failed, gone, error):
        assert "400" not in text and "Bad Request" not in text


def after_run_sync_then_a_new_session(legacy_server: HttpDemoServer) -> None:
    """After run_sync an HTTP tool is not `ready` (its loop ended); the next run reconnects."""
    model = ScriptedModelServer([
        turns.tool_calls(turns.call("h__echo", {"text": "one"}, id="a")), turns.text("first"),
        turns.tool_calls(turns.call("h__echo", {"text": "two"}, id="b")), turns.text("second"),
    ]).start()
    tool = McpTool(url=legacy_server.url("/mcp"), name="h")
    try:
        agent = Agent(scripted_model(model), tools=[tool])
        assert agent.run_sync("echo one").content == "first"
        assert tool.state == "failed" and tool.pid is None  # the session ended with run_sync's loop
        assert tool.error and "400" not in tool.error
        assert agent.run_sync("echo two").content == "second"  # a fresh session on the new loop
    finally:
        model.stop()
    results = [m["content"] for m in model.requests[3]["messages"] if m["role"] == "tool"]
    assert results == ["one", "two"]
