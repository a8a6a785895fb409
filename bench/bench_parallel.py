"""Parallel tool calls: N concurrency-safe calls of 0.5 s each in one model reply.

For N = 1, 4 and 16, a reply with N calls is served by the scripted model, the agent runs
them, and the wall time from the first tool start to the last tool finish is measured.
Speedup = N x 0.5 s / wall. Both a sync tool (runs on worker threads) and an async one.
Target: speedup >= 0.8 x N for N <= 16.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_result, print_machine

from agentica_cli.agent import Agent
from agentica_cli.agent.events import ToolCallFinished, ToolCallStarted
from agentica_cli.models import OpenAIChat
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools import tool

SLEEP = 0.5


@tool(concurrency_safe=True, is_read_only=True)
def wait_sync(n: int) -> str:
    """Wait half a second (blocking)."""
    time.sleep(SLEEP)
    return f"done {n}"


@tool(concurrency_safe=True, is_read_only=True)
async def wait_async(n: int) -> str:
    """Wait half a second."""
    await asyncio.sleep(SLEEP)
    return f"done {n}"


async def one_reply(name: str, n: int) -> float:
    script = [turns.tool_calls(*(turns.call(name, {"n": i}) for i in range(n))), turns.text("all done")]
    with ScriptedModelServer(script) as server:
        model = OpenAIChat(id="bench", base_url=server.base_url, api_key="bench")
        agent = Agent(model, tools=[wait_sync, wait_async])
        first_start = last_end = None
        finished = 0
        async for event in agent.run_stream("go"):
            if isinstance(event, ToolCallStarted) and first_start is None:
                first_start = time.perf_counter()
            elif isinstance(event, ToolCallFinished):
                finished += 1
                if event.error:
                    raise RuntimeError(f"tool failed: {event.result}")
                last_end = time.perf_counter()
        if finished != n or first_start is None or last_end is None:
            raise RuntimeError(f"expected {n} tool results, got {finished}")
        return last_end - first_start


def main() -> int:
    print_machine("parallel tool calls (N concurrency-safe calls of 0.5 s in one reply)")
    figures: dict[str, float] = {}
    print(f"{'N':>3} {'kind':>6} {'wall s':>8} {'speedup':>8} {'target':>8}")
    for n in (1, 4, 16):
        for kind in ("sync", "async"):
            wall = asyncio.run(one_reply(f"wait_{kind}", n))
            speedup = n * SLEEP / wall
            print(f"{n:>3} {kind:>6} {wall:>8.3f} {speedup:>8.2f} {0.8 * n:>8.1f}")
            figures[f"wall_{kind}_{n}"] = round(wall, 3)
            figures[f"speedup_{kind}_{n}"] = round(speedup, 2)
    for n in (1, 4, 16):
        figures[f"speedup_{n}"] = min(figures[f"speedup_sync_{n}"], figures[f"speedup_async_{n}"])
    emit_result("parallel", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
