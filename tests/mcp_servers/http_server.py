"""Serves demo_server's tools over HTTP on 127.0.0.1: SSE at /sse, streamable HTTP at /mcp.

Binds a free port and prints `PORT <n>` on stdout once it is listening, so a test can start
it as a subprocess and read where to connect. Options: `--port N` (a fixed port, to restart
a server where a client expects it); `--header NAME=VALUE`: every request must carry that
header (401 otherwise), to test `headers=`; `--legacy-only`: a 2025 server, which answers
the 2026 `server/discover` probe with HTTP 400.
"""

from __future__ import annotations

import socket
import sys

import anyio
import uvicorn
from demo_server import build_server
from starlette.requests import Request
from starlette.responses import PlainTextResponse


def legacy_only(app):  # type: ignore[no-untyped-def]
    """Answer the 2026 `server/discover` probe with a bare HTTP 400, as 2025 servers do
    (e.g. server-everything: "Bad Request: Server not initialized")."""

    async def wrapped(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if b'"server/discover"' in body:
            await PlainTextResponse("Bad Request: Server not initialized", status_code=400)(scope, receive, send)
            return
        replayed = False

        async def replay():  # type: ignore[no-untyped-def]
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return wrapped


def build_app(required_header: tuple[str, str] | None = None, legacy: bool = False):  # type: ignore[no-untyped-def]
    server = build_server()
    app = server.streamable_http_app(streamable_http_path="/mcp")
    # One process serves both transports: the SSE routes join the streamable HTTP app,
    # whose lifespan runs the session manager.
    app.router.routes.extend(server.sse_app(sse_path="/sse", message_path="/messages/").routes)
    if legacy:
        app = legacy_only(app)
    if required_header is None:
        return app
    name, value = required_header

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and Request(scope).headers.get(name) != value:
            await PlainTextResponse("missing or wrong auth header", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    return guarded


async def serve(argv: list[str]) -> None:
    required = None
    if "--header" in argv:
        name, _, value = argv[argv.index("--header") + 1].partition("=")
        required = (name.lower(), value)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 0
    sock.bind(("127.0.0.1", port))
    # Listening before we tell the port: a client may connect at once (it waits in the
    # backlog until uvicorn accepts).
    sock.listen(128)
    config = uvicorn.Config(build_app(required, legacy="--legacy-only" in argv), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(serve, sys.argv[1:])
