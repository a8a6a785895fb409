"""Reading a stdio MCP server's output in whole lines, in time linear in its size.

The SDK's stdio reader keeps the unfinished line in a string and, for every chunk the pipe
gives (64 KB), joins it to that string and splits the whole thing again. A message is one
line however long (and carries a tool's text twice: content and structuredContent), so a
50 MB tool result cost some 1,600 joins and splits of a string growing to 100 MB: 105 s
(bench/bench_mcp_result.py). Wrapped here, the server's stdout hands the reader nothing
but whole lines: bytes are gathered in one buffer until a newline comes, and the SDK's split
then sees complete lines with nothing left over. The bytes and their order are the same;
only how they are cut differs.

`install()` wraps the SDK's process spawn (a module function of mcp.client.stdio) once; if
a later SDK changes its shape, nothing is wrapped and the SDK's own reader is used.
"""

from __future__ import annotations

from typing import Any

READ_SIZE = 1 << 20  # bytes asked of the pipe at a time

_installed = False


class WholeLines:
    """A byte receive stream over `inner` whose every chunk ends at a newline (but the last,
    at the end of the stream)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._rest = b""

    async def receive(self, max_bytes: int = READ_SIZE) -> bytes:
        """Everything up to the last newline received (at least one whole line). A
        bytearray, grown in place, is handed over as it is (the text decoder reads it; no
        final copy): a 100 MB line costs one buffer of its size, not two."""
        import anyio

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
                continue
            line += memoryview(chunk)[:cut + 1]
            self._rest = chunk[cut + 1:]
            return line  # type: ignore[return-value]

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
