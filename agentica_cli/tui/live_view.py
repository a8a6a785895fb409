"""The moving parts of the REPL's live area: a line per running tool (with the last lines of
its output), and the line that says the model is being waited for.

Both are redrawn by rich's Live about ten times a second from its own thread, so each
computes its elapsed time when drawn and reads only snapshots (a tuple swapped whole) of
what the event handler changes. Every line is cut at the terminal's edge (`…`) rather than
wrapped: the live area must keep a known height to redraw cleanly.
"""

from __future__ import annotations

import math
import re
import time

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.summaries import format_elapsed
from agentica_cli.tui.wrapping import fit_line

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TAIL_LINES = 5  # of a running command's output
INTERRUPT_HINT = "esc/ctrl-c to interrupt"
_RETRY_DELAY = re.compile(r"retrying in (\d+(?:\.\d+)?) ?s\b")
_MAX_PARTIAL = 2000  # characters of an unfinished output line kept (a progress bar never ends its line)


def spinner_frame(now: float) -> str:
    return FRAMES[int(now * 12.5) % len(FRAMES)]


def _one_line(*parts: tuple[str, str]) -> Text:
    line = Text.assemble(*parts)
    line.no_wrap = True
    line.overflow = "ellipsis"
    return line


def last_frame(line: str) -> str:
    """What a terminal would show of an output line: a progress bar redraws itself after
    `\\r`, so only the text after the last one counts. Made safe to print."""
    line = line.rstrip("\r")
    if "\r" in line:
        line = line.rsplit("\r", 1)[-1]
    return safe_text(line, keep_newlines=False)


class RunningTool:
    """A running call: spinner, label, elapsed time, and the last lines it printed."""

    def __init__(self, label: str, indent: str):
        self.label = label
        self.indent = indent
        self.started = time.monotonic()
        self.tail: tuple[str, ...] = ()
        self.partial = ""  # output after the last newline

    def add_output(self, text: str) -> None:
        *complete, partial = (self.partial + text).split("\n")
        self.partial = partial[-_MAX_PARTIAL:]
        if complete:
            self.tail = (*self.tail, *(last_frame(line) for line in complete[-TAIL_LINES:]))[-TAIL_LINES:]

    def visible_lines(self) -> list[str]:
        """The last lines of its output, as shown under its spinner."""
        lines = list(self.tail)
        if self.partial.strip():
            lines = [*lines, last_frame(self.partial)][-TAIL_LINES:]
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        now = time.monotonic()
        elapsed = "  " + format_elapsed(now - self.started)
        room = max(10, options.max_width - len(self.indent) - 2 - len(elapsed))  # the clock stays visible
        label = self.label if len(self.label) <= room else self.label[: room - 1] + "…"
        yield _one_line((self.indent, ""), (spinner_frame(now) + " ", "cyan"), (label, "bold"), (elapsed, "dim"))
        room = options.max_width - len(self.indent) - 4
        for line in self.visible_lines():  # padding squeezed before anything is cut (wrapping.fit_line)
            yield _one_line((self.indent + "    ", ""), (fit_line(line, room), "dim"))


class ModelWait:
    """From a model request's start until its reply is complete: elapsed time, tokens
    received so far (estimated from characters: the API counts them only at the end), and
    a retry's countdown."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.text_chars = 0
        self.reasoning_chars = 0
        self.retry_message = ""
        self.retry_until = 0.0

    def received(self, chars: int, *, reasoning: bool = False) -> None:
        if reasoning:
            self.reasoning_chars += chars
        else:
            self.text_chars += chars

    def retrying(self, message: str, delay: float | None) -> None:
        """A retry notice: count down its wait. `delay` is the notice's own field when it has
        one; otherwise the `retrying in N s` of its message."""
        match = _RETRY_DELAY.search(message)
        if delay is None and match:
            delay = float(match.group(1))
        self.retry_message = safe_text(message, keep_newlines=False)
        self.retry_until = time.monotonic() + (delay or 0.0)
        self.text_chars = self.reasoning_chars = 0  # the reply starts again

    def status(self, now: float) -> str:
        if now < self.retry_until:
            left = f"retrying in {math.ceil(self.retry_until - now)} s"  # 3, 2, 1
            if _RETRY_DELAY.search(self.retry_message):
                return _RETRY_DELAY.sub(left, self.retry_message, count=1)
            return f"{self.retry_message} ({left})"
        tokens = (self.text_chars + self.reasoning_chars + 3) // 4
        if not tokens:
            return f"Waiting for the model · {format_elapsed(now - self.started)}"
        doing = "Writing" if self.text_chars else "Thinking"
        return f"{doing} · {format_elapsed(now - self.started)} · ~{tokens:,} tokens"

    def __rich__(self) -> RenderableType:
        now = time.monotonic()
        return _one_line(
            (spinner_frame(now) + " ", "cyan"),
            (self.status(now), ""),
            (" · " + INTERRUPT_HINT, "dim"),
        )
