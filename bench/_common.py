"""Helpers shared by the bench scripts: machine description, statistics, result line.

Every bench prints its figures for people, then one line `RESULT {json}` that
`bench/run_all.py` collects into the summary table.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.system()}"


def python_speed_ms(steps: int = 3_000_000, tries: int = 3) -> float:
    """How fast this machine runs plain Python now: the best of `tries` loops of `steps`
    additions, in ms. Import-bound figures (start-up, a batch's zygote) scale with it, so two
    tables measured on machines of one name (a shared VM's host varies) compare through it."""
    import time

    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        total = 0
        for n in range(steps):
            total += n
        best = min(best, time.perf_counter() - start)
    return best * 1000


def print_machine(title: str) -> None:
    print(f"== {title}")
    print(f"machine: {machine()}")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def emit_result(name: str, figures: dict[str, Any]) -> None:
    print("RESULT " + json.dumps({"bench": name, **figures}))


def agentica_command() -> list[str]:
    """The installed `agentica` console script next to this interpreter, else `python -m`."""
    script = Path(sys.executable).with_name("agentica")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentica_cli.cli.app"]
