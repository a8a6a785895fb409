"""A local web for the toolkit tests: one HTTP server on 127.0.0.1 with scripted routes.

`web.route("GET", "/path", body, status=200, headers=...)` serves a fixed answer;
`web.route(..., responses=[(429, ...), (200, ...)])` serves them in turn (the last one repeats);
`web.route(..., hold=True)` never answers until the test ends (for timeouts). Every request is
recorded as `Seen(method, path, query, headers, body)`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agentica_cli.tools.base import FunctionCall, Tool
from agentica_cli.tools.context import ToolContext

FIXTURES = Path(__file__).parent / "toolkit_fixtures"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


Answer = tuple[int, dict[str, str], bytes]


def _answer(status: int, body: Any, headers: dict[str, str] | None) -> Answer:
    headers = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    elif isinstance(body, str):
        body = body.encode()
        headers.setdefault("Content-Type", "text/html; charset=utf-8")
    return status, headers, body


class LocalWeb:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Answer]] = {}
        self.held: set[tuple[str, str]] = set()
        self.seen: list[Seen] = []
        self.release = threading.Event()
        web = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                web.seen.append(Seen(self.command, parts.path, parse_qs(parts.query),
                                     {k.lower(): v for k, v in self.headers.items()}, body))
                key = (self.command, parts.path)
                if key in web.held:
                    web.release.wait(30)
                    return
                answers = web.routes.get(key)
                if not answers:
                    status, headers, payload = 404, {"Content-Type": "text/plain"}, b"not found"
                else:
                    status, headers, payload = answers.pop(0) if len(answers) > 1 else answers[0]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _serve

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def route(self, method: str, path: str, body: Any = b"", *, status: int = 200,
              headers: dict[str, str] | None = None, responses: list[tuple[int, Any]] | None = None,
              hold: bool = False) -> None:
        if hold:
            self.held.add((method, path))
            return
        if responses is not None:
            self.routes[(method, path)] = [_answer(s, b, headers) for s, b in responses]
        else:
            self.routes[(method, path)] = [_answer(status, body, headers)]

    def requests_to(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def local_web() -> Iterator[LocalWeb]:
    web = LocalWeb()
    try:
        yield web
    finally:
        web.close()


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def run(tool: Tool, name: str, tool_context: ToolContext | None = None, **arguments: Any) -> FunctionCall:
    """Validate the JSON arguments against the schema and execute, as the agent loop does."""
    call = FunctionCall(tool.functions[name], call_id="call_1", arguments=json.dumps(arguments))
    return asyncio.run(call.execute(tool_context))


def ok(tool: Tool, name: str, **arguments: Any) -> str:
    call = run(tool, name, **arguments)
    assert call.error is None, call.error
    return call.result or ""
