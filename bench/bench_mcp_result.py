"""A large MCP tool result: what it costs to get it from a real stdio server to the result
budget (the preview the model reads and the file that holds it all).

Each size runs in a fresh process: the demo MCP server (tests/mcp_servers/demo_server.py)
returns `big_text` of N lines x 61 characters, McpTool receives it and the budget of
agent/result_budget.py saves it and keeps the preview. Figures: wall time of the call and
the budget, the process's peak RSS, and how much of the text was kept: a message over
stdio_lines.LINE_CAP (16 MB) is cut as it streams in (oversized.py: the first 2 MB of each long
string, with a notice). `--sdk-reader` measures the MCP SDK's own stdout reader instead of ours
(agentica_cli/tools/mcp/stdio_lines.py): the "before".

    .venv/bin/python bench/bench_mcp_result.py [--mb 5,10,20,50] [--sdk-reader]

Target: time linear in the size (50 MB within 10x of 5 MB) and under 10 s for 50 MB; peak RSS
for 50 MB well under 200 MB (it was ~740 MB when the message was held whole).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import emit_result, print_machine

REPO = Path(__file__).resolve().parent.parent
LINE = 61  # characters of one big_text line with its newline

CHILD = r"""
import asyncio, json, resource, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1] + "/tests")
from mcp_servers.support import demo_command
from agentica_cli.agent.result_budget import bounded_result
from agentica_cli.tools.mcp import McpTool
if sys.argv[3] == "sdk":
    import agentica_cli.tools.mcp.stdio_lines as lines
    lines.install = lambda: False
async def main():
    async with McpTool(demo_command(), name="demo", include_tools=["big_text"]) as mcp:
        fn = mcp.functions["demo__big_text"]
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        text = await fn.entrypoint(lines=int(sys.argv[2]))
        got = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            preview = bounded_result(text, max_tokens=25000, folder=Path(folder), name="demo__big_text", call_id="c1")
        done = time.perf_counter()
        whole = int(sys.argv[2]) * 61 - 1
        cut = "more bytes of this text were cut" in text  # over the line cap: cut as it streamed in
        assert (len(text) == whole or cut) and "saved to" in preview
        print(json.dumps({"call_s": got - started, "budget_s": done - got, "total_s": done - started,
                          "kept_mb": len(text) / 1e6, "cut": cut,
                          "rss_before_mb": base / 1024,
                          "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
asyncio.run(main())
"""


def measure(megabytes: float, reader: str) -> dict[str, float]:
    lines = int(megabytes * 1_000_000 / LINE)
    done = subprocess.run([sys.executable, "-c", CHILD, str(REPO), str(lines), reader], capture_output=True,
                          text=True, timeout=900, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"run failed ({megabytes} MB): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", default="5,10,20,50", help="result sizes in MB, comma-separated")
    parser.add_argument("--sdk-reader", action="store_true", help="the MCP SDK's own stdout reader (before)")
    args = parser.parse_args()
    reader = "sdk" if args.sdk_reader else "ours"
    print_machine(f"MCP result size -> call + result budget ({'SDK reader' if reader == 'sdk' else 'whole lines'})")
    sizes = [float(x) for x in args.mb.split(",")]
    rows = {}
    print(f"{'MB':>6} {'call s':>8} {'budget s':>9} {'total s':>8} {'peak RSS MB':>12} {'kept MB':>8}")
    for size in sizes:
        row = measure(size, reader)
        rows[size] = row
        print(f"{size:>6g} {row['call_s']:>8.2f} {row['budget_s']:>9.2f} {row['total_s']:>8.2f} "
              f"{row['peak_rss_mb']:>12.0f} {row.get('kept_mb', size):>8.1f}")
    largest, smallest = rows[max(sizes)], rows[min(sizes)]
    growth = largest["total_s"] / max(smallest["total_s"], 1e-6)
    ratio = max(sizes) / min(sizes)
    linear = growth <= 1.5 * ratio  # linear, with room for noise; quadratic grows as ratio squared
    print(f"time growth {min(sizes):g} -> {max(sizes):g} MB: x{growth:.1f} (size x{ratio:.0f})"
          + ("" if linear else "  MISSED: not linear"))
    emit_result("mcp_result", {"reader": reader, "sizes_mb": sizes,
                               "total_s": {str(k): round(v["total_s"], 2) for k, v in rows.items()},
                               "peak_rss_mb": {str(k): round(v["peak_rss_mb"]) for k, v in rows.items()},
                               "linear": bool(linear)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
