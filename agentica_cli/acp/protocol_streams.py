"""The asyncio streams the ACP protocol is read from and written to, whatever fds 0 and 1 are.

An editor gives the agent pipes, which the event loop waits on. A script may give it files:
`agentica acp < requests.jsonl > replies.jsonl`, or /dev/null. asyncio refuses a regular file
for a pipe transport (the server died with a traceback) and epoll refuses /dev/null, so those
are read on a thread and written with plain blocking writes, which on a file never wait long.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from typing import Any


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on fd: a pipe, a socket or a terminal."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


async def open_protocol_streams(proto_in: Any, proto_out: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A reader of proto_in and a writer to proto_out (binary, unbuffered file objects)."""
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    from acp.stdio import _WritePipeProtocol

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    if pollable(proto_in.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proto_in)
    else:
        _feed_from_thread(loop, reader, proto_in)
    protocol = _WritePipeProtocol()  # the flow control (drain) StreamWriter expects
    if pollable(proto_out.fileno()):
        transport, _ = await loop.connect_write_pipe(lambda: protocol, proto_out)
    else:
        transport = BlockingWriteTransport(proto_out.fileno())
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, stream: Any) -> None:
    """Read stream on a daemon thread into reader, then its end."""

    def post(callback: Any, *args: Any) -> None:
        try:
            loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop has closed: the server ended, nothing is waiting
            pass

    def pump() -> None:
        try:
            while chunk := stream.read(65536):
                post(reader.feed_data, chunk)
        except OSError as err:
            post(reader.set_exception, err)
            return
        post(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class BlockingWriteTransport(asyncio.WriteTransport):
    """Writes each message whole with blocking writes: for a regular file or /dev/null."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True

    def get_write_buffer_size(self) -> int:
        return 0
