"""Keys pressed while a turn runs: Esc interrupts it, typed text waits for the next prompt.

During a turn the input line is not running, so the terminal would echo keys into the live
area (a `^C` at the end of a full line scrolls it and leaves part of it behind). Instead the
terminal is put in non-canonical mode without echo, and the keys are read here as they come:

- a lone Esc interrupts the turn (as Ctrl-C does; Ctrl-C still arrives as SIGINT);
- printable text, Backspace and Ctrl-U edit a type-ahead buffer that the live area shows
  under the spinner; Enter ends a message, which is sent when the turn is over;
- escape sequences (arrow keys, bracketed-paste markers) are dropped, pasted text is kept.

The approval question reads the terminal itself: `paused()` stops reading meanwhile.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ESC = "\x1b"


class TurnInput:
    def __init__(self, on_escape: Callable[[], None], on_change: Callable[[str], None] | None = None):
        self.on_escape = on_escape
        self.on_change = on_change
        self.text = ""  # the line being typed
        self.messages: list[str] = []  # lines ended with Enter, in order
        self.last_key_at = 0.0  # monotonic time of the last key read (for the latency benchmark)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._fd: int | None = None
        self._saved: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reading = False
        self._pending_escape = ""  # an escape sequence split across reads

    # -- terminal mode ------------------------------------------------------------------

    def __enter__(self) -> TurnInput:
        try:
            import termios

            fd = sys.stdin.fileno()
            saved = termios.tcgetattr(fd)
        except (ImportError, OSError, ValueError):  # not a terminal: nothing to read or hide
            return self
        from agentica_cli.tui.terminal import quiet_attributes

        try:
            termios.tcsetattr(fd, termios.TCSANOW, quiet_attributes(saved))
        except termios.error:
            return self
        self._fd, self._saved = fd, saved
        self._loop = asyncio.get_running_loop()
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()
        if self._fd is not None:
            import termios

            try:
                termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)
            except termios.error:
                pass
        self._fd = None

    def _start(self) -> None:
        if self._fd is not None and self._loop is not None and not self._reading:
            self._loop.add_reader(self._fd, self._readable)
            self._reading = True

    def _stop(self) -> None:
        if self._fd is not None and self._loop is not None and self._reading:
            self._loop.remove_reader(self._fd)
            self._reading = False

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Let another reader (the approval question) have the terminal."""
        was_reading = self._reading
        self._stop()
        try:
            yield
        finally:
            if was_reading:
                self._start()

    # -- keys -----------------------------------------------------------------------------

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 4096) if self._fd is not None else b""
        except OSError:
            self._stop()
            return
        if not data:
            self._stop()
            return
        self.last_key_at = time.monotonic()
        self.feed(self._decoder.decode(data))

    def feed(self, chunk: str) -> None:
        """Apply typed characters (one read's worth) to the buffer."""
        if chunk == ESC and not self._pending_escape:
            self.on_escape()
            return
        chunk = self._pending_escape + chunk
        self._pending_escape = ""
        before = (self.text, len(self.messages))
        i = 0
        while i < len(chunk):
            ch = chunk[i]
            if ch == ESC:
                end = _escape_end(chunk, i)
                if end is None:  # the rest of the sequence is in the next read
                    self._pending_escape = chunk[i:]
                    break
                i = end
                continue
            if ch in "\r\n":
                if self.text.strip():
                    self.messages.append(self.text)
                self.text = ""
            elif ch in "\x7f\x08":
                self.text = self.text[:-1]
            elif ch == "\x15":  # Ctrl-U
                self.text = ""
            elif ch == "\t":
                self.text += " "
            elif ch >= " ":
                self.text += ch
            i += 1
        if (self.text, len(self.messages)) != before and self.on_change is not None:
            self.on_change(self.display())

    def display(self) -> str:
        """What the live area shows: queued messages, then the line being typed."""
        queued = f"{len(self.messages)} message(s) queued · " if self.messages else ""
        return f"{queued}{self.text}" if (self.text or queued) else ""

    def take(self) -> tuple[list[str], str]:
        """(messages to send in order, the text for the next prompt), and clear both."""
        messages, text = self.messages, self.text
        self.messages, self.text = [], ""
        return messages, text


def _escape_end(chunk: str, i: int) -> int | None:
    """Index after the escape sequence at chunk[i] (CSI `ESC [ ... final`, SS3 `ESC O x`,
    or ESC + one key as Alt+key); None when it continues beyond this chunk."""
    if i + 1 >= len(chunk):
        return None
    nxt = chunk[i + 1]
    if nxt == "[":
        j = i + 2
        while j < len(chunk):
            if "\x40" <= chunk[j] <= "\x7e":
                return j + 1
            j += 1
        return None
    if nxt == "O":
        return i + 3 if i + 2 < len(chunk) else None
    return i + 2
