"""Run every benchmark, side by side in one run, and print the targets table.

    .venv/bin/python bench/run_all.py                # everything; writes docs/performance.md's table
    .venv/bin/python bench/run_all.py startup loop   # only the named benches (prints, writes nothing)
    .venv/bin/python bench/run_all.py prompt --write /tmp/perf.md   # write a subset's table elsewhere

Each bench script prints its own figures and one `RESULT {json}` line; this script
collects those and compares them with the targets from the issues, then writes the one
performance table (with the machine, Python and dependency versions) into docs/performance.md.
It first checks that its interpreter can import what the benches need, so a wrong `python`
fails at once instead of after generating data. Exits non-zero if a bench failed to run (not
if a target is missed: timings are noisy, the table says so); 2 for a usage or import problem.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import IMPORT_SPEED_RUNS, machine, stdlib_import_ms  # noqa: E402
from perf_table import PAGE, Row, environment, import_problem, render, write  # noqa: E402

BENCHES = {
    "startup": "bench_startup.py",
    "loop": "bench_loop.py",
    "parallel": "bench_parallel.py",
    "files": "bench_files.py",
    "prompt": "bench_prompt_size.py",
    "keys": "bench_keys.py",
    "menus": "bench_menus.py",
    "checkpoints": "bench_checkpoints.py",
    "sandbox": "bench_sandbox.py",
    "toolkits": "bench_toolkits.py",
    "headless": "bench_headless.py",
    "acp": "bench_acp.py",
    "chunks": "bench_chunks.py",
    "shell": "bench_shell_parse.py",
    "batch": "bench_batch.py",
    "sdk": "bench_sdk.py",
}


@dataclass
class Target:
    label: str
    bench: str
    figure: Callable[[dict[str, Any]], float | None]
    limit: str  # human-readable target; "" for a figure shown without one
    met: Callable[[float], bool] | None
    unit: str = ""


def _get(*keys: str) -> Callable[[dict[str, Any]], float | None]:
    def read(result: dict[str, Any]) -> float | None:
        value: Any = result
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return float(value) if isinstance(value, (int, float)) else None

    return read


TARGETS = [
    Target("`agentica --version` median", "startup", _get("version_ms"), "< 150 ms", lambda v: v < 150, " ms"),
    Target("`agentica --help` median", "startup", _get("help_ms"), "< 150 ms", lambda v: v < 150, " ms"),
    Target("REPL ready for input", "startup", _get("repl_ready_ms"), "< 300 ms", lambda v: v < 300, " ms"),
    Target("`-p` to first model request", "startup", _get("first_request_ms"), "< 700 ms", lambda v: v < 700, " ms"),
    Target("the same for a stdlib floor client (`floor_client.py`, alternating runs)", "startup",
           _get("floor_first_request_ms"), "", None, " ms"),
    Target("`-p` to first model request beyond the floor client (difference of the medians)", "startup",
           _get("first_request_over_floor_ms"), "<= 250 ms", lambda v: v <= 250, " ms"),
    Target("`-p`: the answer's last byte sent to the process's end (median)", "startup", _get("answer_to_exit_ms"),
           "< 30 ms", lambda v: v < 30, " ms"),
    Target("CPU time of that `-p` run (one-line answer; user + system, all threads)", "startup",
           _get("print_run_cpu_ms"), "", None, " ms"),
    Target("CPU time of the floor client's run", "startup", _get("floor_run_cpu_ms"), "", None, " ms"),
    Target("instructions of a whole one-answer `-p` run (callgrind, millions; the same on any host)", "startup",
           _get("print_run_instructions_m"), "", None, " M"),
    Target("the same for the floor client's run", "startup", _get("floor_run_instructions_m"), "", None, " M"),
    Target("`-p` run / floor client run, instructions", "startup", _get("instructions_ratio"), "", None, "x"),
    Target("`import openai` as the SDK does it (median, fresh interpreter)", "startup",
           _get("import_openai_whole_ms"), "", None, " ms"),
    Target("the same, agentica's lean import (API types lazy)", "startup", _get("import_openai_lean_ms"), "",
           None, " ms"),
    Target("peak RSS, `-p` run of 30 tool steps", "startup", _get("rss_30_steps_mb"), "< 150 MB",
           lambda v: v < 150, " MB"),
    Target("loop overhead per step, 30 steps (median)", "loop", _get("median_ms_30"), "< 5 ms",
           lambda v: v < 5, " ms"),
    Target("loop overhead per step, 300 steps (median)", "loop", _get("median_ms_300"),
           "flat (serialisation only)", lambda v: v < 5, " ms"),
    Target("`-p` per tool step beyond a stdlib floor client (30 steps)", "headless", _get("extra_step_ms"), "<= 3 ms",
           lambda v: v <= 3, " ms"),
    Target("`-p` per tool step / floor client per step", "headless", _get("ratio"), "", None, "x"),
    Target("`-p` per tool step, 30 read_file steps (median)", "headless", _get("cli_step_ms"), "", None, " ms"),
    Target("stdlib floor client per step, same steps (median)", "headless", _get("floor_step_ms"), "", None,
           " ms"),
    Target("parallel speedup, N=4", "parallel", _get("speedup_4"), ">= 3.2", lambda v: v >= 3.2, "x"),
    Target("parallel speedup, N=16", "parallel", _get("speedup_16"), ">= 12.8", lambda v: v >= 12.8, "x"),
    Target("grep vs rg (time ratio)", "files", _get("grep_ratio"), "<= 1.3", lambda v: v <= 1.3, "x"),
    Target("read_file deep in 500 MB file", "files", _get("read_deep_ms"), "< 1000 ms", lambda v: v < 1000, " ms"),
    Target("read_file peak memory", "files", _get("read_deep_rss_mb"), "< 50 MB", lambda v: v < 50, " MB"),
    Target("first request size, default tools", "prompt", _get("first_request_kb"), "< 16 KB",
           lambda v: v < 16, " KB"),
    Target("largest toolkit's schemas", "toolkits", _get("largest_toolkit_schema_bytes"), "< 1536 bytes",
           lambda v: v < 1536, " bytes"),
    Target("first request size with all toolkits enabled", "toolkits", _get("first_request_bytes_all_toolkits"), "",
           None, " bytes"),
    Target("keystroke to screen, idle prompt (median)", "keys", _get("idle_ms"), "< 50 ms", lambda v: v < 50, " ms"),
    Target("first paint in a 20,000-file git project", "menus", _get("first_paint_ms"), "< 300 ms",
           lambda v: v < 300, " ms"),
    Target("the same in an empty folder (same run)", "menus", _get("first_paint_empty_ms"), "", None, " ms"),
    Target("keystroke to screen, `@` menu open, 20,000 files (median)", "menus", _get("key_menu_ms"), "< 50 ms",
           lambda v: v < 50, " ms"),
    Target("the same / a key echoed with no menu (same run)", "menus", _get("ratio"), "", None, "x"),
    Target("keystroke to screen while a turn streams (median)", "keys", _get("busy_ms"), "< 50 ms",
           lambda v: v < 50, " ms"),
    Target("checkpoint: incremental snapshot, 20,000 files, 5 changed (p50)", "checkpoints",
           _get("changed5_p50_ms"), "< 150 ms", lambda v: v < 150, " ms"),
    Target("checkpoint: per-turn overhead, 30-step loop", "checkpoints", _get("turn_overhead_pct"), "< 10%",
           lambda v: v < 10, "%"),
    Target("checkpoint: first snapshot, 20,000 files / 200 MB", "checkpoints", _get("first_ms"), "", None, " ms"),
    Target("checkpoint: first snapshot, the same tree as a git checkout (objects and index borrowed)",
           "checkpoints", _get("checkout_first_ms"), "", None, " ms"),
    Target("checkpoint: shadow repository after that first snapshot", "checkpoints", _get("checkout_shadow_mb"),
           "", None, " MB"),
    Target("checkpoint: snapshot of an unchanged tree (p50)", "checkpoints", _get("unchanged_p50_ms"), "", None,
           " ms"),
    Target("checkpoint: a snapshot after every step, 30-step loop", "checkpoints",
           _get("every_step_overhead_pct"), "", None, "%"),
    Target("`glob(\"**/*.py\")` on the 20,000 files (`find`: next row)", "files", _get("glob_ms"), "", None, " ms"),
    Target("`find -name \"*.py\"` on the same tree", "files", _get("find_ms"), "", None, " ms"),
    Target("sandbox: unconfined `true` (p50)", "sandbox", _get("none_ms"), "", None, " ms"),
    Target("sandbox: bubblewrap added per command (p50)", "sandbox", _get("bubblewrap_added_ms"), "< 15 ms",
           lambda v: v < 15, " ms"),
    Target("sandbox: Landlock added per command (p50)", "sandbox", _get("landlock_added_ms"), "< 3 ms",
           lambda v: v < 3, " ms"),
    Target("stream chunk: accumulator per text chunk (best)", "chunks", _get("text_accumulator_us_best"),
           "< 1 us (0.94 before the dialects)", lambda v: v < 1, " us"),
    Target("stream chunk: accumulator per tool-argument chunk (best)", "chunks",
           _get("arguments_accumulator_us_best"), "< 1.3 us (1.25 before)", lambda v: v < 1.3, " us"),
    Target("stream chunk: SSE + JSON + accumulator per text chunk (best)", "chunks", _get("text_us_per_chunk_best"),
           "", None, " us"),
    Target("shell grammar: one command line parsed for the permission check (median)", "shell", _get("parse_us"),
           "< 1000 µs", lambda v: v < 1000, " µs"),
    Target("shell grammar: the same, p99", "shell", _get("parse_p99_us"), "", None, " µs"),
    Target("shell grammar: first parse (loads tree-sitter-bash)", "shell", _get("first_parse_ms"), "", None, " ms"),
    Target("batch: overhead per task over a plain `-p` run (1 worker)", "batch", _get("overhead_per_task_ms"),
           "< 150 ms", lambda v: v < 150, " ms"),
    Target("batch: per task around its session (worktree, commit, diff, result line)", "batch",
           _get("around_session_ms"), "", None, " ms"),
    Target("batch: CPU per task beyond a plain `-p` run (batch and children)", "batch",
           _get("cpu_overhead_per_task_ms"), "", None, " ms"),
    Target("batch: its own start and summary, once per batch", "batch", _get("batch_own_ms"), "", None, " ms"),
    Target("batch: 3,000-file repository, 8 tasks over 4 workers: wall time (answers at once)", "batch",
           _get("big_wall_s"), "", None, " s"),
    Target("batch: 3,000-file repository: a task's session (its first checkpoint starts from the checkout)",
           "batch", _get("big_session_s"), "", None, " s"),
    Target("batch: 3,000-file repository: checkpoint storage per task", "batch",
           _get("big_checkpoint_mb_per_task"), "", None, " MB"),
    Target("batch: CPU of one `agentica -p` run (bounds N workers on this machine's cores)", "batch",
           _get("cpu_per_plain_p_s"), "", None, " s"),
    Target("batch: tasks per task time, N=2 workers (1 s answers; sessions forked from the zygote; median of 3 "
           "batches of 2N tasks)", "batch",
           _get("throughput_2"), ">= 1.8", lambda v: v >= 1.8, ""),
    Target("batch: tasks per task time, N=4 workers", "batch", _get("throughput_4"), ">= 3.6", lambda v: v >= 3.6, ""),
    Target("batch: tasks per task time, N=8 workers", "batch", _get("throughput_8"), ">= 7.2", lambda v: v >= 7.2, ""),
    Target("batch: command start -> zygote ready (median of 7 one-task batches; 2N tasks reach 0.9 N only "
           "when <= ~0.24 s)", "batch", _get("t_ready_s"), "", None, " s"),
    Target("batch: tasks per task time, N=8 workers over 5N tasks (steady state; the 2N rows above keep "
           "their targets)", "batch", _get("throughput_long_8"), "", None, ""),
    *(Target(f"batch: tasks per task time once running, N={n} (the tasks started after the first one ended: "
             "no batch or zygote start in them)", "batch", _get(f"steady_throughput_{n}"), f">= {0.9 * n:.1f}",
             lambda v, n=n: v >= 0.9 * n, "") for n in (2, 4, 8)),
    Target("batch: CPU per task, N=8 (zygote)", "batch", _get("cpu_per_task_8_s"), "", None, " s"),
    Target("batch: tasks per task time, N=8, each session a process of its own (AGENTICA_BATCH_ZYGOTE=0)", "batch",
           _get("throughput_process_8"), "", None, ""),
    Target("batch: CPU per task, N=8, each session a process of its own", "batch",
           _get("cpu_per_task_process_8_s"), "", None, " s"),
    Target("batch: load average when the N=8 run started", "batch", _get("load_8"), "", None, ""),
    Target("acp: start, spawn to `initialize` answered (one run)", "acp", _get("start_s"), "", None, " s"),
    Target("acp: session/new answered (one run)", "acp", _get("new_session_ms"), "", None, " ms"),
    Target("acp: end of stdin to the process's end (one run)", "acp", _get("end_ms"), "", None, " ms"),
    Target("acp: first prompt to first update, over the model", "acp", _get("first_prompt_ms"), "< 50 ms",
           lambda v: v < 50, " ms"),
    Target("acp: later prompts to first update, over the model (median)", "acp", _get("warm_median_ms"),
           "< 50 ms", lambda v: v < 50, " ms"),
    Target("Claude Agent SDK: query() to first answer, beyond the model (median)", "sdk",
           _get("first_answer_beyond_model_ms"), "< 1000 ms", lambda v: v < 1000, " ms"),
    Target("Claude Agent SDK: query() to first message (system/init, median)", "sdk", _get("first_message_ms"), "",
           None, " ms"),
    Target("Claude Agent SDK: agentica's CPU time for a one-turn session (median)", "sdk", _get("agentica_cpu_ms"),
           "", None, " ms"),
]


def run_bench(name: str, script: str) -> tuple[dict[str, Any] | None, float]:
    print(f"\n##### {name}: {script}", flush=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / script)], stdout=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
        else:
            print(line)
    if proc.returncode != 0:
        print(f"!! {script} failed with exit code {proc.returncode}")
        return None, elapsed
    return result, elapsed


def rows(chosen: list[str], results: dict[str, dict[str, Any]]) -> list[Row]:
    """The table's rows for the benches that were chosen, in TARGETS order."""
    table = []
    for target in TARGETS:
        if target.bench not in chosen:
            continue
        value = target.figure(results.get(target.bench, {}))
        if value is None:
            table.append(Row(target.label, target.limit, "(not measured)", ""))
            continue
        shown = f"{value:.1f}{target.unit}" if abs(value) < 100 else f"{value:.0f}{target.unit}"
        verdict = "" if target.met is None else ("ok" if target.met(value) else "MISSED")
        table.append(Row(target.label, target.limit, shown, verdict))
    return table


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Run the benchmarks and write the performance table.")
    parser.add_argument("benches", nargs="*", metavar="BENCH", help=f"some of: {', '.join(BENCHES)} (default: all)")
    parser.add_argument("--write", type=Path, metavar="PAGE",
                        help="write the table into PAGE (default: docs/performance.md when every bench runs)")
    parser.add_argument("--no-write", action="store_true", help="only print the table")
    opts = parser.parse_args(argv)
    chosen = opts.benches or list(BENCHES)
    unknown = [n for n in chosen if n not in BENCHES]
    if unknown:
        print(f"unknown bench(es): {', '.join(unknown)}; choose from {', '.join(BENCHES)}", file=sys.stderr)
        return 2
    problem = import_problem(sys.executable)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    page = None if opts.no_write else (opts.write or (PAGE if not opts.benches else None))
    print(f"machine: {machine()}")
    speed_ms = stdlib_import_ms()
    print(f"import speed: a fresh interpreter's standard-library imports took {speed_ms:.0f} ms "
          f"(median of {IMPORT_SPEED_RUNS})")
    results: dict[str, dict[str, Any]] = {}
    failed = []
    for name in chosen:
        result, elapsed = run_bench(name, BENCHES[name])
        print(f"({name} took {elapsed:.0f} s)")
        if result is None:
            failed.append(name)
        else:
            results[name] = result

    block = render(rows(chosen, results), environment(speed_ms), chosen, failed)
    print("\n" + block)
    if page is not None:
        write(block, page)
        print(f"\nwrote the table into {page}")
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
