"""stderr written in batches while a `-p` run's event loop runs.

Python's stderr is unbuffered: every progress line (`> read_file notes.txt`, then its
result) is a write system call that wakes whoever reads the other end (a terminal, or the
parent process holding the pipe). On a busy 2-core machine that reader often takes the CPU
from agentica at once: 0.2-0.5 ms a line, two lines a tool step, the largest cost `-p`
added per step over a bare HTTP client (docs/performance.md).

While the run lasts, `sys.stderr` is a buffered writer on the same file descriptor that
flushes at most `delay` seconds after a write (and whenever someone calls flush()), so the
lines of a quick step go out in one write and a person still sees them within 50 ms.
Everything written to `sys.stderr` goes through the same buffer, so the order of lines is
kept. A write from a thread without an event loop flushes at once. On leaving, the buffer
is flushed and the real stderr restored; a crash loses at most the last `delay` of progress.
"""

from __future__ import annotations

import asyncio
import io
import sys
from typing import Any

FLUSH_DELAY = 0.05  # seconds: below what a person notices, far above a tool step


class _BatchedText(io.TextIOWrapper):
    """A TextIOWrapper that asks for a flush soon after each write."""

    batched = True  # StderrProgress does not flush after each line on such a stream

    def __init__(self, buffer: Any, *, delay: float, **kwargs: Any):
        super().__init__(buffer, **kwargs)
        self._delay = delay
        self._timer: asyncio.TimerHandle | None = None

    def write(self, text: str) -> int:
        count = super().write(text)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread, or after the loop: out now, with what came before
            self._write_out()  # (a pending timer is the loop's: left to it, it finds less to do)
        else:
            if self._timer is None:
                self._timer = loop.call_later(self._delay, self.flush)
        return count

    def flush(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self._write_out()

    def _write_out(self) -> None:
        try:
            super().flush()
        except (OSError, ValueError):
            pass  # the reader went away: progress is not worth failing the run for


class BatchedStderr:
    """`with BatchedStderr():` sys.stderr is batched inside (see the module docstring).

    When stderr has no file descriptor (replaced by a test or an embedding program) it is
    left as it is.
    """

    def __init__(self, delay: float = FLUSH_DELAY):
        self.delay = delay
        self.original: Any = None
        self.stream: _BatchedText | None = None

    def __enter__(self) -> BatchedStderr:
        self.original = sys.stderr
        try:
            fd = self.original.fileno()
        except (AttributeError, OSError, ValueError):
            return self
        raw = io.FileIO(fd, "w", closefd=False)
        self.stream = _BatchedText(
            io.BufferedWriter(raw, buffer_size=1 << 16),
            delay=self.delay,
            encoding=getattr(self.original, "encoding", None) or "utf-8",
            errors=getattr(self.original, "errors", None) or "backslashreplace",
            line_buffering=False,
        )
        sys.stderr = self.stream
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.stream is None:
            return
        self.stream.flush()
        if sys.stderr is self.stream:
            sys.stderr = self.original
        self.stream = None
