"""Resource subscriptions and list changes against a real stdio server
(tests/mcp_servers/watch_server.py), on both protocol paths the SDK negotiates: the 2025
handshake (resources/subscribe + notifications) and 2026 (subscriptions/listen streams).

A resource the session read is kept fresh: when the server updates it, the next model
request carries its new text (with the results of the call that ran meanwhile, or with the
user's next message)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import scripted_model
from mcp_servers.support import HERE, PYTHON

from agentica_cli.agent import Agent
from agentica_cli.agent.events import Notice
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp import McpTool
from agentica_cli.tools.mcp.servers import McpServerSet

WATCH = str(HERE / "watch_server.py")
FEATURES = str(HERE / "features_server.py")


def tool_results(body: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_an_updated_resource_reaches_the_next_request(tmp_path: Path, protocol: str) -> None:
    server = ScriptedModelServer([
        turns.tool_calls(turns.call("watch__read_resource", {"uri": "demo://status"}, id="r")),
        turns.tool_calls(turns.call("watch__set_status", {"value": "final"}, id="s")),
        turns.text("noted"),
        turns.text("second run"),
    ]).start()

    async def main() -> list:  # type: ignore[type-arg]
        async with McpTool(PYTHON, args=[WATCH], name="watch", protocol=protocol,
                           log_file=tmp_path / "watch.log") as mcp:
            assert mcp._connection is not None and mcp._connection.modern is (protocol == "auto")
            await mcp.call_tool("set_status", {"value": "draft"})  # nobody read it yet: nothing to tell
            assert mcp.take_resource_updates() == []
            agent = Agent(scripted_model(server), tools=[mcp])
            events = [e async for e in agent.run_stream("what is the status?")]
            # Changed between runs (not by the model): the user's next message carries it.
            assert await mcp.call_tool("set_status", {"value": "published"}) == "status set to published"
            events += [e async for e in agent.run_stream("and now?")]
            await mcp.call_tool("set_status", {"value": "published"})  # updated, but the same text
            assert mcp.take_resource_updates() == []
            if protocol == "legacy":  # a 2025 server was sent resources/subscribe, once
                assert await mcp.call_tool("subscriptions") == "demo://status"
            return events

    try:
        events = asyncio.run(main())
    finally:
        server.stop()
    assert tool_results(server.requests[1])["r"] == "status: draft"
    changed = tool_results(server.requests[2])["s"]
    assert changed.startswith("status set to final\n\n[The MCP server has updated a resource read earlier")
    assert '<resource server="watch" uri="demo://status" updated="true">\nstatus: final\n</resource>' in changed
    prompt = server.requests[3]["messages"][-1]
    assert prompt["role"] == "user" and prompt["content"].startswith("and now?\n\n[The MCP server has updated")
    assert "status: published" in prompt["content"] and "status: final" not in prompt["content"]
    notices = [e.message for e in events if isinstance(e, Notice) and "MCP resource" in e.message]
    assert notices == ["MCP resource changed: watch:demo://status; the new text goes to the model"] * 2


def test_list_changed_refreshes_mention_completion_and_tools(tmp_path: Path) -> None:
    """resources/list_changed (a 2025 notification) feeds @server:uri completion;
    tools/list_changed on the 2026 path (through the listen stream) changes the tools."""

    async def main() -> None:
        servers = McpServerSet.from_tables({
            "watch": {"command": PYTHON, "args": [WATCH], "protocol": "legacy"},
            "feat": {"command": PYTHON, "args": [FEATURES]},  # auto: 2026
        }, log_dir=tmp_path)
        servers.start()
        try:
            assert await servers.wait_ready(timeout=30)
            assert servers.resource_uris()["watch"] == ["demo://status", "demo://static"]
            watch = servers.ready_tool("watch")
            feat = servers.ready_tool("feat")
            assert watch is not None and feat is not None
            assert feat._connection is not None and feat._connection.modern
            assert await watch.call_tool("add_resource") == "added"
            assert servers.resource_uris()["watch"] == ["demo://status", "demo://static", "demo://added"]
            assert "feat__secret" not in feat.functions
            assert await feat.call_tool("unlock") == "unlocked"
            assert "feat__secret" in feat.functions  # read again before the call returned
        finally:
            await servers.close()

    asyncio.run(main())


def test_an_event_loop_ending_as_a_listen_stream_opens_leaves_no_unawaited_coroutine(tmp_path: Path) -> None:
    """A program whose event loop ends with a 2026 session still open (asyncio.run returning,
    Ctrl-C) cancels every task before its first step if need be: nothing of the listen loop
    may then be left as a coroutine that was never awaited (a RuntimeWarning at exit)."""
    import gc
    import time
    import warnings

    loop = asyncio.new_event_loop()
    mcp = McpTool(PYTHON, args=[WATCH], name="watch", log_file=tmp_path / "watch.log")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loop.run_until_complete(mcp.connect())
            connection = mcp._connection
            assert connection is not None and connection.modern
            # One loop iteration at a time, until the one in which the listen stream opened.
            deadline = time.monotonic() + 20
            while connection._listen_version < 0:
                assert time.monotonic() < deadline, "the listen stream never opened"
                loop.call_soon(loop.stop)
                loop.run_forever()
            # What asyncio.run does when its main coroutine returns: cancel all, let them end.
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            gc.collect()
    finally:
        if not loop.is_closed():
            loop.close()
        if mcp._connection is not None:
            mcp._connection.kill()
    unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert unawaited == []
