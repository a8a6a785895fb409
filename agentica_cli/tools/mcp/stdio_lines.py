"""Reading a stdio MCP server's output in whole lines, in time linear in its size.

The SDK's stdio reader keeps the unfinished line in a string and, for every chunk the pipe
gives (64 KB), joins it to that string and splits the whole thing again. A message is one
line however long (and carries a tool's text twice: content and structuredContent), so a
50 MB tool result cost some 1,600 joins and splits of a string growing to 100 MB: 105 s
(bench/bench_mcp_result.py). Wrapped here, the server's stdout hands the reader nothing
but whole lines: bytes are gathered in one buffer until a newline comes, and the SDK's split
then sees complete lines with nothing left over. The bytes and their order are the same;
only how they are cut differs.

A line over LINE_CAP is not gathered whole: from there it streams through oversized.Truncator,
which keeps the message's structure and the first part of each long string, and the reader
gets that small message, with a notice of what was cut, in its place. So one huge result costs
a bounded buffer (~LINE_CAP + a few MB), not the ~740 MB of holding, decoding and parsing it.

`install()` wraps the SDK's process spawn (a module function of mcp.client.stdio) once; if
a later SDK changes its shape, nothing is wrapped and the SDK's own reader is used.
"""

from __future__ import annotations

from typing import Any

READ_SIZE = 1 << 20  # bytes asked of the pipe at a time
# A message (one line) longer than this is cut as it streams in (oversized.py); shorter ones pass
# whole (an image of ~12 MB still does). What a cut one keeps: oversized.MESSAGE_CAP.
LINE_CAP = 16 * 1024 * 1024

_installed = False


class WholeLines:
    """A byte receive stream over `inner` whose every chunk ends at a newline (but the last,
    at the end of the stream). A line longer than `line_cap` is cut while it streams in
    (oversized.py): what is handed on is a small, well-formed message in its place."""

    def __init__(self, inner: Any, line_cap: int = LINE_CAP, string_cap: int | None = None):
        self.inner = inner
        self.line_cap = line_cap
        self.string_cap = string_cap  # None: oversized.STRING_CAP
        self._rest = b""
        self.cut_messages = 0  # how many lines were cut (for tests and the log)

    async def receive(self, max_bytes: int = READ_SIZE) -> bytes:
        """Everything up to the last newline received (at least one whole line). A
        bytearray, grown in place, is handed over as it is (the text decoder reads it; no
        final copy): a 16 MB line costs one buffer of its size, not two."""
        import anyio

        cut = self._rest.rfind(b"\n")
        if cut >= 0:  # whole lines left over from the end of a cut line
            whole, self._rest = self._rest[:cut + 1], self._rest[cut + 1:]
            return whole
        line = bytearray(self._rest)
        self._rest = b""
        while True:
            try:
                chunk = await self.inner.receive(max(max_bytes, READ_SIZE))
            except anyio.EndOfStream:
                if line:  # what came after the last newline: the reader keeps it as it would
                    return line  # type: ignore[return-value]
                raise
            cut = chunk.rfind(b"\n")
            if cut < 0:
                line += chunk
                if len(line) > self.line_cap:
                    return await self._cut_line(line)
                continue
            if len(line) + chunk.find(b"\n") > self.line_cap:  # the line this chunk ends is too long
                return await self._cut_line(line, chunk)
            line += memoryview(chunk)[:cut + 1]
            self._rest = chunk[cut + 1:]
            return line  # type: ignore[return-value]

    async def _cut_line(self, start: bytearray, chunk: bytes | None = None) -> bytes:
        """The rest of an oversized line read and cut (oversized.Truncator), never held whole;
        what followed its newline is kept for the next receive."""
        import anyio

        from agentica_cli.tools.mcp.oversized import Truncator

        truncator = Truncator() if self.string_cap is None else Truncator(string_cap=self.string_cap)
        truncator.feed(start)
        del start[:]
        while True:
            if chunk is None:
                try:
                    chunk = await self.inner.receive(READ_SIZE)
                except anyio.EndOfStream:
                    self.cut_messages += 1
                    return truncator.finish()
            end = chunk.find(b"\n")
            if end < 0:
                truncator.feed(chunk)
                chunk = None
                continue
            truncator.feed(memoryview(chunk)[:end])
            self._rest = chunk[end + 1:]
            self.cut_messages += 1
            return truncator.finish() + b"\n"

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:  # extra attributes of the stream (anyio's typed_attribute etc.)
        return getattr(self.inner, name)

    # anyio's TextReceiveStream iterates with `async for`; a ByteReceiveStream does so by receive()
    def __aiter__(self) -> WholeLines:
        return self

    async def __anext__(self) -> bytes:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def wrap_stdout(process: Any) -> Any:
    """`process` with its stdout read in whole lines (anyio's asyncio Process keeps it in
    `_stdout`; any other process is returned as it is)."""
    inner = getattr(process, "_stdout", None)
    if inner is not None and not isinstance(inner, WholeLines) and hasattr(inner, "receive"):
        process._stdout = WholeLines(inner)
    return process


def install() -> bool:
    """Wrap the SDK's stdio process spawn so every server's stdout is read in whole lines.
    Idempotent; False when the SDK has no such function (its own reader is used)."""
    global _installed
    if _installed:
        return True
    try:
        from mcp.client import stdio
    except ImportError:
        return False
    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    if spawn is None or not callable(spawn):
        return False

    async def spawn_reading_whole_lines(*args: Any, **kwargs: Any) -> Any:
        return wrap_stdout(await spawn(*args, **kwargs))

    stdio._create_platform_compatible_process = spawn_reading_whole_lines
    _installed = True
    return True
