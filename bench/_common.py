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


STDLIB_IMPORTS = "import asyncio, dataclasses, email.message, http.client, json, pathlib, ssl, subprocess, typing"


IMPORT_SPEED_RUNS = 7  # stdlib_import_ms takes the median of this many starts


def stdlib_import_ms(runs: int = IMPORT_SPEED_RUNS) -> float:
    """How fast this machine starts Python and imports modules now: a fresh isolated interpreter
    importing STDLIB_IMPORTS (code no commit of ours changes), median of `runs`, in ms. The
    start-up and import figures grow and shrink with it: the host behind a shared VM of one
    name varies (a plain arithmetic loop does not show it: on 2026-12-03 it ran 3x faster within
    an hour while `-p`'s start stayed as slow)."""
    import subprocess
    import time

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", STDLIB_IMPORTS], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def folder_bytes(path: Path) -> int:
    """The bytes of every file under `path` (0 when it does not exist)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


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
