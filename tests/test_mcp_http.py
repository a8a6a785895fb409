"""McpTool over SSE and streamable HTTP, against tests/mcp_servers/http_server.py on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp_servers.support import HttpDemoServer, free_port, shared_http_server

from agentica_cli.tools.base import FunctionCall
from agentica_cli.tools.mcp import McpServerError, McpTool

ENDPOINTS = {"sse": "/sse", "streamable-http": "/mcp"}


@pytest.fixture
def http_server():
    return shared_http_server()


@pytest.fixture(scope="module")
def guarded_server():
    """A server that answers only requests carrying `X-Token: s3cret`."""
    with HttpDemoServer("--header", "x-token=s3cret") as server:
        yield server


async def call(tool: McpTool, name: str, arguments: dict | None = None) -> FunctionCall:  # type: ignore[type-arg]
    return await FunctionCall(tool.functions[name], "c", arguments or {}).execute()


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_tools_listed_called_and_session_kept(http_server, transport):
    async def main() -> None:
        async with McpTool(url=http_server.url(ENDPOINTS[transport]), name="web") as mcp:
            assert mcp.transport == transport  # chosen from the URL
            assert mcp.pid is None  # not our process
            assert "web__add" in mcp.functions and "web__delete_notes" in mcp.functions
            assert mcp.functions["web__add"].parameters["properties"]["a"] == {"title": "A", "type": "integer"}
            assert mcp.functions["web__echo"].concurrency_safe and not mcp.functions["web__echo"].is_destructive
            assert mcp.functions["web__delete_notes"].is_destructive
            assert (await call(mcp, "web__add", {"a": 20, "b": 22})).result == "42"
            failed = await call(mcp, "web__fail", {"message": "nope"})
            assert failed.error == "Error: McpToolError: Error executing tool fail: nope"
            # Notes live in the server process; one session adds and then deletes them.
            await call(mcp, "web__delete_notes")
            assert (await call(mcp, "web__add_note", {"text": "a"})).result == "1 notes"
            assert (await call(mcp, "web__add_note", {"text": "b"})).result == "2 notes"
            assert (await call(mcp, "web__delete_notes")).result == "deleted 2 notes"
            # Read-only calls overlap on one session: two 1 s reads, one after the other, would
            # take 2 s at least; together they take a little over 1 s (0.8 s of slack for load).
            started = time.monotonic()
            both = await asyncio.gather(
                call(mcp, "web__slow_read", {"seconds": 1.0, "label": "x"}),
                call(mcp, "web__slow_read", {"seconds": 1.0, "label": "y"}),
            )
            assert time.monotonic() - started < 1.8
            assert [c.result for c in both] == ["slept 1.0 x", "slept 1.0 y"]
        assert mcp.state == "closed"

    asyncio.run(main())


def test_transport_can_be_forced(http_server):
    async def main() -> None:
        async with McpTool(url=http_server.url("/mcp"), transport="streamable-http", include_tools=["echo"]) as mcp:
            assert list(mcp.functions) == ["127_0_0_1__echo"]
            assert (await call(mcp, "127_0_0_1__echo", {"text": "x"})).result == "x"

    asyncio.run(main())


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_headers_are_sent(guarded_server, transport):
    async def main(server: HttpDemoServer) -> None:
        url = server.url(ENDPOINTS[transport])
        refused = McpTool(url=url, name="auth", connect_timeout=5)
        with pytest.raises(McpServerError, match=r"MCP server 'auth' \(.*\) failed to start: .*401"):
            await refused.connect()
        assert refused.state == "failed"
        async with McpTool(url=url, name="auth", headers={"X-Token": "s3cret"}, include_tools=["echo"]) as mcp:
            assert (await call(mcp, "auth__echo", {"text": "in"})).result == "in"

    asyncio.run(main(guarded_server))


def test_nothing_listening_is_a_quick_clear_error():
    async def main() -> None:
        url = f"http://127.0.0.1:{free_port()}/mcp"
        tool = McpTool(url=url, name="gone")
        started = time.monotonic()
        with pytest.raises(McpServerError, match=r"MCP server 'gone' \(http://127\.0\.0\.1:\d+/mcp"):
            await tool.connect()
        assert time.monotonic() - started < 3.0
        assert tool.state == "failed"

    asyncio.run(main())


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_server_restarted_behind_the_url(transport):
    """The HTTP server dies: one error result, then the session is re-established."""

    async def main() -> None:
        server = HttpDemoServer().start()
        try:
            async with McpTool(url=server.url(ENDPOINTS[transport]), name="web", timeout=5) as mcp:
                assert (await call(mcp, "web__increment")).result == "1"
                server.stop()
                lost = await call(mcp, "web__increment")
                assert lost.error is not None
                assert lost.error.startswith("Error: McpServerError: MCP server 'web' ")
                assert lost.error.endswith("will be restarted on the next call.")
                server = HttpDemoServer(port=server.port).start()
                again = await call(mcp, "web__increment")
                assert (again.result, again.error) == ("1", None)
                assert mcp.restarts == 1
        finally:
            server.stop()

    asyncio.run(main())


def test_a_hung_http_server_gives_an_error_and_a_new_session_later():
    """SIGSTOP freezes the server: calls time out, the probe too; after SIGCONT the next call
    opens a new session."""
    import os
    import signal

    async def main(server: HttpDemoServer) -> None:
        async with McpTool(url=server.url("/mcp"), name="web", timeout=0.5, include_tools=["echo"]) as mcp:
            assert server.process is not None
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                hung = await call(mcp, "web__echo", {"text": "x"})
                assert 5.3 <= time.monotonic() - started < 9.0  # call timeout 0.5 s + the probe's 5 s
                assert hung.error == (
                    "Error: McpServerError: MCP server 'web' stopped responding (no answer within 0.5 s); "
                    "it was stopped and will be restarted on the next call."
                )
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            again = await call(mcp, "web__echo", {"text": "y"})
            assert (again.result, again.error, mcp.restarts) == ("y", None, 1)

    with HttpDemoServer() as server:
        asyncio.run(main(server))
