"""Bounded capture of a command's output: the first and last bytes, and how much was skipped.

Whatever a command prints, at most HEAD_BYTES + TAIL_BYTES (+ one chunk) are held, so
`yes | head -c 50000000` costs kilobytes, not 50 MB.
"""

from __future__ import annotations

from collections import deque

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
