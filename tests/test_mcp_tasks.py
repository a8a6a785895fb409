"""Task-augmented tool calls (MCP 2025-11-25) against a real stdio server
(tests/mcp_servers/tasks_server.py): a tool whose taskSupport is "required" is offered and
called as a task (create, tasks/get polls no faster than pollInterval with the status on the
call's line, tasks/result); an "optional" one stays a plain call; cancelling the call or its
timeout sends tasks/cancel. server-everything's simulate-research-query is exercised in
tests/test_mcp_everything.py."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
from conftest import scripted_model
from mcp_servers.support import HERE, PYTHON

from agentica_cli.agent import Agent
from agentica_cli.agent.events import ToolOutput
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp import McpServerError, McpTool

TASKS = str(HERE / "tasks_server.py")


def test_task_required_tool_is_offered_called_as_a_task_and_cancelled(tmp_path: Path) -> None:
    server = ScriptedModelServer([
        turns.tool_calls(turns.call("tasks__research", {"topic": "owls"}, id="r"),
                         turns.call("tasks__lookup", {"key": "k"}, id="l")),
        turns.text("done"),
    ]).start()

    async def main() -> tuple[list, str, str]:  # type: ignore[type-arg]
        async with McpTool(PYTHON, args=[TASKS], name="tasks", protocol="legacy",
                           log_file=tmp_path / "tasks.log") as mcp:
            assert {"tasks__research", "tasks__lookup"} <= set(mcp.functions) and mcp.left_out == {}
            agent = Agent(scripted_model(server), tools=[mcp])
            events = [e async for e in agent.run_stream("research owls")]

            # Cancelled by the caller (Ctrl-C cancels the running call the same way).
            started = asyncio.Event()
            call = asyncio.ensure_future(mcp.call_tool("research", {"topic": "cats", "steps": 50},
                                                       on_progress=lambda line: started.set()))
            await asyncio.wait_for(started.wait(), 10)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

            mcp.timeout = 0.6  # out of time: cancelled on the server too
            with pytest.raises(McpServerError) as late:
                await mcp.call_tool("research", {"topic": "dogs", "steps": 50})
            return events, str(late.value), await mcp.call_tool("task_log")

    try:
        events, late, log = asyncio.run(main())
    finally:
        server.stop()
    results = {m["tool_call_id"]: m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"}
    assert results == {"r": "research on owls: 3 sources read", "l": "found k"}
    status = [e.text for e in events if isinstance(e, ToolOutput) and e.call_id == "r"]
    assert status[0] == "[task working] starting\n" and status[-1] == "[task completed]\n"
    assert "[task working] reading source 1/3\n" in status

    lines = log.splitlines()
    assert "plain lookup" in lines  # taskSupport "optional": a plain call
    polls = [float(line.split()[2]) for line in lines if line.startswith("get task-1 ")]
    assert len(polls) >= 2
    gaps = [b - a for a, b in itertools.pairwise(polls)]
    assert min(gaps) >= 0.15  # the server asked for 200 ms between polls
    assert "cancel task-2" in lines and "cancel task-3" in lines
    assert "did not finish within 0.6 s and was cancelled" in late
