"""Cutting an oversized MCP message down while it streams in, without parsing it.

One JSON-RPC message is one line, and a tool's 50 MB text arrives as one line that carries it
twice (content and structuredContent). Held whole, decoded, parsed and validated it took ~740
MB. `Truncator` is fed the line's bytes as they come and keeps the message's whole structure
(the envelope: id, result, isError, every key and short value) but only the first
`string_cap` bytes of each long string, followed by a notice of how much of it was cut; a
long `data` or `blob` string (an image's, a resource's base64, useless cut) is emptied and its
item replaced by a notice in `finish`. So what the SDK parses is a well-formed, small message
(a few MB) and the model learns what it did not get.

It scans with bytes.find, not a JSON parser: outside strings it copies what it sees (and
notes the key before a string); inside one it looks for the closing quote, minding escapes.
The cut message stays under `message_cap` bytes: strings keep less once it is near. Structure
itself over it (a huge array of numbers) is not cut but refused: the message becomes a
JSON-RPC error for the same id, so the caller's request ends with a reason.
"""

from __future__ import annotations

import json
import re
from typing import Any

STRING_CAP = 2 * 1024 * 1024  # bytes kept of one long string (the result budget keeps ~100 KB of it for the model)
MESSAGE_CAP = 6 * 1024 * 1024  # bytes of the whole cut message; strings keep less once it is near
_RESERVE = 256 * 1024  # of MESSAGE_CAP, left for the structure after the strings (closing brackets, id, notices)
_BINARY_KEYS = (b"data", b"blob")  # base64: kept whole or not at all
_TAIL = 4096
_BRACKETS = re.compile(rb"[\[\]{}]")
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')


def _trim_cut(text: bytearray) -> None:
    """Drop from the end of a string cut mid-way what would make it invalid: a lone backslash
    (an escape whose second half was cut), a partial or high-surrogate \\u escape, a partial
    UTF-8 sequence."""
    for _ in range(3):
        run = len(text) - len(text.rstrip(b"\\"))
        if run % 2:
            del text[-1]
        tail = bytes(text[-12:])
        at = tail.rfind(b"\\u")
        high_surrogate = re.fullmatch(rb"\\u[dD][89abAB][0-9a-fA-F]{2}", tail[at:]) is not None
        if at >= 0 and (len(tail) - at < 6 or high_surrogate):  # partial, or a pair's first half
            del text[len(text) - (len(tail) - at):]
            continue
        break
    # UTF-8: a lead byte whose sequence is incomplete
    for back in range(1, min(4, len(text)) + 1):
        byte = text[-back]
        if byte < 0x80:
            break
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            if need > back:
                del text[-back:]
            break


class Truncator:
    def __init__(self, string_cap: int = STRING_CAP, message_cap: int = MESSAGE_CAP):
        self.string_cap = string_cap
        self.message_cap = message_cap
        self.out = bytearray()
        self.total = 0  # bytes fed
        self.in_string = False
        self.stack: list[int] = []  # open brackets, b"{" or b"[" (to tell keys, which are never cut)
        self.last_structure = 0  # the last non-blank byte outside strings
        self.is_key = False
        self.key: bytes | None = None  # the key before the current value
        self.last_string: bytes | None = None  # the last short string (a key when ':' follows)
        self.string_key: bytes | None = None
        self.string_start = 0
        self.kept = 0
        self.dropped = 0
        self.odd_backslashes = False  # the string's bytes so far end in an odd run of backslashes
        self.cut_strings = 0
        self.cut_bytes = 0
        self.binary_cuts: list[int] = []
        self.overflow = False
        self.head = b""
        self.tail = bytearray()

    # -- feeding ------------------------------------------------------------------------

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        data = bytes(chunk)
        self.total += len(data)
        if len(self.head) < _TAIL:
            self.head += data[:_TAIL - len(self.head)]
        self.tail += data[-_TAIL:]
        del self.tail[:-_TAIL]
        i, n = 0, len(data)
        while i < n:
            if not self.in_string:
                j = data.find(b'"', i)
                end = n if j < 0 else j
                self._structure(data[i:end])
                if j < 0:
                    return
                self._open_string()
                i = j + 1
            else:
                i = self._string(data, i)

    def _emit(self, data: bytes) -> None:
        if self.overflow:
            return
        self.out += data
        if len(self.out) > self.message_cap:
            self.overflow = True

    def _structure(self, segment: bytes) -> None:
        if not segment:
            return
        self._emit(segment)
        stripped = segment.strip()
        if not stripped:
            return
        if stripped.startswith(b":") and self.last_string is not None:
            self.key = self.last_string
        elif not stripped.endswith(b":"):
            self.key = None
        for byte in _BRACKETS.findall(stripped):  # which strings are keys (never cut)
            if byte in b"{[":
                self.stack.append(byte[0])
            elif self.stack:
                self.stack.pop()
        self.last_structure = stripped[-1]
        self.last_string = None

    def _open_string(self) -> None:
        self._emit(b'"')
        self.in_string = True
        self.string_start = len(self.out)
        after_colon = self.last_structure == 0x3A  # ':'
        self.is_key = bool(self.stack) and self.stack[-1] == 0x7B and self.last_structure in (0x7B, 0x2C)
        self.string_key = self.key if after_colon else None
        self.kept = self.dropped = 0
        self.odd_backslashes = False

    def _string(self, data: bytes, i: int) -> int:
        """Consume string bytes from data[i:]; the index after what was consumed."""
        n = len(data)
        k = i
        close = -1
        while True:
            q = data.find(b'"', k)
            if q < 0:
                break
            run = 0
            p = q - 1
            while p >= i and data[p] == 0x5C:  # backslash
                run += 1
                p -= 1
            if p < i and self.odd_backslashes:  # the run goes on from the previous chunk
                run += 1
            if run % 2 == 0:
                close = q
                break
            k = q + 1
        end = n if close < 0 else close
        piece = data[i:end]
        if piece:
            room = min(len(piece) if self.is_key else self.string_cap - self.kept,
                       self.message_cap - _RESERVE - len(self.out))
            if room > 0 and not self.overflow:
                take = piece[:room]
                self.out += take
                self.kept += len(take)
                self.dropped += len(piece) - len(take)
            else:
                self.dropped += len(piece)
            run = len(piece) - len(piece.rstrip(b"\\"))
            self.odd_backslashes = (run % 2 == 1) != (self.odd_backslashes and run == len(piece))
        if close < 0:
            return n
        self._close_string()
        return close + 1

    def _close_string(self) -> None:
        self.in_string = False
        if self.dropped:
            self.cut_strings += 1
            self.cut_bytes += self.dropped
            if not self.overflow:
                if self.string_key in _BINARY_KEYS:
                    self.binary_cuts.append(self.kept + self.dropped)
                    del self.out[self.string_start:]
                else:
                    kept = self.out[self.string_start:]
                    _trim_cut(kept)
                    del self.out[self.string_start:]
                    self.out += kept
                    self.out += (f"\\n\\n[agentica: {self.dropped:,} more bytes of this text were cut: the MCP "
                                 "server's message was too large to keep whole]").encode()
            self.last_string = None
        else:
            text = bytes(self.out[self.string_start:])
            self.last_string = text if len(text) <= 64 else None
        self._emit(b'"')
        self.last_structure = 0x22  # '"'

    # -- the result ---------------------------------------------------------------------

    @property
    def cut(self) -> bool:
        return self.cut_strings > 0 or self.overflow

    def finish(self) -> bytes:
        """The message to parse instead (no newline): the cut message, or an error for its id."""
        if not self.overflow and not self.in_string:
            text = bytes(self.out)
            if not self.binary_cuts:
                return text
            try:
                message = json.loads(text)
            except ValueError:
                return self._error()
            self._replace_binary(message)
            return json.dumps(message, ensure_ascii=False).encode()
        return self._error()

    def _replace_binary(self, message: Any) -> None:
        cuts = iter(self.binary_cuts)
        result = message.get("result") if isinstance(message, dict) else None
        if not isinstance(result, dict):
            return
        for field in ("content", "contents"):
            items = result.get(field)
            if not isinstance(items, list):
                continue
            for index, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                for key in ("data", "blob"):
                    if item.get(key) == "":
                        size = next(cuts, 0)
                        what = item.get("mimeType") or item.get("type") or "binary"
                        items[index] = {"type": "text", "text": f"[agentica: a {what} item of {size:,} bytes of "
                                        "base64 was left out: the MCP server's message was too large to keep whole]"}
                        break

    def _error(self) -> bytes:
        found = _ID.search(self.head) or None
        if found is None:
            matches = list(_ID.finditer(bytes(self.tail)))
            found = matches[-1] if matches else None
        ident = json.loads(found.group(1)) if found is not None else None
        return json.dumps({"jsonrpc": "2.0", "id": ident, "error": {
            "code": -32603, "message": f"agentica: the MCP server's message was {self.total:,} bytes, too large "
            "to read (its structure alone is over the limit); ask for less at a time"}}).encode()
