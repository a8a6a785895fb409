"""The scripted server's never-ending faults (`turns.stall`, `turns.hang`), over raw sockets.

They must look endless to a client, yet end on their own: when the client disconnects, when
the server stops, or after their limit, so a test of a client without deadlines fails by
its timeout instead of hanging.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.timeout(60)


def post(server: ScriptedModelServer, stream: bool = True) -> socket.socket:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return sock


def read_for(sock: socket.socket, seconds: float) -> bytes:
    """Everything the server sends in `seconds` (less if it closes the connection)."""
    data, end = b"", time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            piece = sock.recv(65536)
        except TimeoutError:
            break
        if not piece:
            break
        data += piece
    return data


def wait_until(condition, seconds: float = 10) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.02)


def test_stall_sends_some_chunks_then_only_keep_alive_comments_until_the_client_leaves():
    with ScriptedModelServer([turns.stall(turns.text("hello world"), after=2, every=0.1)],
                             text_chunk_chars=5) as server:
        sock = post(server)
        received = read_for(sock, 0.8)
        head, _, stream = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        assert stream.count(b"data: {") == 2  # the role chunk and "hello"
        assert b'"hello"' in stream and b"[DONE]" not in stream and b'"finish_reason": "stop"' not in stream
        assert stream.count(b": keep-alive\n\n") >= 3  # ~7 in 0.8 s
        sock.close()  # the client gives up: the handler stops holding the connection
        wait_until(lambda: server.request_log[0].finished_at > 0)


def test_stall_with_empty_chunks_sends_deltas_without_content():
    with ScriptedModelServer([turns.stall(turns.text("hi"), after=1, every=0.1, send="empty")]) as server:
        sock = post(server)
        stream = read_for(sock, 0.6).partition(b"\r\n\r\n")[2]
        sock.close()
    chunks = [json.loads(line[6:]) for line in stream.decode().splitlines() if line.startswith("data: {")]
    assert len(chunks) >= 3
    assert [c["choices"][0]["delta"] for c in chunks[1:]] == [{}] * (len(chunks) - 1)


def test_hang_never_sends_headers_and_closes_after_its_limit():
    with ScriptedModelServer([turns.hang(limit=1)]) as server:
        sock = post(server)
        started = time.monotonic()
        assert read_for(sock, 20) == b""  # nothing at all, then the connection closes
        assert 0.8 < time.monotonic() - started < 15
        assert server.request_log[0].status == 0


def test_hang_of_a_non_streamed_stall_and_server_stop_end_the_wait():
    server = ScriptedModelServer([turns.stall(turns.text("x"))]).start()  # limit 60 s
    sock = post(server, stream=False)
    assert read_for(sock, 0.5) == b""  # a non-streamed request is not answered at all
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 10  # stop() does not wait for the 60 s limit
    assert read_for(sock, 5) == b""
    sock.close()


def test_fault_options_are_checked():
    with pytest.raises(ValueError, match="send must be one of comment, empty, nothing"):
        turns.stall(turns.text("x"), send="noise")
    with pytest.raises(ValueError):
        turns.hang(limit=0)
