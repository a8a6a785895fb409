"""Bounded capture of a command's output: the first and last bytes, and how much was skipped.

Whatever a command prints, at most HEAD_BYTES + TAIL_BYTES (+ one chunk) are held, so
`yes | head -c 50000000` costs kilobytes, not 50 MB. `LiveOutput` forwards the output as it
comes, throttled, for a UI that shows it live.
"""

from __future__ import annotations

import asyncio
import codecs
from collections import deque
from collections.abc import Callable

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024


def _cut_end(data: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end (a character split by the byte limit)."""
    i = len(data)
    back = 0
    while i > 0 and back < 4 and (data[i - 1] & 0xC0) == 0x80:
        i -= 1
        back += 1
    if i > 0 and data[i - 1] >= 0xC0:
        lead = data[i - 1]
        need = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if back + 1 < need:
            return data[: i - 1]
    return data


def _cut_start(data: bytes) -> bytes:
    """Drop continuation bytes at the start (the rest of a character cut off by the tail)."""
    i = 0
    while i < len(data) and i < 3 and (data[i] & 0xC0) == 0x80:
        i += 1
    return data[i:]


class OutputCapture:
    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES):
        self.head_limit = head_bytes
        self.tail_limit = tail_bytes
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total_bytes = 0
        self.total_newlines = 0

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        self.total_newlines += data.count(b"\n")
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_size += len(data)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())
        if self.tail_size > self.tail_limit * 2:  # one huge chunk: trim it in place
            joined = b"".join(self.tail)[-self.tail_limit :]
            self.tail.clear()
            self.tail.append(joined)
            self.tail_size = len(joined)

    @property
    def skipped_bytes(self) -> int:
        return self.total_bytes - len(self.head) - self.tail_size

    def render(self, max_chars: int) -> str:
        """The output as text; over `max_chars`, its head and tail around a line-count marker."""
        tail = b"".join(self.tail)
        if self.skipped_bytes == 0:
            text = (bytes(self.head) + tail).decode("utf-8", errors="replace")
            if len(text) <= max_chars:
                return text
            head_text, tail_text = text[: max_chars // 2], text[-(max_chars // 2) :]
        else:
            head_text = _cut_end(bytes(self.head)).decode("utf-8", errors="replace")[: max_chars // 2]
            tail_text = _cut_start(tail).decode("utf-8", errors="replace")[-(max_chars // 2) :]
        # Cut at line boundaries when one is near, so the marker sits between whole lines.
        nl = head_text.rfind("\n")
        if nl != -1 and nl >= len(head_text) - 2000:
            head_text = head_text[: nl + 1]
        nl = tail_text.find("\n")
        if 0 <= nl < 2000:
            tail_text = tail_text[nl + 1 :]
        omitted_lines = max(0, self.total_newlines - head_text.count("\n") - tail_text.count("\n"))
        marker = f"[... {omitted_lines} lines omitted ...]"
        if not head_text.endswith("\n"):
            marker = "\n" + marker
        return f"{head_text}{marker}\n{tail_text}"


class LiveOutput:
    """Passes what a command prints, while it prints it, to `send(text)` for a live view.

    A flood of output must not slow the command: chunks are decoded and collected, and
    `send` runs at most once per `interval` with the text since its previous call (only
    the last `keep` characters of it when more came). Both streams share one view, in the
    order the chunks arrived. Runs on the event loop (the pipe protocols' thread)."""

    def __init__(self, send: Callable[[str], None], *, interval: float = 0.1, keep: int = 4000):
        self.send = send
        self.interval = interval
        self.keep = keep
        self.pending: list[str] = []
        self.pending_chars = 0
        self.last_sent = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.decoders = [codecs.getincrementaldecoder("utf-8")(errors="replace") for _ in range(2)]

    def feed(self, stream: int, data: bytes) -> None:
        """`stream` 0 is stdout, 1 is stderr (each has its own decoder: a character may be
        split across chunks)."""
        text = self.decoders[stream].decode(data)
        if not text:
            return
        self.pending.append(text)
        self.pending_chars += len(text)
        if self.pending_chars > 4 * self.keep:  # a flood between two sends: keep only its end
            self.pending = ["".join(self.pending)[-self.keep:]]
            self.pending_chars = self.keep
        if self.timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self.last_sent + self.interval - loop.time()
        if wait <= 0:
            self.flush()
        else:
            self.timer = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.pending:
            return
        text = "".join(self.pending)[-self.keep:]
        self.pending.clear()
        self.pending_chars = 0
        self.last_sent = asyncio.get_running_loop().time()
        try:
            self.send(text)
        except Exception:  # a broken live view must never break the command
            pass

    def close(self) -> None:
        """The command ended: send what is left (and any half-decoded character)."""
        for decoder in self.decoders:
            rest = decoder.decode(b"", final=True)
            if rest:
                self.pending.append(rest)
        self.flush()
