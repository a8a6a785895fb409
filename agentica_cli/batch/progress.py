"""How a running batch shows itself on stderr: a live rich display on a terminal (one line per
running task, a bar, done/failed counts, tokens and cost so far, the shared back-off), plain
lines otherwise (CI logs, pipes); and the summary table at the end. Rich is imported here only."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from agentica_cli.batch.limiter import paused_for
from agentica_cli.batch.results import Record
from agentica_cli.batch.summary import BatchSummary, plain


class Progress(Protocol):
    def begin(self, total: int, skipped: int, workers: int) -> None: ...

    def started(self, key: str) -> None: ...

    def phase(self, key: str, phase: str) -> None: ...

    def usage(self, key: str, tokens: int, cost: float | None) -> None: ...

    def finished(self, record: Record) -> None: ...

    def note(self, text: str) -> None: ...

    def end(self) -> None: ...


@dataclass
class _Running:
    since: float
    phase: str = "queued"
    tokens: int = 0
    cost: float | None = None


class _Tally:
    """The counts both displays show."""

    def __init__(self, backoff_file: Path | None) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.skipped = 0
        self.finished = 0
        self.by_status: dict[str, int] = {}
        self.tokens = 0
        self.cost: float | None = None
        self.running: dict[str, _Running] = {}
        self.backoff_file = backoff_file

    def record(self, record: Record) -> None:
        key = f"{record['id']}#{record.get('attempt', 1)}"
        self.running.pop(key, None)
        self.finished += 1
        self.by_status[record["status"]] = self.by_status.get(record["status"], 0) + 1
        self.tokens += int((record.get("tokens") or {}).get("total") or 0)
        if isinstance(record.get("cost"), (int, float)):
            self.cost = (self.cost or 0.0) + record["cost"]

    def live_tokens(self) -> tuple[int, float | None]:
        tokens = self.tokens + sum(r.tokens for r in self.running.values())
        costs = [c for c in [self.cost, *(r.cost for r in self.running.values())] if c is not None]
        return tokens, (sum(costs) if costs else None)

    def counts_text(self) -> str:
        tokens, cost = self.live_tokens()
        statuses = " · ".join(f"{status} {n}" for status, n in sorted(self.by_status.items()))
        text = f"{self.finished}/{self.total}" + (f" · {statuses}" if statuses else "") + f" · {tokens:,} tokens"
        if cost is not None:
            text += f" · ${cost:.4f}"
        wait = paused_for(self.backoff_file) if self.backoff_file is not None else 0.0
        if wait > 0:
            text += f" · rate-limited: every worker waits {wait:.0f} s"
        return text


class PlainProgress:
    """One line per event, for logs."""

    def __init__(self, stream: TextIO | None = None, backoff_file: Path | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tally = _Tally(backoff_file)

    def _say(self, text: str) -> None:
        self.stream.write(f"agentica batch: {text}\n")
        self.stream.flush()

    def begin(self, total: int, skipped: int, workers: int) -> None:
        self.tally.total, self.tally.skipped = total, skipped
        already = f" ({skipped} already in the results file)" if skipped else ""
        self._say(f"{total} attempt(s) to run{already}, {workers} worker(s)")

    def started(self, key: str) -> None:
        with self.tally.lock:
            self.tally.running[key] = _Running(time.monotonic())
        self._say(f"start {key}")

    def phase(self, key: str, phase: str) -> None:
        with self.tally.lock:
            if key in self.tally.running:
                self.tally.running[key].phase = phase

    def usage(self, key: str, tokens: int, cost: float | None) -> None:
        with self.tally.lock:
            if key in self.tally.running:
                self.tally.running[key].tokens, self.tally.running[key].cost = tokens, cost

    def finished(self, record: Record) -> None:
        with self.tally.lock:
            self.tally.record(record)
            counts = self.tally.counts_text()
        key = f"{record['id']}#{record.get('attempt', 1)}"
        error = f" ({plain(record['error'])[:200]})" if record.get("error") and record["status"] != "done" else ""
        self._say(f"{record['status']} {key} in {record.get('duration_s', 0):.1f} s{error} [{counts}]")

    def note(self, text: str) -> None:
        self._say(plain(text))

    def end(self) -> None:
        pass


class RichProgress(PlainProgress):
    """The live display: refreshed four times a second by rich's own thread."""

    def __init__(self, backoff_file: Path | None = None) -> None:
        super().__init__(sys.stderr, backoff_file)
        from rich.console import Console
        from rich.live import Live

        self._started = time.monotonic()
        self.console = Console(stderr=True)
        self.live = Live(console=self.console, refresh_per_second=4, transient=True,
                         get_renderable=self._render)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        with self.tally.lock:
            running = sorted(self.tally.running.items(), key=lambda item: item[1].since)
            counts = self.tally.counts_text()
            total, finished = self.tally.total, self.tally.finished
        now = time.monotonic()
        rows = Table.grid(padding=(0, 2))
        for key, state in running:
            cost = f"${state.cost:.4f}" if state.cost is not None else ""
            rows.add_row(Text(key, style="bold"), Text(state.phase, style="cyan"), f"{now - state.since:5.1f} s",
                         f"{state.tokens:,} tokens", cost)
        head = Table.grid(padding=(0, 1))
        head.add_row(ProgressBar(total=max(total, 1), completed=finished, width=30), Text(counts),
                     Text(f"{now - self._started:.0f} s", style="dim"))
        return Group(head, rows)

    def begin(self, total: int, skipped: int, workers: int) -> None:
        self.tally.total, self.tally.skipped = total, skipped
        already = f" ({skipped} already in the results file)" if skipped else ""
        self.console.print(f"agentica batch: {total} attempt(s) to run{already}, {workers} worker(s)",
                           markup=False, highlight=False)
        self.live.start()

    def started(self, key: str) -> None:
        with self.tally.lock:
            self.tally.running[key] = _Running(time.monotonic())

    def finished(self, record: Record) -> None:
        from rich.text import Text

        with self.tally.lock:
            self.tally.record(record)
        style = {"done": "green", "cancelled": "yellow"}.get(record["status"], "red")
        key = f"{record['id']}#{record.get('attempt', 1)}"
        line = Text.assemble((f"{record['status']:>12} ", style), key, f"  {record.get('duration_s', 0):.1f} s")
        if record.get("error") and record["status"] != "done":
            line.append(f"  {plain(record['error'])[:200]}", style="dim")
        self.live.console.print(line)

    def note(self, text: str) -> None:
        self.live.console.print(plain(text), markup=False, highlight=False)

    def end(self) -> None:
        self.live.stop()


def make_progress(backoff_file: Path | None, *, plain_lines: bool | None = None) -> Progress:
    """The live display on a terminal, plain lines elsewhere (or when `plain_lines`)."""
    use_plain = plain_lines if plain_lines is not None else not sys.stderr.isatty()
    return PlainProgress(sys.stderr, backoff_file) if use_plain else RichProgress(backoff_file)


SUMMARY_MODULES = ("rich.cells",)  # what print_summary imports (display widths: a CJK letter takes two)
_SUMMARY_COLUMNS = ("task", "status", "passed", "files", "tokens", "cost", "time", "branch")
_RIGHT = {"files", "tokens", "cost", "time"}
_SHRINK = ("branch", "task")  # the columns cut (with "…") when the table is wider than the screen
_STATUS_COLOUR = {"done": "32", "cancelled": "33"}  # the rest red


def prefetch_summary() -> None:
    """Import what print_summary needs, so that a batch's end does not wait for it:
    runner.run_local calls this while every session waits for its model."""
    import importlib

    for name in SUMMARY_MODULES:
        importlib.import_module(name)


def _clip(text: str, width: int) -> str:
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1) + "…"  # (a wide letter cut in two becomes a space)


def _screen_width(stream: TextIO) -> int:
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else 80


def print_summary(summary: BatchSummary, stream: TextIO | None = None) -> None:
    """The table of a batch's results: per task its status, which attempts passed their check,
    files changed, tokens, cost, time and branch; the totals below. Drawn by hand, not by rich:
    rich took ~0.5 ms a row (8-10 ms for 16 tasks, at the very end of every batch); this fits
    the screen's width the same way (the branch, then the task, cut with "…")."""
    from rich.cells import cell_len

    out = stream or sys.stdout
    colour = out.isatty() and not os.environ.get("NO_COLOR")
    rows = [[plain(task.id), task.status, f"{','.join(map(str, task.passed)) or '-'} of {len(task.statuses)}",
             str(len(task.files)), f"{task.tokens:,}", f"${task.cost:.4f}" if task.cost is not None else "-",
             f"{task.duration_s:.1f} s", plain(", ".join(task.branches)) or "-"] for task in summary.tasks]
    widths = [max([cell_len(name), *(cell_len(row[n]) for row in rows)]) for n, name in enumerate(_SUMMARY_COLUMNS)]
    excess = sum(widths) + 3 * (len(widths) - 1) - _screen_width(out)
    for name in _SHRINK:
        n = _SUMMARY_COLUMNS.index(name)
        cut = min(max(excess, 0), widths[n] - max(cell_len(name), 4))
        widths[n] -= cut
        excess -= cut

    def cell(text: str, n: int) -> str:
        text = _clip(text, widths[n])
        pad = " " * (widths[n] - cell_len(text))
        return pad + text if _SUMMARY_COLUMNS[n] in _RIGHT else text + pad

    def paint(code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if colour else text

    lines = [" ┃ ".join(paint("1", cell(name, n)) for n, name in enumerate(_SUMMARY_COLUMNS)).rstrip(),
             "━╇━".join("━" * width for width in widths)]
    for row, task in zip(rows, summary.tasks, strict=True):
        cells = [cell(text, n) for n, text in enumerate(row)]
        cells[1] = paint(_STATUS_COLOUR.get(task.status, "31"), cells[1])
        lines.append(" │ ".join(cells).rstrip())
    lines.append(summary.line())
    out.write("\n".join(lines) + "\n")
    out.flush()
