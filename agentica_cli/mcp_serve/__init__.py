"""`agentica mcp serve`: agentica as an MCP server, for other agents and editors to delegate to.

Tools: `agentica` (prompt, cwd, permission mode, model) runs a session and returns its answer,
the files it changed and its session id; `agentica_reply` (session id, prompt) continues one.
Approvals go to the client as elicitation requests; a client that cannot answer them gets
those calls refused (docs/mcp.md, "agentica as an MCP server").

Transports: stdio (the default: the client starts `agentica mcp serve`), or streamable HTTP with
`--port` on 127.0.0.1 (`--host` to bind elsewhere). Application logic only: no terminal UI.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentica_cli.mcp_serve.hub import ServeOptions

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["ServeOptions", "serve"]

HTTP_PATH = "/mcp"


def serve(options: ServeOptions, *, port: int | None = None, host: str = "127.0.0.1",
          announce: Callable[[str], None] | None = None) -> int:
    """Serve until the client goes (stdio) or the process is stopped (HTTP); the exit code."""
    import anyio

    from agentica_cli.mcp_serve.server import AgenticaMcpServer

    app = AgenticaMcpServer(options)

    def say(text: str) -> None:
        if announce is not None:
            announce(text)
        else:
            sys.stderr.write(f"agentica mcp serve: {text}\n")
            sys.stderr.flush()

    async def run() -> None:
        try:
            if port is None:
                await app.mcp.run_stdio_async()
            else:
                await _serve_http(app.mcp, host, port, say)
        finally:
            await app.hub.close()

    try:
        anyio.run(run)
    except KeyboardInterrupt:
        return 130
    return 0


async def _serve_http(mcp: MCPServer, host: str, port: int, say: Callable[[str], None]) -> None:
    """Streamable HTTP on our own socket: `--port 0` takes a free port, and the address said on
    stderr is the one bound."""
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    app = mcp.streamable_http_app(host=host)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    say(f"listening on http://{shown}:{bound}{HTTP_PATH}")
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()


def serve_command(*, port: int | None, host: str, model: str | None, provider: str | None, base_url: str | None,
                  api_key_file: str | None, permission_mode: str | None, max_turns: int | None,
                  no_session: bool) -> int:
    """`agentica mcp serve`, its options checked: usage errors exit 2 with one line on stderr."""
    from types import SimpleNamespace

    from agentica_cli.app import exitcodes

    def fail(message: str) -> int:
        sys.stderr.write(f"agentica mcp serve: {message}\n")
        return exitcodes.USAGE_ERROR

    if port is not None and not 0 <= port <= 65535:
        return fail(f"--port {port}: not a port number")
    if max_turns is not None and max_turns < 1:
        return fail("--max-turns must be at least 1")
    if permission_mode is not None and permission_mode not in ("default", "accept-edits", "plan", "auto"):
        return fail(f"--permission-mode {permission_mode}: one of default, accept-edits, plan, auto")
    key = SimpleNamespace(api_key=None, api_key_file=api_key_file)
    if api_key_file is not None:
        from agentica_cli.app.settings.api_key_input import KeyInputError, resolve_key_flags

        try:
            resolve_key_flags(key, sys.stdin)
        except KeyInputError as err:
            return fail(str(err))
    if port is not None and host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"agentica mcp serve: warning: listening on {host}: anyone who reaches it can run "
                         "agentica in this account (there is no authentication)\n")
    from agentica_cli.app.process_hardening import harden_process
    from agentica_cli.sandbox.descendants import end_descendants_at_exit

    harden_process()
    end_descendants_at_exit()  # nothing a session started outlives the server
    flags: dict[str, object] = {"model.name": model, "model.provider": provider, "model.base_url": base_url,
                                "model.api_key": key.api_key, "tools.max_turns": max_turns}
    options = ServeOptions(flags={k: v for k, v in flags.items() if v is not None},
                           default_mode=permission_mode or "default", allow_auto=permission_mode == "auto",
                           save_sessions=not no_session)
    return serve(options, port=port, host=host)
