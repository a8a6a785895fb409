"""bench/run_all.py: it refuses an interpreter without the package before any bench runs, and it
writes the one performance table (with where and with what it was measured) between the
markers of a page, leaving the rest of the page alone. A small run: the prompt-size bench."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN_ALL = ROOT / "bench" / "run_all.py"
sys.path.insert(0, str(ROOT / "bench"))

from perf_table import BEGIN, END, write  # noqa: E402


def test_a_python_without_the_package_stops_before_any_bench(tmp_path: Path) -> None:
    # -S: no site-packages, so neither agentica_cli nor its dependencies can be imported
    proc = subprocess.run([sys.executable, "-S", str(RUN_ALL), "prompt"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "cannot import agentica_cli" in proc.stderr and ".venv/bin/python bench/run_all.py" in proc.stderr
    assert "#####" not in proc.stdout  # no bench was started


def test_writes_the_table_with_machine_and_versions_between_the_markers(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text(f"# Performance\n\nbefore\n\n{BEGIN}\nold table\n{END}\n\nafter\n")
    proc = subprocess.run([sys.executable, str(RUN_ALL), "prompt", "--write", str(page)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = page.read_text()
    assert text.startswith("# Performance\n\nbefore\n\n" + BEGIN) and text.endswith(END + "\n\nafter\n")
    assert "old table" not in text
    block = text[text.index(BEGIN) : text.index(END)]
    assert f"- Python: {platform.python_implementation()} {platform.python_version()}\n" in block
    assert f"openai {metadata.version('openai')}" in block and f"mcp {metadata.version('mcp')}" in block
    assert "- Machine: " in block and "- Measured: " in block and "- Benches: prompt\n" in block
    speed = r"^- Import speed: a fresh `python -I -c .import asyncio.*` took \d+ ms before the benches, \d+ ms after"
    assert re.search(speed, block, re.M)
    [row] = [line for line in block.splitlines() if line.startswith("| first request size")]
    assert row.endswith(("| ok |", "| MISSED |")) and " KB |" in row


def test_a_page_without_markers_is_an_error_and_is_left_alone(tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n")
    with pytest.raises(ValueError, match=r"no .* block to replace"):
        write(f"{BEGIN}\n{END}", page)
    assert page.read_text() == "# Performance\n"


def test_the_docs_page_has_the_markers_and_a_measured_table() -> None:
    text = (ROOT / "docs" / "performance.md").read_text()
    block = text[text.index(BEGIN) : text.index(END)]
    assert "- Dependencies: " in block and "| `agentica --version` median |" in block
