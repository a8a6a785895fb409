"""Checkpoints: what a snapshot of the work tree costs, and what it adds to a turn.

(a) Snapshot time on the 20,000-file, 200 MB tree of bench_files.py (a hard-linked copy, so
    the changes made here never reach it): the first snapshot (every file hashed into a new
    shadow repository), then incremental ones: nothing changed, and 5 files changed.
(b) Overhead on the 30-step loop of bench_loop.py, in a 1,000-file project: the same run
    without checkpoints, with them when the tool is read-only (a snapshot at the turn's start
    only), and when it is not (a snapshot after every one of the 30 steps).
(c) The first snapshot of the same tree as a git checkout (all committed), which borrows
    the checkout's objects and index.

    .venv/bin/python bench/bench_checkpoints.py [--runs 15]

Targets: incremental snapshot under 150 ms at p50; per-turn overhead under 10%. A missed
target is printed ("MISSED") and recorded; the exit code is non-zero only if a run failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import emit_result, folder_bytes, print_machine
from bench_files import TREE, generate_tree

SNAPSHOT_TARGET_MS = 150.0
OVERHEAD_TARGET = 0.10


def replace(path: Path, text: str) -> None:
    """Write through a new file: the copy is hard-linked to the cached tree."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@contextlib.contextmanager
def tree_copy() -> Iterator[tuple[str, Path]]:
    """A temporary folder holding a hard-linked copy of the 20,000-file tree (`tree`) and the
    AGENTICA_HOME its checkpoints go to (`home`)."""
    generate_tree()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["AGENTICA_HOME"] = str(Path(tmp) / "home")
        project = Path(tmp) / "tree"
        subprocess.run(["cp", "-al", str(TREE), str(project)], check=True)
        yield tmp, project


def bench_snapshots(runs: int) -> dict[str, float]:
    from agentica_cli.checkpoints import Checkpoints

    with tree_copy() as (tmp, project):
        checkpoints = Checkpoints(project, session_id="bench")
        start = time.perf_counter()
        checkpoints.begin_turn("first")
        first = time.perf_counter() - start
        unchanged, changed = [], []
        files = sorted(project.glob("pkg0*/sub*/mod_*.py"))
        for run in range(runs):
            start = time.perf_counter()
            checkpoints.snapshot()
            unchanged.append(time.perf_counter() - start)
            for offset in range(5):
                replace(files[(run * 5 + offset) % len(files)], f"changed in run {run}\n")
            start = time.perf_counter()
            info = checkpoints.snapshot()
            changed.append(time.perf_counter() - start)
            if info is None or len(info.files) != 5:
                raise RuntimeError(f"snapshot {run} missed changes: {info}")
        size = folder_bytes(Path(tmp) / "home")
    figures = {
        "first_ms": round(first * 1000, 1),
        "unchanged_p50_ms": round(statistics.median(unchanged) * 1000, 1),
        "changed5_p50_ms": round(statistics.median(changed) * 1000, 1),
        "shadow_mb": round(size / 2**20, 1),
    }
    print(f"(a) 20,000-file tree: first snapshot {figures['first_ms']:.0f} ms "
          f"(shadow repository {figures['shadow_mb']:.0f} MB); incremental p50 over {runs}: "
          f"nothing changed {figures['unchanged_p50_ms']:.1f} ms, 5 files changed {figures['changed5_p50_ms']:.1f} ms")
    return figures


def bench_checkout_first() -> dict[str, float]:
    """(c) The first snapshot when the tree is a git checkout with everything committed (a
    clone you run agentica in for the first time, a batch task's worktree): the shadow
    repository borrows the checkout's objects and index (checkpoints.md, How it works)."""
    from agentica_cli.checkpoints import Checkpoints

    with tree_copy() as (tmp, project):
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"]):
            subprocess.run([*git, *args], cwd=project, check=True, capture_output=True)
        start = time.perf_counter()
        Checkpoints(project, session_id="bench").begin_turn("first")
        first = time.perf_counter() - start
        size = folder_bytes(Path(tmp) / "home")
    figures = {"checkout_first_ms": round(first * 1000, 1), "checkout_shadow_mb": round(size / 2**20, 1)}
    print(f"(c) the same tree as a git checkout, all committed: first snapshot {figures['checkout_first_ms']:.0f} ms "
          f"(shadow repository {figures['checkout_shadow_mb']:.1f} MB)")
    return figures


def make_project(root: Path, files: int = 1000) -> Path:
    for i in range(files):
        path = root / f"pkg{i // 100}" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}():\n    return {i}\n" * 20)
    return root


async def loop_run(project: Path, steps: int, mode: str) -> float:
    from agentica_cli.agent import Agent, ToolConfig
    from agentica_cli.checkpoints import Checkpoints
    from agentica_cli.models import OpenAIChat
    from agentica_cli.testing import ScriptedModelServer, turns
    from agentica_cli.tools import tool

    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: the key
        """
        return f"value of {key}"

    fn = tool(name="lookup", is_read_only=True)(lookup) if mode == "read-only" else lookup
    with ScriptedModelServer([turns.repeat_tool("lookup", steps, arguments={"key": "k"}, final="done")]) as server:
        model = OpenAIChat(id="bench", api_key="x", base_url=server.base_url)
        checkpoints = None if mode == "off" else Checkpoints(project, session_id=f"bench-{mode}")
        agent = Agent(model, tools=[fn], tool_config=ToolConfig(max_turns=steps + 5), checkpoints=checkpoints)
        start = time.perf_counter()
        result = await agent.run("go")
        wall = time.perf_counter() - start
        await model.aclose()
    if result.stop_reason != "completed":
        raise RuntimeError(f"run failed: {result.stop_reason} {result.error}")
    return wall


def bench_loop(rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["AGENTICA_HOME"] = str(Path(tmp) / "home")
        project = make_project(Path(tmp) / "project")
        for mode in ("off", "read-only", "writing"):
            asyncio.run(loop_run(project, 5, mode))  # warm up: imports, the shadow repository, its index
        walls: dict[str, list[float]] = {"off": [], "read-only": [], "writing": []}
        for _ in range(rounds):  # interleaved, so a busy moment hits every mode alike
            for mode in walls:
                walls[mode].append(asyncio.run(loop_run(project, 30, mode)))
    med = {mode: statistics.median(values) for mode, values in walls.items()}
    figures = {
        "loop_off_ms": round(med["off"] * 1000, 1),
        "loop_turn_ms": round(med["read-only"] * 1000, 1),
        "loop_every_step_ms": round(med["writing"] * 1000, 1),
        "turn_overhead_pct": round((med["read-only"] / med["off"] - 1) * 100, 1),
        "every_step_overhead_pct": round((med["writing"] / med["off"] - 1) * 100, 1),
    }
    print(f"(b) 30-step loop, 1,000-file project, median of {rounds}: without checkpoints "
          f"{figures['loop_off_ms']:.0f} ms; with a snapshot per turn {figures['loop_turn_ms']:.0f} ms "
          f"({figures['turn_overhead_pct']:+.1f}%); with a snapshot after each of the 30 steps "
          f"{figures['loop_every_step_ms']:.0f} ms ({figures['every_step_overhead_pct']:+.1f}%)")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print_machine("checkpoints: snapshot time and per-turn overhead")
    if shutil.which("git") is None:
        print("FAILED: no git program")
        return 1
    # the loop rounds are cheap (~0.7 s for the three modes) and the per-turn figure is a ratio
    # of two ~80 ms medians: as many rounds as snapshot runs, so one busy moment moves it less
    figures = {**bench_snapshots(args.runs), **bench_loop(max(3, args.runs)), **bench_checkout_first()}
    snapshot_met = figures["changed5_p50_ms"] < SNAPSHOT_TARGET_MS
    overhead_met = figures["turn_overhead_pct"] < OVERHEAD_TARGET * 100
    print(f"target: incremental snapshot p50 < {SNAPSHOT_TARGET_MS:.0f} ms -> {'met' if snapshot_met else 'MISSED'}")
    print(f"target: per-turn overhead < {OVERHEAD_TARGET:.0%} -> {'met' if overhead_met else 'MISSED'}")
    emit_result("checkpoints", {**figures, "target_met": snapshot_met and overhead_met})
    return 0


if __name__ == "__main__":
    sys.exit(main())
