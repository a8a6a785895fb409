"""ScriptedModelServer: an OpenAI-compatible chat completions server that plays back turns.

Runs in a background thread (stdlib only) or as its own process:

    python -m agentica_cli.testing.server --script turns.json --port-file port.txt \
        [--requests-file requests.jsonl] [--port 0]

The script file is a JSON list of turns (see `agentica_cli.testing.turns`), or an object
`{"turns": [...]}`. The chosen port is written to `--port-file` once the server listens;
every request body is appended to `--requests-file` as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentica_cli.testing.turns import DEFAULT_FAULT_LIMIT, Turn, validate

__all__ = ["RecordedRequest", "ScriptedModelServer", "main"]

TurnSource = Turn | Callable[[dict[str, Any]], Turn]


@dataclass
class RecordedRequest:
    """One request as the server saw it. Times are `time.perf_counter()` values."""

    index: int
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]
    received_at: float  # headers read, before the body
    finished_at: float = 0.0  # just before the answer's last write (0 while in flight)
    status: int = 200  # 0: never answered (a hang() turn)
    turn_type: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # The client's address and port: requests a client sends over one kept-alive connection
    # share it, so a request cut short before its body still says which client sent it.
    connection: str = ""


def _parsed_body(raw: bytes, length: int) -> dict[str, Any]:
    """A request's JSON body; `{"_unparsed": text}` when it is not JSON or was cut short (the
    client went away mid-body: not a request it meant as `{}`)."""
    if len(raw) == length:
        try:
            return json.loads(raw or b"{}")
        except json.JSONDecodeError:
            pass
    return {"_unparsed": raw.decode("utf-8", "replace")}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _split_in(text: str, parts: int) -> list[str]:
    """Split into `parts` pieces, so arguments always arrive over several chunks."""
    if len(text) < 2:
        return [text]
    return _pieces(text, max(1, math.ceil(len(text) / parts)))


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class _QuietServer(ThreadingHTTPServer):
    """A client that goes away mid-request (a killed agent, an interrupted turn) is normal
    here, not a traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class ScriptedModelServer:
    """A real HTTP server on 127.0.0.1 speaking the chat completions API from a script.

    `turns` are consumed one per request, in order; a turn may also be a callable that gets
    the request body and returns a turn. `record` is called with every RecordedRequest as it
    arrives (the subprocess mode uses it to write the requests file).
    """

    def __init__(
        self,
        turns: Iterable[TurnSource] = (),
        *,
        port: int = 0,
        text_chunk_chars: int = 16,
        argument_chunks: int = 3,
        record: Callable[[RecordedRequest], None] | None = None,
        accepted_keys: Iterable[str] | None = None,
        routes: dict[str, Any] | None = None,
    ):
        self._turns: list[TurnSource] = []
        # Fixed answers besides the chat completions: {"GET /v1/models": {...}, "POST /api/show": {...}}
        # (a JSON payload, or (status, payload)), e.g. a replay of what an Ollama server answers.
        self.routes = dict(routes or {})
        # When given, GET /models answers 401 to any other key (for tests of a key check).
        self.accepted_keys = None if accepted_keys is None else set(accepted_keys)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._repeat_served = 0
        self.request_log: list[RecordedRequest] = []
        self.text_chunk_chars = text_chunk_chars
        self.argument_chunks = argument_chunks
        self._record = record
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add(*turns)

    # -- script -------------------------------------------------------------------------

    def add(self, *turns: TurnSource) -> ScriptedModelServer:
        for turn in turns:
            validate(turn)
        with self._lock:
            self._turns.extend(turns)
        return self

    @property
    def pending(self) -> int:
        """Turns not yet served."""
        with self._lock:
            return len(self._turns)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON body of every request received so far, in order."""
        with self._lock:
            return [r.body for r in self.request_log]

    def _next_turn(self, body: dict[str, Any], index: int) -> Turn | None:
        with self._lock:
            if not self._turns:
                return None
            head = self._turns[0]
            if callable(head):
                self._turns.pop(0)
                turn = head(body)
                validate(turn)
                if callable(turn):
                    raise TypeError("a callable turn must return a turn dict")
                return turn
            if head["type"] != "repeat_tool":
                self._turns.pop(0)
                return head
            if self._repeat_served < head["count"]:
                self._repeat_served += 1
                name, args = head["name"], head["arguments"]
                return {"type": "tool_calls", "content": "",
                        "calls": [{"name": name, "arguments": args, "id": f"call_r{index}"}]}
            self._turns.pop(0)
            self._repeat_served = 0
            return {"type": "text", "content": head.get("final", "done")}

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedModelServer:
        handler = type("Handler", (_Handler,), {"scripted": self})
        self._httpd = _QuietServer(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        # serve_forever checks for shutdown once per poll interval; the default 0.5 s would
        # make every stop() (every test) half a second long.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            if self._thread is not None:
                self._httpd.shutdown()
                self._thread.join(timeout=5)
            self._httpd.server_close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- rendering ----------------------------------------------------------------------

    def _usage(self, body: dict[str, Any], turn: Turn, completion: Any) -> dict[str, Any]:
        given = turn.get("usage") or {}
        prompt = int(given.get("prompt_tokens", _estimate_tokens(body.get("messages", []))))
        out = int(given.get("completion_tokens", _estimate_tokens(completion)))
        counted = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
        # Other fields as given: OpenRouter's `cost`, `prompt_tokens_details`, ...
        return counted | {k: v for k, v in given.items() if k not in counted}

    def render_json(self, body: dict[str, Any], turn: Turn, index: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("content") or None}
        if turn.get("reasoning"):
            message["reasoning_content"] = turn["reasoning"]
        calls = self._calls(turn, index)
        if calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ]
        return {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": self._usage(body, turn, message),
        }

    def render_chunks(self, body: dict[str, Any], turn: Turn, index: int) -> list[dict[str, Any]]:
        base = {"id": f"chatcmpl-{index}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "scripted")}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        for piece in _pieces(turn.get("reasoning") or "", self.text_chunk_chars) if turn.get("reasoning") else ():
            chunks.append(chunk({"reasoning_content": piece}))
        content = turn.get("content") or ""
        if content:
            chunks.extend(chunk({"content": piece}) for piece in _pieces(content, self.text_chunk_chars))
        calls = self._calls(turn, index)
        for i, c in enumerate(calls):
            head = {"index": i, "id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": ""}}
            chunks.append(chunk({"tool_calls": [head]}))
            # An object (not the protocol's string) is sent whole, as the servers that do it send it.
            pieces = _split_in(c["arguments"], self.argument_chunks) if isinstance(c["arguments"], str) else [
                c["arguments"]]
            for piece in pieces:
                chunks.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
        chunks.append(chunk({}, "tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            completion = {"content": content, "calls": calls}
            chunks.append(base | {"choices": [], "usage": self._usage(body, turn, completion)})
        return chunks

    @staticmethod
    def _calls(turn: Turn, index: int) -> list[dict[str, str]]:
        return [
            {"id": c.get("id") or f"call_{index}_{i}", "name": c["name"], "arguments": c.get("arguments", "{}")}
            for i, c in enumerate(turn.get("calls") or ())
        ]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
    disable_nagle_algorithm = True  # small SSE writes must not wait for ACKs
    scripted: ScriptedModelServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _fixed_route(self, method: str) -> bool:
        """Answer from `routes` if one matches this request (query string ignored)."""
        route = self.scripted.routes.get(f"{method} {self.path.split('?')[0].rstrip('/')}")
        if route is None:
            return False
        status, payload = route if isinstance(route, tuple) else (200, route)
        if method == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
        self._send_json(status, payload)
        return True

    def do_GET(self) -> None:
        if self._fixed_route("GET"):
            return
        keys = self.scripted.accepted_keys
        if keys is not None and self.headers.get("Authorization", "").removeprefix("Bearer ") not in keys:
            self._send_json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                            "code": "invalid_api_key"}})
        elif self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self._fixed_route("POST"):
            return
        server = self.scripted
        received = time.perf_counter()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = _parsed_body(raw, length)
        with server._lock:
            index = len(server.request_log)
            headers = {k.lower(): v for k, v in self.headers.items()}
            host, port = self.client_address[:2]
            record = RecordedRequest(index, self.path, headers, body, received, connection=f"{host}:{port}")
            server.request_log.append(record)
        if server._record is not None:
            server._record(record)  # on arrival: a client killed mid-answer still left its request
        self._current = record
        try:
            self._answer(server, body, index, record)
        finally:
            if not record.finished_at:
                record.finished_at = time.perf_counter()

    def _answer(self, server: ScriptedModelServer, body: dict[str, Any], index: int, record: RecordedRequest) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            record.status = 404
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        turn = server._next_turn(body, index)
        if turn is None:
            record.status = 400
            message = f"scripted model server: no scripted turn left for request #{index + 1}"
            self._send_json(400, {"error": {"message": message, "type": "script_exhausted"}})
            return
        record.turn_type = turn["type"]
        if turn.get("delay") and server._stopping.wait(float(turn["delay"])):
            return
        if turn["type"] == "hang" or (turn.get("stall") and not body.get("stream")):
            record.status = 0  # nothing was answered
            limit = float(turn.get("limit") or (turn.get("stall") or {}).get("limit") or DEFAULT_FAULT_LIMIT)
            self._hold_open(time.monotonic() + limit)
            self._drop_connection()
            return
        if turn["type"] == "error":
            record.status = int(turn["status"])
            headers = {"Retry-After": turn["retry_after"]} if turn.get("retry_after") else {}
            if "body" in turn:  # a provider's own error shape, sent as it is
                raw = turn["body"]
                data = raw.encode() if isinstance(raw, str) else json.dumps(raw).encode()
                self._send_bytes(record.status, data, turn["content_type"], headers)
                return
            err = {"message": turn.get("message", ""), "type": "scripted_error", "code": record.status}
            self._send_json(record.status, {"error": err}, headers)
            return
        cut_after = turn.get("cut_after")
        if not body.get("stream"):
            if cut_after is not None:
                self._drop_connection()
                return
            self._send_json(200, server.render_json(body, turn, index))
            return
        chunks = server.render_chunks(body, turn, index)
        events = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks]
        stall = turn.get("stall")
        if stall:
            cut_after = stall["after"]
        if cut_after is None:
            events.append(b"data: [DONE]\n\n")
        else:
            events = events[: int(cut_after)]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        framed = [b"%x\r\n%s\r\n" % (len(e), e) for e in events]
        if cut_after is None:
            framed.append(b"0\r\n\r\n")
        chunk_delay = float(turn.get("chunk_delay") or 0)
        if chunk_delay:
            for frame in framed[:-1]:
                self.wfile.write(frame)
                if server._stopping.wait(chunk_delay):
                    return
            framed = framed[-1:]
        self._last_write(b"".join(framed))  # one write when timing doesn't matter: no per-chunk syscalls
        if stall:
            beat = {"comment": b": keep-alive\n\n", "nothing": b"",
                    "empty": b"data: " + json.dumps(chunks[0] | {"choices": [
                        {"index": 0, "delta": {}, "finish_reason": None}]}).encode() + b"\n\n"}[stall["send"]]
            framed_beat = b"%x\r\n%s\r\n" % (len(beat), beat) if beat else b""
            self._hold_open(time.monotonic() + stall["limit"], framed_beat, stall["every"])
        if cut_after is not None:
            self._drop_connection()

    def _client_gone(self) -> bool:
        """Whether the client closed its end (a readable socket with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True

    def _hold_open(self, until: float, beat: bytes = b"", every: float = 1.0) -> None:
        """Keep the connection open without progress, writing `beat` every `every` seconds,
        until the client leaves, the server stops or `until` (a monotonic time) passes."""
        next_beat = time.monotonic() + every
        while time.monotonic() < until and not self._client_gone():
            if self.scripted._stopping.wait(min(0.05, max(0.0, until - time.monotonic()))):
                return
            if beat and time.monotonic() >= next_beat:
                next_beat += every
                try:
                    self.wfile.write(beat)
                except OSError:
                    return

    def _last_write(self, data: bytes) -> None:
        # Stamped before writing: once the bytes are out the client may send its next request
        # before this thread runs again, and the log must keep finished <= next received.
        current = getattr(self, "_current", None)
        if current is not None:
            current.finished_at = time.perf_counter()
        self.wfile.write(data)

    def _drop_connection(self) -> None:
        """End the connection mid-answer, as a proxy or a crashed provider would."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self._last_write(data)


# -- subprocess mode ------------------------------------------------------------------------


def _load_script(path: str) -> list[Turn]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    turns = data.get("turns", []) if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise SystemExit(f"{path}: expected a JSON list of turns or {{\"turns\": [...]}}")
    return turns


def _write_atomic(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentica_cli.testing.server", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", required=True, help="JSON file with the turns to play back")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--port-file", help="write the port here once listening")
    parser.add_argument("--requests-file", help="append every request body here as a JSON line")
    args = parser.parse_args(argv)

    lock = threading.Lock()

    def record(req: RecordedRequest) -> None:
        if not args.requests_file:
            return
        line = json.dumps({"index": req.index, "path": req.path, "body": req.body})
        with lock, open(args.requests_file, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    server = ScriptedModelServer(_load_script(args.script), port=args.port, record=record)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    server.start()
    if args.port_file:
        _write_atomic(args.port_file, str(server.port))
    print(f"scripted model server on {server.base_url}", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
