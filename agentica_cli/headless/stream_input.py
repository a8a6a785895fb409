"""`agentica -p --input-format stream-json`: user messages as JSON lines on stdin.

The line format is Claude Code's (its `--input-format stream-json`), one message a line:

    {"type": "user", "message": {"role": "user", "content": "fix the test"}}
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "what is wrong here?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR..."}}]}}

Other fields (`session_id`, `uuid`, `parent_tool_use_id`) are ignored. A line that is not
such a message becomes an `InputError` naming its line number; blank lines are skipped.

stdin is read on a thread with `os.read`, not through `sys.stdin`: messages written while a
turn runs are read (and their images decoded) at once and wait in a queue, whatever stdin
is (a pipe, a file, a terminal; a regular file cannot be watched by the event loop), and a
thread blocked in `os.read` holds no lock the interpreter needs when it exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

LINE_LIMIT = 100 * 1024 * 1024  # bytes in one line: room for a few images in base64
CHUNK = 1 << 16


@dataclass
class UserMessage:
    """One turn's input: its text and the images sent with it (fitted to the providers' limits)."""

    line: int
    text: str
    images: list[Any] = field(default_factory=list)  # agentica_cli.images.Image


@dataclass
class InputError:
    """A stdin line that is not a user message; the run goes on with the next line."""

    line: int
    problem: str

    @property
    def message(self) -> str:
        return f"stdin line {self.line}: {self.problem}"

    def to_dict(self) -> dict[str, Any]:
        """The stream-json line: the shape of the loop's `error` event, `kind` "input"."""
        return {"type": "error", "source": "", "message": self.message, "kind": "input", "status_code": None,
                "line": self.line}


def parse_line(text: str, number: int) -> UserMessage | InputError | None:
    """Line `number` of stdin as a message, an error, or None for a blank line."""
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return InputError(number, f"not JSON ({err.msg} at column {err.colno})")
    if not isinstance(data, dict):
        return InputError(number, "not a JSON object")
    kind = data.get("type")
    if kind != "user":
        shown = json.dumps(kind, ensure_ascii=False)[:60] if kind is not None else "none"
        return InputError(number, f'unknown message type {shown} (only "user" messages are read)')
    message = data.get("message")
    if not isinstance(message, dict):
        return InputError(number, 'a user message needs a "message" object with "role" and "content"')
    if message.get("role", "user") != "user":
        return InputError(number, 'message.role must be "user"')
    content = message.get("content")
    if isinstance(content, str):
        body, images = content, []
    elif isinstance(content, list):
        parsed = _blocks(content, number)
        if isinstance(parsed, InputError):
            return parsed
        body, images = parsed
    else:
        return InputError(number, "message.content must be a string or a list of content blocks")
    if not body.strip():
        return InputError(number, "the message has no text")
    return UserMessage(number, body, images)


def _blocks(blocks: list[Any], number: int) -> tuple[str, list[Any]] | InputError:
    """Text blocks joined by newlines, and the images; the text goes first and the images
    after it, whatever their order (a chat completions message keeps them in that order too)."""
    texts: list[str] = []
    images: list[Any] = []
    for index, block in enumerate(blocks, 1):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            image = _image(block.get("source"), f"image {len(images) + 1} (stdin line {number})")
            if isinstance(image, str):
                return InputError(number, f"content block {index}: {image}")
            images.append(image)
        else:
            shown = json.dumps(kind, ensure_ascii=False)[:60] if kind is not None else "none"
            return InputError(number, f"content block {index}: type {shown} is not read "
                                      '(a "text" block with "text", or an "image" block)')
    return "\n".join(texts), images


def _image(source: Any, name: str) -> Any:
    """An Image from a base64 `source`, or what is wrong with it."""
    if not isinstance(source, dict) or source.get("type") != "base64" or not isinstance(source.get("data"), str):
        return 'an image needs "source": {"type": "base64", "media_type": ..., "data": ...}'
    from agentica_cli.images import ImageError, from_base64

    try:
        return from_base64(source["data"], name)
    except ImageError as err:
        return str(err)


def split_lines(read: Callable[[int], bytes], limit: int = LINE_LIMIT) -> Iterator[bytes | None]:
    """The lines of a byte stream without their ends, read with `read(n)` until it returns b"";
    None for a line over `limit` bytes, which is skipped to its end instead of kept in memory."""
    buffer = bytearray()
    too_long = False
    while chunk := read(CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if too_long:
                yield None
            else:
                buffer += chunk[start:end]
                yield None if len(buffer) > limit else bytes(buffer)
            buffer.clear()
            too_long, start = False, end + 1
        if not too_long:
            buffer += chunk[start:]
            if len(buffer) > limit:
                too_long = True
                buffer.clear()
    if too_long:
        yield None
    elif buffer:
        yield bytes(buffer)


def decode_line(raw: bytes | None, number: int, limit: int = LINE_LIMIT) -> UserMessage | InputError | None:
    if raw is None:
        return InputError(number, f"over {limit // (1024 * 1024)} MB; skipped")
    try:
        text = raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError:
        return InputError(number, "not UTF-8 text")
    return parse_line(text, number)


class StdinMessages:
    """The messages of a file descriptor, read on a thread as they come; `next()` waits for
    the next one and returns None at end of input."""

    def __init__(self, fd: int, on_read_error: Callable[[str], None] | None = None,
                 decode: Callable[[bytes | None, int], Any] = decode_line):
        self.fd = fd
        self.on_read_error = on_read_error
        self.decode = decode  # a line (None: too long) and its number -> the item queued; None skips it
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, name="agentica-stdin", daemon=True).start()

    async def next(self) -> Any:
        return await self._queue.get()

    def _put(self, item: Any) -> bool:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the run is over (interrupted): nobody reads any more
            return False
        return True

    def _read_chunk(self, size: int) -> bytes:
        try:
            return os.read(self.fd, size)
        except OSError as err:  # a terminal hung up, a closed descriptor: the end of input
            if self.on_read_error is not None and self._loop is not None:
                try:
                    self._loop.call_soon_threadsafe(self.on_read_error, f"could not read stdin: {err}")
                except RuntimeError:
                    pass
            return b""

    def _read(self) -> None:
        for number, raw in enumerate(split_lines(self._read_chunk), 1):
            item = self.decode(raw, number)
            if item is not None and not self._put(item):
                return
        self._put(None)
