"""Per-step cost of the headless path: `agentica -p` against a stdlib floor client, in one run.

Both do 30 read_file steps against the same scripted model server. A step's client cost is
measured on the server's side: from the moment it finished writing answer N to the moment
request N+1 arrived (parse the stream, run the tool, build and send the next request, plus
whatever else the client does per step: session writes, progress output, ...). The floor
(bench/floor_client.py) does only the HTTP, JSON and the file read, so the difference is what
the CLI adds per step. The floor sends the CLI's own system prompt and tool list (taken from
its first request), so both send requests of the same size. Runs alternate between the two so
machine load hits both alike.

    .venv/bin/python bench/bench_headless.py [--runs 5] [--steps 30]

Target: the CLI within 3 ms per step of the floor (median of the runs' medians). Also printed:
start to first request of both (target: -p within 250 ms of the floor), and the load average.
Prints one `RESULT {json}` line for run_all.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import agentica_command, emit_result, print_machine

from agentica_cli.testing import ScriptedModelServer, turns

HERE = Path(__file__).resolve().parent
TARGET_MS = 3.0
FIRST_REQUEST_OVER_FLOOR_MS = 250.0  # issue 29: -p start to first request beyond the floor client's


def load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def step_costs(server: ScriptedModelServer) -> list[float]:
    log = server.request_log
    return [(log[i + 1].received_at - log[i].finished_at) * 1000 for i in range(len(log) - 1)]


def run_once(cmd: list[str], work: Path, env: dict[str, str], steps: int, *, floor: bool,
             like: Path | None = None) -> tuple[list[float], float]:
    """(per-step client costs in ms, ms from start to the first request). The CLI's first
    request body is saved to `like`; the floor client sends the same system prompt and tools."""
    script = [turns.repeat_tool("read_file", steps, arguments={"file_path": str(work / "notes.txt")}, final="done")]
    with ScriptedModelServer(script) as server:
        if floor:
            full = [sys.executable, str(HERE / "floor_client.py"), server.base_url, str(work / "notes.txt"), str(steps),
                    str(like)]
        else:
            full = [*cmd, "-p", "read notes.txt", "--base-url", server.base_url, "--api-key", "bench", "--yes",
                    "--max-turns", str(steps + 5)]
        start = time.perf_counter()
        proc = subprocess.run(full, env=env, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0 or len(server.request_log) != steps + 1:
            raise SystemExit(f"{'floor' if floor else 'agentica'} run failed ({proc.returncode}, "
                             f"{len(server.request_log)} requests): {proc.stderr[-800:]}")
        if not floor and like is not None:
            like.write_text(json.dumps(server.request_log[0].body))
        return step_costs(server), (server.request_log[0].received_at - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    opts = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="agentica-bench-home-"))
    work = Path(tempfile.mkdtemp(prefix="agentica-bench-work-"))
    (work / "notes.txt").write_text("a small file\n" * 20)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(AGENTICA_HOME=str(home), OPENAI_API_KEY="bench")
    cmd = agentica_command()

    print_machine("headless path: agentica -p vs a stdlib floor client, per tool step")
    print(f"{opts.steps} read_file steps, {opts.runs} runs each (+1 warm-up), alternating")
    like = home / "first-request.json"
    run_once(cmd, work, env, opts.steps, floor=False, like=like)  # warm-up: bytecode and page cache
    run_once(cmd, work, env, opts.steps, floor=True, like=like)
    cli_medians, floor_medians, firsts, floor_firsts = [], [], [], []
    load_before = load_average()
    for _ in range(opts.runs):
        costs, first = run_once(cmd, work, env, opts.steps, floor=False)
        cli_medians.append(statistics.median(costs))
        firsts.append(first)
        floor_costs, floor_first = run_once(cmd, work, env, opts.steps, floor=True, like=like)
        floor_medians.append(statistics.median(floor_costs))
        floor_firsts.append(floor_first)
    load_after = load_average()
    cli = statistics.median(cli_medians)
    floor = statistics.median(floor_medians)
    first_request = statistics.median(firsts)
    floor_first_request = statistics.median(floor_firsts)
    extra = cli - floor
    verdict = "ok" if extra <= TARGET_MS else "MISSED"
    print(f"agentica -p   per step median {cli:6.2f} ms   (runs: {', '.join(f'{v:.2f}' for v in cli_medians)})")
    print(f"floor client  per step median {floor:6.2f} ms   (runs: {', '.join(f'{v:.2f}' for v in floor_medians)})")
    print(f"difference    {extra:6.2f} ms per step, ratio {cli / floor:.2f}x   target <= {TARGET_MS} ms: {verdict}")
    print(f"start to first request: agentica -p median {first_request:.0f} ms, floor client "
          f"{floor_first_request:.0f} ms: {first_request - floor_first_request:.0f} ms beyond the floor (target <= "
          f"{FIRST_REQUEST_OVER_FLOOR_MS:.0f} ms; the floor sends agentica's own system prompt and tools)")
    print(f"load average (1 min) {load_before:.2f} before the measured runs, {load_after:.2f} after")
    emit_result("headless", {"cli_step_ms": round(cli, 2), "floor_step_ms": round(floor, 2),
                             "extra_step_ms": round(extra, 2), "ratio": round(cli / floor, 2),
                             "first_request_ms": round(first_request, 1),
                             "floor_first_request_ms": round(floor_first_request, 1),
                             "first_request_over_floor_ms": round(first_request - floor_first_request, 1),
                             "load_before": load_before, "load_after": load_after})
    return 0


if __name__ == "__main__":
    sys.exit(main())
