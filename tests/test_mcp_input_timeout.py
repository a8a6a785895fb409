"""A tool call's timeout measures the server: the time the user takes to answer the server's
form (elicitation) or to approve its sampling request does not count, on every path a server
asks by: the 2025 request, the 2026 `InputRequiredResult` round trip
(tests/mcp_servers/input_server.py) and a task that needs input
(tests/mcp_servers/tasks_server.py). The timeout still ends a call whose server works on too
long once the form is answered, and a call of a server that simply hangs.

The handlers stand for a user who takes 2 s to answer; the calls have 1 s."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp_servers.support import DEMO_SERVER, HERE, PYTHON

from agentica_cli.tools.mcp import McpServerError, McpTool
from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, McpClientHandlers, SamplingRequest

INPUT = str(HERE / "input_server.py")
TASKS = str(HERE / "tasks_server.py")
USER_TIME = 2.0  # how long the "user" takes to answer
TIMEOUT = 1.0


def slow_user(answer: dict) -> tuple[McpClientHandlers, list[ElicitRequest]]:  # type: ignore[type-arg]
    """The first form takes the user USER_TIME; later ones are answered at once."""
    asked: list[ElicitRequest] = []

    async def elicit(request: ElicitRequest) -> ElicitAnswer:
        asked.append(request)
        if len(asked) == 1:
            await asyncio.sleep(USER_TIME)  # the user reads the form and types
        return ElicitAnswer("accept", answer)

    return McpClientHandlers(elicit=elicit), asked


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_time_spent_on_a_form_does_not_count_toward_the_call_timeout(tmp_path: Path, protocol: str) -> None:
    handlers, asked = slow_user({"name": "Ada", "age": 36})

    async def main() -> tuple[str, str]:
        async with McpTool(PYTHON, args=[INPUT], name="input", protocol=protocol, handlers=handlers,
                           timeout=TIMEOUT, log_file=tmp_path / "input.log") as mcp:
            assert mcp._connection is not None and mcp._connection.modern is (protocol == "auto")
            done = await mcp.call_tool("register_then_work", {"seconds": 0})
            # The pause ends with the answer: a server that then works too long still times out.
            with pytest.raises(McpServerError) as late:
                await mcp.call_tool("register_then_work", {"seconds": 30})
            return done, str(late.value)

    done, late = asyncio.run(main())
    era = "2026-07-28" if protocol == "auto" else "2025-11-25"
    assert done == f"worked for Ada ({era})"
    assert [request.message for request in asked] == ["Who are you?"] * 2
    assert f"did not finish within {TIMEOUT:g} s and was cancelled" in late


def test_a_task_waiting_on_the_user_does_not_time_out(tmp_path: Path) -> None:
    handlers, asked = slow_user({"ok": True})
    lines: list[str] = []

    async def main() -> tuple[str, str, str]:
        async with McpTool(PYTHON, args=[TASKS], name="tasks", protocol="legacy", handlers=handlers,
                           timeout=TIMEOUT, log_file=tmp_path / "tasks.log") as mcp:
            done = await mcp.call_tool("confirm", {}, on_progress=lines.append)
            with pytest.raises(McpServerError) as late:
                await mcp.call_tool("confirm", {"seconds": 30})
            return done, str(late.value), await mcp.call_tool("task_log")

    done, late, log = asyncio.run(main())
    assert done == "confirmed: True"
    assert lines[0] == "[task input_required] waiting for the user\n"
    assert [request.message for request in asked] == ["Go ahead?"] * 2
    assert f"did not finish within {TIMEOUT:g} s and was cancelled" in late
    assert "cancel task-2" in log.splitlines()  # out of time after the answer: cancelled on the server


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_a_server_that_hangs_still_times_out(tmp_path: Path, protocol: str) -> None:
    """Nobody is asked anything: the clock runs on (the SDK's own read timeout is off now)."""
    handlers, asked = slow_user({})

    async def main() -> str:
        async with McpTool(PYTHON, args=[str(DEMO_SERVER)], name="demo", protocol=protocol, handlers=handlers,
                           timeout=TIMEOUT, log_file=tmp_path / "demo.log") as mcp:
            with pytest.raises(McpServerError) as late:
                await mcp.call_tool("hang")
            return str(late.value)

    assert f"did not finish within {TIMEOUT:g} s and was cancelled" in asyncio.run(main())
    assert asked == []


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_time_spent_approving_a_sampling_request_does_not_count(tmp_path: Path, protocol: str) -> None:
    async def sample(request: SamplingRequest) -> str:
        await asyncio.sleep(USER_TIME)  # the user reads the request, approves, the model answers
        return "leaves fall softly"

    async def main() -> str:
        async with McpTool(PYTHON, args=[INPUT], name="input", protocol=protocol,
                           handlers=McpClientHandlers(sample=sample), timeout=TIMEOUT,
                           log_file=tmp_path / "input.log") as mcp:
            return await mcp.call_tool("haiku", {"topic": "autumn"})

    assert asyncio.run(main()) == "model wrote: leaves fall softly"
