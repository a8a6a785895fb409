"""Server-sent events to `data` payloads, for the chat completions stream.

The `openai` SDK's own stream (`AsyncStream`) runs every chunk through four layers of async
generators and builds a `ServerSentEvent` object per event before we parse its JSON: about
half a millisecond per model request on a 2-core machine, for the four or five chunks a tool
call takes. This decoder does the same parsing (the WHATWG event-stream rules the SDK
follows: CR, LF or CRLF line ends, `:` comments, `data:` lines joined by newlines, an event
ending at a blank line, an unfinished event at the end of the stream dropped) over bytes,
with no per-line objects. Fields other than `data` (`event`, `id`, `retry`) are ignored:
chat completions do not use them.
"""

from __future__ import annotations


class SseDecoder:
    """Feed it the body's bytes as they come; get back the complete events' data."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the start of a line not ended yet
        self._data: list[bytes] = []  # the `data:` lines of the event being read

    def feed(self, chunk: bytes) -> list[bytes]:
        if not chunk:
            return []
        if b"\n" not in chunk and b"\r" not in chunk:
            self._pending.append(chunk)  # a long line in many pieces: joined once, when it ends
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending = []
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):  # maybe the first half of a CRLF: decide with the next chunk
                self._pending.append(b"\r")
                chunk = chunk[:-1]
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        rest = lines.pop()
        if rest:
            self._pending.insert(0, rest)
        return self._lines(lines)

    def _lines(self, lines: list[bytes]) -> list[bytes]:
        events: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data = self._data = []
                continue
            if line.startswith(b"data"):
                field, _, value = line.partition(b":")
                if field == b"data":
                    data.append(value[1:] if value.startswith(b" ") else value)
            # a comment (`: keep-alive`) or another field: nothing to keep
        return events
