"""The lean streaming path: our SSE decoder over the SDK's raw response.

The model tests run against small real HTTP servers on 127.0.0.1 (no mocks): a stream in odd
pieces and line endings, an error reported inside the stream, usage in the last chunk or
none, and the keep-alive connection reused after `[DONE]`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentica_cli.models import ModelError, OpenAIChat
from agentica_cli.models.sse import SseDecoder

# -- the decoder ---------------------------------------------------------------------------


def decode_all(pieces: list[bytes]) -> list[bytes]:
    decoder = SseDecoder()
    return [data for piece in pieces for data in decoder.feed(piece)]


def test_events_are_the_same_however_the_bytes_are_cut():
    stream = (b": keep-alive\r\n\r\ndata: {\"a\": 1}\r\n\r\ndata:{\"b\": 2}\r\rdata: line one\ndata: line two\n\n"
              b"event: ignored\nid: 7\ndata: [DONE]\n\n")
    expected = [b'{"a": 1}', b'{"b": 2}', b"line one\nline two", b"[DONE]"]
    assert decode_all([stream]) == expected
    assert decode_all([stream[i:i + 1] for i in range(len(stream))]) == expected  # byte by byte
    for cut in range(1, len(stream)):
        assert decode_all([stream[:cut], stream[cut:]]) == expected, cut


def test_an_event_unfinished_at_the_end_is_dropped_and_comments_are_not_events():
    assert decode_all([b": ping\n\n: ping\n\n"]) == []
    assert decode_all([b'data: {"a": 1}\n\ndata: {"cut']) == [b'{"a": 1}']
    assert decode_all([b"data\n\n"]) == [b""]  # a `data` field with no value, as the spec reads it
    assert decode_all([b"datum: x\n\n"]) == []  # not the data field


# -- over HTTP -----------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client may reuse the connection

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        server = self.server
        server.peers.append(self.client_address)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in server.pieces:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *args) -> None:
        pass


class _StreamServer:
    """Answers every POST with `pieces` as separate HTTP chunks; records each request's peer."""

    def __init__(self, pieces: list[bytes]):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.pieces, self.httpd.peers = pieces, []

    def __enter__(self) -> _StreamServer:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _chunk(delta: dict | None = None, finish: str | None = None, usage: dict | None = None) -> dict:
    chunk: dict = {"id": "c", "object": "chat.completion.chunk",
                   "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def _frames(*chunks: dict, end: bytes = b"\n\n") -> list[bytes]:
    return [b"data: " + json.dumps(c).encode() + end for c in chunks] + [b"data: [DONE]" + end]


def _collect(model: OpenAIChat, requests: int = 1) -> list[list]:
    async def go():
        runs = []
        for _ in range(requests):
            runs.append([e async for e in model.response_stream([{"role": "user", "content": "hi"}])])
        await model.aclose()
        return runs

    return asyncio.run(go())


def _model(server: _StreamServer) -> OpenAIChat:
    return OpenAIChat(id="m", api_key="k", base_url=server.base_url, retry_base_delay=0.01)


@pytest.mark.parametrize("end", [b"\n\n", b"\r\n\r\n"])
def test_text_and_tool_call_deltas_in_small_pieces_with_usage_in_the_last_chunk(end):
    frames = _frames(_chunk({"role": "assistant", "content": "Hel"}), _chunk({"content": "lo"}),
                     _chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                             "function": {"name": "read_file", "arguments": '{"file_'}}]}),
                     _chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'path": "a"}'}}]}),
                     _chunk({}, "tool_calls"),
                     _chunk(usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}), end=end)
    body = b"".join(frames)
    pieces = [body[i:i + 7] for i in range(0, len(body), 7)]  # lines and CRLFs cut anywhere
    with _StreamServer(pieces) as server:
        (events,) = _collect(_model(server))
    assert [type(e).__name__ for e in events] == ["ModelTextDelta", "ModelTextDelta", "ModelResponse"]
    final = events[-1]
    assert (final.content, final.finish_reason) == ("Hello", "tool_calls")
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [("call_1", "read_file", '{"file_path": "a"}')]
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.total_tokens) == (7, 3, 10)


def test_a_provider_without_usage_gives_none_and_the_connection_is_reused():
    frames = _frames(_chunk({"content": "ok"}), _chunk({}, "stop"))
    with _StreamServer(frames) as server:
        runs = _collect(_model(server), requests=3)
        peers = list(server.httpd.peers)
    assert [run[-1].content for run in runs] == ["ok", "ok", "ok"]
    assert runs[0][-1].usage is None
    assert len(peers) == 3 and len(set(peers)) == 1  # one keep-alive connection: the body was read to its end


def test_an_error_inside_the_stream_is_a_model_error_and_not_retried():
    # A client error (code 400) reported inside the stream: asking again would get the same.
    # (An error chunk without a code, or with a 5xx, is retried: test_provider_conformance.)
    frames = _frames(_chunk({"content": "par"}), {"error": {"message": "the model is overloaded", "type": "server",
                                                            "code": 400}})
    with _StreamServer(frames) as server:
        with pytest.raises(ModelError) as err:
            _collect(_model(server))
        hits = len(server.httpd.peers)
    assert err.value.message == "APIError: the model is overloaded"
    assert hits == 1
