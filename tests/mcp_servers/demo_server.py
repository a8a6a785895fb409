"""An MCP server written with the SDK's server API, for the McpTool tests.

Run as a script it serves stdio; `http_server.py` serves the same tools over SSE and
streamable HTTP. Each tool exercises one part of the client: annotations -> flags,
result rendering, errors, state kept by one session, a crash and a hang.

Options (stdio): --fail-start MESSAGE  exit at once with MESSAGE on stderr;
                 --fail-start-if-exists PATH  the same ("PATH exists") while PATH exists;
                 --slow-start SECONDS  sleep before serving (connect timeouts);
                 --started-marker PATH  write PATH at start (proof that the server was run).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import EmbeddedResource, TextContent, TextResourceContents, ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True)

# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def build_server() -> MCPServer:
    server = MCPServer("demo", instructions="Demo server for the agentica tests.")
    state = {"count": 0, "notes": []}

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(annotations=READ_ONLY)
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool(annotations=READ_ONLY)
    async def slow_read(seconds: float, label: str = "") -> str:
        """Sleep, then answer: stands for a slow read-only lookup."""
        await asyncio.sleep(seconds)
        return f"slept {seconds} {label}".strip()

    @server.tool(annotations=ADDITIVE)
    def increment() -> str:
        """Add one to a counter kept by this server process and return it."""
        state["count"] += 1
        return str(state["count"])

    @server.tool(annotations=DESTRUCTIVE)
    def delete_notes() -> str:
        """Delete every note."""
        removed = len(state["notes"])
        state["notes"].clear()
        return f"deleted {removed} notes"

    @server.tool()
    def add_note(text: str) -> str:
        """Store a note (no annotations: clients must treat it as destructive)."""
        state["notes"].append(text)
        return f"{len(state['notes'])} notes"

    @server.tool(annotations=READ_ONLY)
    def fail(message: str) -> str:
        """Always fails with the given message."""
        raise ToolError(message)

    @server.tool(annotations=READ_ONLY)
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    @server.tool(annotations=READ_ONLY)
    def getenv(name: str) -> str:
        """One environment variable of the server process, or <unset>."""
        return os.environ.get(name, "<unset>")

    @server.tool(annotations=READ_ONLY)
    def cwd() -> str:
        """The server's working directory."""
        return os.getcwd()

    @server.tool(annotations=READ_ONLY)
    def log(message: str) -> str:
        """Write a line to the server's stderr."""
        print(message, file=sys.stderr, flush=True)
        return "logged"

    @server.tool(annotations=READ_ONLY)
    def picture() -> list:
        """A caption and a tiny PNG."""
        return ["a pixel", Image(data=PIXEL_PNG, format="png")]

    @server.tool(annotations=READ_ONLY)
    def document() -> list:
        """A text resource embedded in the result."""
        return [
            TextContent(type="text", text="see the attached file"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="line one"),
            ),
        ]

    @server.tool(annotations=READ_ONLY)
    def big_text(lines: int, width: int = 60) -> str:
        """`lines` numbered lines of `width` characters (a large result)."""
        return "\n".join(f"{i:08d} " + "x" * max(0, width - 9) for i in range(1, lines + 1))

    @server.tool(annotations=DESTRUCTIVE)
    def crash() -> str:
        """Exit the server process at once, mid-call."""
        os._exit(3)

    @server.tool(annotations=READ_ONLY)
    async def hang() -> str:
        """Never return, while the server itself keeps answering other requests."""
        await asyncio.Event().wait()
        return "unreachable"

    @server.tool(annotations=READ_ONLY)
    async def freeze() -> str:
        """Block the server's event loop forever: a hung server that answers nothing."""
        while True:
            time.sleep(3600)

    return server


def main(argv: list[str]) -> None:
    # The failure options act after the SDK import (module top), like a real server that
    # fails on its configuration: a failed start takes about as long as a good one, which
    # the CLI test of /mcp relies on (it lists a ready server once the failure is shown).
    if "--started-marker" in argv:
        with open(argv[argv.index("--started-marker") + 1], "a", encoding="utf-8") as marker:
            marker.write(f"{os.getpid()}\n")
    if "--fail-start" in argv:
        print(argv[argv.index("--fail-start") + 1], file=sys.stderr, flush=True)
        sys.exit(2)
    if "--fail-start-if-exists" in argv:
        path = argv[argv.index("--fail-start-if-exists") + 1]
        if os.path.exists(path):
            print(f"refusing to start: {path} exists", file=sys.stderr, flush=True)
            sys.exit(2)
    if "--slow-start" in argv:
        time.sleep(float(argv[argv.index("--slow-start") + 1]))
    build_server().run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
