"""The agent loop's own overhead per tool step, measured from the model server's side.

The scripted server answers every request at once with one cheap tool call; the time from
the server finishing a reply to the next request arriving is what the loop (plus the HTTP
client) spends: parse the stream, run the tool, build and send the next request. Runs of
30, 100 and 300 steps show whether it grows with the conversation.

    .venv/bin/python bench/bench_loop.py [--steps 30,100,300] [--async-tool]

Target: median under 5 ms per step over a 30-step run; flat with history length apart from
serialising the messages. Exits non-zero only if a run failed; a missed target is
printed ("MISSED") and recorded, since a loaded machine can miss it without a regression.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import emit_result, print_machine

from agentica_cli.agent import Agent, ToolConfig
from agentica_cli.models import OpenAIChat
from agentica_cli.testing import ScriptedModelServer, turns

TARGET_MS = 5.0


def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: the key
    """
    return f"value of {key}"


async def lookup_async(key: str) -> str:
    """Look a key up.

    Args:
        key: the key
    """
    return f"value of {key}"


async def one_run(steps: int, use_async: bool) -> tuple[list[float], float, str]:
    with ScriptedModelServer([turns.repeat_tool("lookup", steps, arguments={"key": "k"}, final="done")]) as server:
        model = OpenAIChat(id="bench", api_key="x", base_url=server.base_url)
        fn = lookup_async if use_async else lookup
        fn.__name__ = "lookup"
        agent = Agent(model, tools=[fn], instructions="You are a benchmark.",
                      tool_config=ToolConfig(max_turns=steps + 5))
        start = time.perf_counter()
        result = await agent.run("go")
        wall = time.perf_counter() - start
        await model.aclose()
        log = server.request_log
        if result.stop_reason != "completed" or len(log) != steps + 1:
            raise RuntimeError(f"run failed: {result.stop_reason} {result.error} after {len(log)} requests")
        gaps = [(log[i + 1].received_at - log[i].finished_at) * 1000 for i in range(steps)]
        return gaps, wall, result.content


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", default="30,100,300")
    parser.add_argument("--async-tool", action="store_true", help="an async tool instead of a sync one")
    args = parser.parse_args()
    print_machine("agent loop overhead per tool step (server side: reply sent -> next request in)")
    asyncio.run(one_run(5, args.async_tool))  # warm up: imports, schema, first connection
    figures: dict[str, float] = {}
    ok = True
    print(f"tool: {'async' if args.async_tool else 'sync (worker thread)'}")
    print(f"{'steps':>6} {'median ms':>10} {'p90 ms':>8} {'max ms':>8} {'first10 med':>12} {'last10 med':>11} "
          f"{'wall s':>7}")
    for steps in (int(s) for s in args.steps.split(",")):
        try:
            gaps, wall, _ = asyncio.run(one_run(steps, args.async_tool))
        except Exception as exc:
            print(f"{steps:>6} FAILED: {exc}")
            ok = False
            continue
        med = statistics.median(gaps)
        p90 = statistics.quantiles(gaps, n=10)[-1] if len(gaps) >= 10 else max(gaps)
        print(f"{steps:>6} {med:>10.2f} {p90:>8.2f} {max(gaps):>8.2f} {statistics.median(gaps[:10]):>12.2f} "
              f"{statistics.median(gaps[-10:]):>11.2f} {wall:>7.2f}")
        figures[f"median_ms_{steps}"] = round(med, 2)
        figures[f"max_ms_{steps}"] = round(max(gaps), 2)
    met = figures.get("median_ms_30", float("inf")) < TARGET_MS
    print(f"target: median < {TARGET_MS} ms per step over 30 steps -> {'met' if met else 'MISSED'}")
    emit_result("loop", {**figures, "target_ms": TARGET_MS, "target_met": met})
    return 0 if ok else 1  # non-zero only when a run failed; a missed target is reported, not an error


if __name__ == "__main__":
    sys.exit(main())
