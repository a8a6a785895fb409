"""The model transport's own HTTP/1.1 client (models/http1.py), held to httpx2 as the oracle.

Every answer below is raw bytes written by a real socket server on 127.0.0.1 (well-formed ones,
and the broken ones real servers and proxies send: short bodies, bad chunk sizes, LF line ends,
folded headers, 1xx answers, a body that is not the gzip it claims). Each is fetched by both
clients: the same status, headers and decoded body come back, or both fail with the same kind of
error (httpx2's class names). The requests they send are compared the same way, as the server
reads them. Then what only a client that keeps connections does: reuse, a connection the server
closed while idle, time limits; and which requests go direct at all (chat_http.direct_route)
against httpx2's own choice of proxy for the same environment.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx2
import pytest

from agentica_cli.models import chat_http, http1
from agentica_cli.models.chat_http import ChatEndpoint, HttpConnectionError, HttpStatusError, HttpTimeoutError
from agentica_cli.testing import ScriptedModelServer, turns

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                   "no_proxy", "REQUEST_METHOD", chat_http.CLIENT_ENV)


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# -- a server that writes given bytes -------------------------------------------------------------


@dataclass
class RawServer:
    """Answers each request with the next of `answers` (bytes, or a function of the request's
    bytes); `close` after each answer unless the answer says keep-alive. Records the requests
    (head and body as received) and how many connections were made."""

    answers: list[bytes | Callable[[bytes], bytes]]
    keep_open: bool = False
    pieces: int = 1  # the answer written in this many writes, apart in time
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                body, buffer = buffer[:length], buffer[length:]
                request = head + b"\r\n\r\n" + body
                with self._lock:
                    self.requests.append(request)
                    if not self.answers:
                        return
                    answer = self.answers.pop(0)
                raw = answer(request) if callable(answer) else answer
                size = max(1, -(-len(raw) // self.pieces))
                for start in range(0, len(raw), size):
                    conn.sendall(raw[start:start + size])
                    if self.pieces > 1:
                        threading.Event().wait(0.005)
                if not self.keep_open:
                    return

    def close(self) -> None:
        self._stop = True
        self.sock.close()


@contextmanager
def serving(answers: list, **options: object) -> Iterator[RawServer]:
    server = RawServer(list(answers), **options)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.close()


def ok(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def chunked(*chunks: bytes, trailer: bytes = b"") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n" + trailer + b"\r\n"


# -- the two clients, the same request --------------------------------------------------------


@dataclass
class Outcome:
    status: int | None = None
    headers: list[tuple[str, str]] | None = None
    body: bytes | None = None
    error: str | None = None  # the error's class name


async def _with_http1(url: str, method: str, headers: dict[str, str], body: bytes) -> Outcome:
    client = http1.Client(timeout=5, connect_timeout=5, tls=None)  # type: ignore[arg-type]
    try:
        response = await client.send(method, url, headers, body)
        return Outcome(response.status_code, [(k.lower(), v) for k, v in response.headers.items()], response.content)
    except http1.TransportError as err:
        return Outcome(error=type(err).__name__)
    finally:
        await client.aclose()


async def _with_httpx2(url: str, method: str, headers: dict[str, str], body: bytes) -> Outcome:
    async with httpx2.AsyncClient(trust_env=False, follow_redirects=True, timeout=5) as client:
        try:
            response = await client.request(method, url, headers=headers, content=body or None)
            return Outcome(response.status_code, [(k.lower(), v) for k, v in response.headers.multi_items()],
                           response.content)
        except httpx2.HTTPError as err:
            return Outcome(error=type(err).__name__)


def both(answer: bytes | Callable[[bytes], bytes], *, method: str = "POST", headers: dict[str, str] | None = None,
         body: bytes = b'{"q":1}', pieces: int = 1, path: str = "/v1/chat/completions") -> tuple[Outcome, Outcome]:
    """The answer fetched by http1 and by httpx2, each from a server of its own."""
    outcomes = []
    for fetch in (_with_http1, _with_httpx2):
        with serving([answer], pieces=pieces) as server:
            outcomes.append(asyncio.run(fetch(server.url + path, method, headers or {}, body)))
    return outcomes[0], outcomes[1]


BODY = b'{"id":"c1","choices":[]}'
STREAM = b'data: {"a":1}\n\ndata: [DONE]\n\n'
ANSWERS = {
    "content-length": ok(BODY, "Content-Type: application/json"),
    "chunked": ok(chunked(STREAM[:7], STREAM[7:]), "Transfer-Encoding: chunked", "Content-Type: text/event-stream"),
    "chunked, extensions and trailer": ok(b"5;name=value\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n",
                                          "Transfer-Encoding: chunked"),
    "chunked, upper-case hex": ok(b"A\r\n0123456789\r\n0\r\n\r\n", "Transfer-Encoding: chunked"),
    "to the connection's end": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + BODY,
    "HTTP/1.0": b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + BODY,
    "gzip": ok(gzip.compress(BODY), "Content-Encoding: gzip"),
    "gzip, chunked": ok(chunked(gzip.compress(BODY)[:9], gzip.compress(BODY)[9:]), "Content-Encoding: gzip",
                        "Transfer-Encoding: chunked"),
    "deflate (zlib)": ok(zlib.compress(BODY), "Content-Encoding: deflate"),
    "deflate (raw)": ok(zlib.compress(BODY)[2:-4], "Content-Encoding: deflate"),
    "unknown coding": ok(BODY, "Content-Encoding: x-unknown"),
    "100 Continue first": b"HTTP/1.1 100 Continue\r\n\r\n" + ok(BODY),
    "103 Early Hints first": b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n" + ok(BODY),
    "204": b"HTTP/1.1 204 No Content\r\n\r\n",
    "LF line ends": b"HTTP/1.1 200 OK\nContent-Length: 4\nX-A: b\n\nbody",
    "folded header": b"HTTP/1.1 200 OK\r\nX-Folded: one\r\n  two\r\nContent-Length: 2\r\n\r\nok",
    "no reason phrase": b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",
    "value spaces trimmed": b"HTTP/1.1 200 OK\r\nX-Space:   padded   \r\nContent-Length: 2\r\n\r\nok",
    "empty value": b"HTTP/1.1 200 OK\r\nX-Empty:\r\nContent-Length: 2\r\n\r\nok",
    "repeated header": b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\n\r\nok",
    "same Content-Length twice": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
    "429 with Retry-After": ok(b'{"error":{"message":"slow down"}}', "Retry-After: 3", status="429 Too Many Requests"),
    "500": ok(b"oops", status="500 Internal Server Error"),
    "latin-1 header value": b"HTTP/1.1 200 OK\r\nX-Name: caf\xe9\r\nContent-Length: 2\r\n\r\nok",
    "chunked and a Content-Length": ok(chunked(b"hello"), "Transfer-Encoding: chunked", "Content-Length: 99"),
    "Connection: close": ok(BODY, "Connection: close"),
    "304 with a Content-Length": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
    "HTTP/1.0 keep-alive": b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
    # broken ones
    "short body": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this",
    "bad chunk size": ok(b"zz\r\nhello\r\n0\r\n\r\n", "Transfer-Encoding: chunked"),
    "chunk cut short": ok(b"10\r\nhello", "Transfer-Encoding: chunked"),
    "chunk longer than its size": ok(b"2\r\nhello\r\n0\r\n\r\n", "Transfer-Encoding: chunked"),
    "unsupported Transfer-Encoding": ok(b"hello", "Transfer-Encoding: gzip, chunked"),
    "two Content-Lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!",
    "bad Content-Length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nok",
    "bad status line": b"HTTP/1.1 OK\r\nContent-Length: 2\r\n\r\nok",
    "not HTTP": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "header without colon": b"HTTP/1.1 200 OK\r\nBroken header\r\nContent-Length: 2\r\n\r\nok",
    "space before colon": b"HTTP/1.1 200 OK\r\nX-Bad : 1\r\nContent-Length: 2\r\n\r\nok",
    "fold before any header": b"HTTP/1.1 200 OK\r\n  folded\r\nContent-Length: 2\r\n\r\nok",
    "nothing at all": b"",
    "headers cut short": b"HTTP/1.1 200 OK\r\nContent-Le",
    "head too large": b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(1100)),
    "not the gzip it says": ok(b"plain text", "Content-Encoding: gzip"),
    "101 Switching Protocols": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
    "NUL in a header value": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok",
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_an_answer_reads_as_httpx2_reads_it(name: str) -> None:
    ours, oracle = both(ANSWERS[name])
    assert ours == oracle


@pytest.mark.parametrize("name", ["short body", "chunk cut short", "nothing at all"])
def test_a_body_cut_short_is_worded_as_httpx2_words_it(name: str) -> None:
    """The words reach the user (a retry notice: "connection failed: RemoteProtocolError: ...")."""
    messages = []
    for fetch in (_with_http1_message, _with_httpx2_message):
        with serving([ANSWERS[name]]) as server:
            messages.append(asyncio.run(fetch(server.url + "/")))
    assert messages[0] == messages[1]


async def _with_http1_message(url: str) -> str:
    client = http1.Client(timeout=5, connect_timeout=5, tls=None)  # type: ignore[arg-type]
    try:
        await client.send("POST", url, {}, b"{}")
    except http1.TransportError as err:
        return f"{type(err).__name__}: {err}"
    finally:
        await client.aclose()
    return "no error"


async def _with_httpx2_message(url: str) -> str:
    async with httpx2.AsyncClient(trust_env=False) as client:
        try:
            await client.post(url, content=b"{}")
        except httpx2.HTTPError as err:
            return f"{type(err).__name__}: {err}"
    return "no error"


@pytest.mark.parametrize("name", ["chunked", "gzip, chunked", "content-length", "to the connection's end"])
def test_an_answer_written_in_many_pieces_reads_the_same(name: str) -> None:
    ours, oracle = both(ANSWERS[name], pieces=7)
    assert ours == oracle and ours.error is None


def _request_of(raw: bytes, server: RawServer) -> tuple[bytes, dict[bytes, bytes], bytes]:
    """(request line, headers, body) as the server got them; the Host header (which names each
    run's own port) checked and written as HOST, httpx2's own User-Agent left out."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    assert headers[b"host"] == f"127.0.0.1:{server.port}".encode()
    headers[b"host"] = b"HOST"
    if headers.get(b"user-agent", b"").startswith(b"python-httpx"):
        del headers[b"user-agent"]
    return lines[0], headers, body


def _sent(fetch: Callable, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple:
    with serving([ok(b"{}")]) as server:
        outcome = asyncio.run(fetch(server.url + path, method, headers, body))
        return outcome.error, [_request_of(raw, server) for raw in server.requests]


@pytest.mark.parametrize(("method", "headers", "body"), [
    ("POST", {"Authorization": "Bearer k", "Content-Type": "application/json", "Accept": "application/json",
              "User-Agent": "agentica/test", "X-Custom": "a b\tc"}, json.dumps({"q": "é"}).encode()),
    ("POST", {}, b""),
    ("GET", {"accept-encoding": "identity"}, b""),
])
def test_a_request_reaches_the_server_as_httpx2_sends_it(method: str, headers: dict[str, str], body: bytes) -> None:
    ours = _sent(_with_http1, method, "/v1/chat/completions?api-version=2024-06-01", headers, body)
    oracle = _sent(_with_httpx2, method, "/v1/chat/completions?api-version=2024-06-01", headers, body)
    assert ours == oracle
    assert ours[0] is None and len(ours[1]) == 1


@pytest.mark.parametrize("headers", [
    {"X-Injected": "a\r\nX-Evil: 1"}, {"X-Injected": "a\nb"}, {"X-Nul": "a\x00b"}, {"Bad Name": "v"},
    {"X-Trailing": "v "}, {"X-Leading": " v"},
])
def test_a_header_h11_refuses_is_refused_before_anything_is_sent(headers: dict[str, str]) -> None:
    ours = _sent(_with_http1, "POST", "/", headers, b"{}")
    oracle = _sent(_with_httpx2, "POST", "/", headers, b"{}")
    assert ours == oracle == ("LocalProtocolError", [])


def test_a_header_that_is_not_ascii_is_refused_and_nothing_is_sent() -> None:
    error, sent = _sent(_with_http1, "POST", "/", {"X-Name": "café"}, b"{}")
    assert (error, sent) == ("LocalProtocolError", [])
    with pytest.raises(UnicodeEncodeError):  # httpx2 refuses it too, before its transport
        _sent(_with_httpx2, "POST", "/", {"X-Name": "café"}, b"{}")


# -- redirects ----------------------------------------------------------------------------------


def _redirecting(status: int, location: str) -> Callable[[bytes], bytes]:
    return lambda _request: ok(b"", f"Location: {location}", status=f"{status} Moved")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_followed_as_httpx2_follows_it(status: int) -> None:
    """The method and body kept or turned into a GET, by status; the Authorization header kept
    on the same origin."""
    results = []
    for fetch in (_with_http1, _with_httpx2):
        with serving([_redirecting(status, "/moved?x=1"), ok(b"there")], keep_open=True) as server:
            outcome = asyncio.run(fetch(server.url + "/v1/chat/completions", "POST",
                                        {"Authorization": "Bearer k", "Content-Type": "application/json"}, b'{"q":1}'))
            results.append((outcome, [_request_of(raw, server) for raw in server.requests]))
    (ours, ours_sent), (oracle, oracle_sent) = results
    assert ours == oracle and ours.body == b"there"
    assert ours_sent == oracle_sent
    assert ours_sent[1][1][b"authorization"] == b"Bearer k"


def test_a_redirect_to_another_origin_drops_the_key_as_httpx2_does() -> None:
    results = []
    for fetch in (_with_http1, _with_httpx2):
        with serving([ok(b"elsewhere")]) as target:
            with serving([_redirecting(307, target.url + "/v1/chat/completions")]) as first:
                outcome = asyncio.run(fetch(first.url + "/v1/chat/completions", "POST",
                                            {"Authorization": "Bearer secret"}, b"{}"))
            results.append((outcome, [_request_of(raw, target) for raw in target.requests]))
    (ours, ours_sent), (oracle, oracle_sent) = results
    assert ours == oracle and ours.body == b"elsewhere"
    assert ours_sent == oracle_sent  # the Host header the target's (checked), the key left out
    assert b"authorization" not in ours_sent[0][1]


def test_a_redirect_loop_ends_as_too_many_redirects() -> None:
    for fetch in (_with_http1, _with_httpx2):
        with serving([_redirecting(307, "/again")] * 30, keep_open=True) as server:
            outcome = asyncio.run(fetch(server.url + "/", "POST", {}, b"{}"))
            assert outcome.error == "TooManyRedirects"
            assert len(server.requests) == 21  # the first and 20 redirects, as httpx2's limit


# -- connections --------------------------------------------------------------------------------


def test_connections_are_kept_alive_and_one_the_server_closed_is_not_reused() -> None:
    async def three(url: str, server: RawServer) -> list[bytes]:
        client = http1.Client(timeout=5, connect_timeout=5, tls=None)  # type: ignore[arg-type]
        bodies = []
        for _ in range(3):
            response = await client.send("POST", url, {}, b"{}")
            bodies.append(response.content)
            await asyncio.sleep(0.05)  # the server's close (after the 2nd answer) arrives while idle
        await client.aclose()
        return bodies

    keep = ok(b"a", "Connection: keep-alive")
    with serving([keep, keep, keep], keep_open=True) as server:
        # the first two on one connection; the server ends that one after the second answer
        server.answers[1] = lambda _request, answer=keep: answer
        original = server._handle

        def handle_then_close_after_two(conn: socket.socket) -> None:
            server.keep_open = server.connections < 2
            original(conn)

        server._handle = handle_then_close_after_two  # type: ignore[method-assign]
        assert asyncio.run(three(server.url + "/", server)) == [b"a", b"a", b"a"]
        assert len(server.requests) == 3


def test_the_same_connection_carries_every_request_while_the_server_keeps_it() -> None:
    async def many(url: str) -> None:
        client = http1.Client(timeout=5, connect_timeout=5, tls=None)  # type: ignore[arg-type]
        for _ in range(5):
            response = await client.send("POST", url, {}, b"{}", stream=True)
            assert b"".join([piece async for piece in response.aiter_bytes()]) == STREAM
            await response.aclose()
        await client.aclose()

    answer = ok(chunked(STREAM), "Transfer-Encoding: chunked")
    with serving([answer] * 5, keep_open=True) as server:
        asyncio.run(many(server.url + "/"))
        assert server.connections == 1 and len(server.requests) == 5


def test_a_stream_left_unread_closes_its_connection_instead_of_reusing_it() -> None:
    async def go(url: str) -> list[bytes]:
        client = http1.Client(timeout=5, connect_timeout=5, tls=None)  # type: ignore[arg-type]
        first = await client.send("POST", url, {}, b"{}", stream=True)
        await first.aclose()  # its body never read
        second = await client.send("POST", url, {}, b"{}")
        await client.aclose()
        return [second.content]

    answer = ok(b"x" * 200_000)
    with serving([answer, ok(b"second")], keep_open=True) as server:
        assert asyncio.run(go(server.url + "/")) == [b"second"]
        assert server.connections == 2


def test_an_idle_connection_past_the_keepalive_expiry_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1, "KEEPALIVE_EXPIRY", 0.05)

    async def go(url: str) -> None:
        client = http1.Client(timeout=5, connect_timeout=5, tls=None)  # type: ignore[arg-type]
        await client.send("POST", url, {}, b"{}")
        await asyncio.sleep(0.1)
        await client.send("POST", url, {}, b"{}")
        await client.aclose()

    with serving([ok(b"a"), ok(b"b")], keep_open=True) as server:
        asyncio.run(go(server.url + "/"))
        assert server.connections == 2


def test_an_answer_that_never_comes_is_a_read_timeout_and_the_endpoint_says_timed_out(no_proxies: None) -> None:
    async def go(url: str) -> None:
        endpoint = ChatEndpoint(api_key="k", base_url=url, timeout=0.3, connect_timeout=5)
        assert endpoint.client_name == "http1"
        try:
            await endpoint.complete({"model": "m"})
        finally:
            await endpoint.aclose()

    def never_answer(_request: bytes) -> bytes:
        threading.Event().wait(3)  # past the client's read timeout
        return b""

    never = serving([never_answer])
    with never as server, pytest.raises(HttpTimeoutError) as caught:
        asyncio.run(go(server.url + "/v1"))
    assert isinstance(caught.value.__cause__, http1.ReadTimeout)
    assert str(caught.value.request.url).endswith("/v1/chat/completions")


def test_a_refused_connection_keeps_its_cause_for_the_error_message(no_proxies: None) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def go() -> None:
        endpoint = ChatEndpoint(api_key="k", base_url=f"http://127.0.0.1:{port}/v1", timeout=5, connect_timeout=5)
        try:
            await endpoint.complete({"model": "m"})
        finally:
            await endpoint.aclose()

    with pytest.raises(HttpConnectionError) as caught:
        asyncio.run(go())
    assert isinstance(caught.value.__cause__, http1.ConnectError)
    assert isinstance(caught.value.__cause__.__cause__, ConnectionRefusedError)


def test_an_error_status_is_read_and_raised_with_its_body_and_headers(no_proxies: None) -> None:
    async def go(url: str) -> None:
        endpoint = ChatEndpoint(api_key="k", base_url=url, timeout=5, connect_timeout=5)
        try:
            await endpoint.open_stream({"model": "m", "stream": True})
        finally:
            await endpoint.aclose()

    answer = ok(b'{"error":{"message":"slow down","type":"rate_limit"}}', "Retry-After: 7",
                "Content-Type: application/json", status="429 Too Many Requests")
    with serving([answer]) as server, pytest.raises(HttpStatusError) as caught:
        asyncio.run(go(server.url + "/v1"))
    error = caught.value
    assert (error.status_code, error.message) == (429, "Error code: 429 - slow down")
    assert error.body == {"message": "slow down", "type": "rate_limit"}
    assert error.response.headers.get("retry-after") == "7"


def test_a_header_with_a_line_break_is_a_model_error_not_a_retry(no_proxies: None) -> None:
    from agentica_cli.models import ModelError

    async def go(url: str) -> None:
        endpoint = ChatEndpoint(api_key="k", base_url=url, timeout=5, connect_timeout=5,
                                default_headers={"X-Team": "a\r\nX-Evil: 1"})
        try:
            await endpoint.complete({"model": "m"})
        finally:
            await endpoint.aclose()

    with serving([ok(b"{}")]) as server:
        with pytest.raises(ModelError, match="cannot be sent"):
            asyncio.run(go(server.url + "/v1"))
        assert server.requests == []


# -- end to end, through the model client ------------------------------------------------------


def test_the_model_client_streams_and_calls_tools_over_the_direct_client(no_proxies: None) -> None:
    from agentica_cli.models import OpenAIChat

    answers = [turns.tool_calls(turns.call("read_file", {"path": "a.txt"})), turns.text("the answer")]
    with ScriptedModelServer(answers) as server:
        model = OpenAIChat("scripted", api_key="k", base_url=server.base_url)

        async def go() -> list:
            first = [e async for e in model.response_stream([{"role": "user", "content": "hi"}])]
            second = [e async for e in model.response_stream([{"role": "user", "content": "again"}])]
            assert model._endpoint.client_name == "http1"  # type: ignore[attr-defined]
            await model._endpoint.aclose()  # type: ignore[attr-defined]
            return [first[-1], second[-1]]

        first, second = asyncio.run(go())
        assert [c.name for c in first.tool_calls] == ["read_file"]
        assert second.content == "the answer"
        assert len(server.request_log) == 2


# -- which requests go direct -----------------------------------------------------------------

ROUTE_URLS = ["http://127.0.0.1:8080/v1/chat/completions", "https://api.example.com/v1/chat/completions",
              "http://localhost:11434/v1/chat/completions", "https://gw.corp.example.com/v1/chat/completions",
              "http://10.1.2.3/v1/chat/completions"]
ROUTE_ENVIRONMENTS = [
    {},
    {"HTTPS_PROXY": "http://proxy:3128"},
    {"https_proxy": "http://proxy:3128", "NO_PROXY": "example.com"},
    {"ALL_PROXY": "http://proxy:3128", "NO_PROXY": "127.0.0.1,localhost,::1"},
    {"all_proxy": "http://proxy:3128", "no_proxy": ".example.com"},
    {"HTTP_PROXY": "http://proxy:3128", "no_proxy": "*.corp.example.com, 10.0.0.0/8"},
    {"http_proxy": "http://proxy:3128", "HTTP_PROXY": "", "REQUEST_METHOD": "GET"},
    {"HTTP_PROXY": "http://proxy:3128", "REQUEST_METHOD": "GET"},
    {"ALL_PROXY": "socks5://proxy:1080", "NO_PROXY": "*"},
    {"HTTPS_PROXY": "http://proxy:3128", "no_proxy": "", "NO_PROXY": "example.com"},
    {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "api.example.com:443,[::1],localhost"},
    {"ftp_proxy": "http://proxy:21"},
]


@pytest.mark.parametrize("env", ROUTE_ENVIRONMENTS, ids=lambda env: ",".join(f"{k}={v}" for k, v in env.items()))
def test_a_request_goes_direct_only_where_httpx2_would_not_use_a_proxy(env: dict[str, str],
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       no_proxies: None) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    client = httpx2.AsyncClient(trust_env=True)
    for url in ROUTE_URLS:
        proxied = client._transport_for_url(httpx2.URL(url)) is not client._transport
        if chat_http.direct_route(url):
            assert not proxied, url


def test_the_common_settings_go_direct(monkeypatch: pytest.MonkeyPatch, no_proxies: None) -> None:
    assert chat_http.direct_route("https://api.example.com/v1/chat/completions")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1,.internal")
    assert chat_http.direct_route("http://127.0.0.1:8000/v1/chat/completions")
    assert chat_http.direct_route("http://localhost:11434/v1/chat/completions")
    assert chat_http.direct_route("https://llm.internal/v1/chat/completions")
    assert not chat_http.direct_route("https://api.example.com/v1/chat/completions")
    monkeypatch.setenv(chat_http.CLIENT_ENV, "httpx2")
    assert not chat_http.direct_route("http://127.0.0.1:8000/v1/chat/completions")


def test_a_proxied_endpoint_sends_over_httpx2_through_its_proxy(monkeypatch: pytest.MonkeyPatch,
                                                                no_proxies: None) -> None:
    """A forward proxy (it reads the absolute URL and answers itself) sees the request."""
    answer = ok(json.dumps({"choices": [], "via": "proxy"}).encode(), "Content-Type: application/json")
    with serving([answer]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)

        async def go() -> object:
            endpoint = ChatEndpoint(api_key="k", base_url="http://model.test/v1", timeout=5, connect_timeout=5)
            assert endpoint.client_name == "httpx2"
            try:
                return await endpoint.complete({"model": "m"})
            finally:
                await endpoint.aclose()

        assert asyncio.run(go()) == {"choices": [], "via": "proxy"}
        assert proxy.requests[0].startswith(b"POST http://model.test/v1/chat/completions HTTP/1.1")


def test_a_redirect_where_a_proxy_applies_is_sent_over_httpx2_through_the_proxy(
        monkeypatch: pytest.MonkeyPatch, no_proxies: None) -> None:
    answer = ok(json.dumps({"choices": [], "via": "proxy"}).encode(), "Content-Type: application/json")
    with serving([answer]) as proxy, serving([_redirecting(307, "http://model.test/v1/chat/completions")] * 2) as first:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")

        async def go() -> tuple[object, str]:
            endpoint = ChatEndpoint(api_key="k", base_url=first.url + "/v1", timeout=5, connect_timeout=5)
            assert endpoint.client_name == "http1"
            try:
                return await endpoint.complete({"model": "m"}), endpoint.client_name
            finally:
                await endpoint.aclose()

        assert asyncio.run(go()) == ({"choices": [], "via": "proxy"}, "httpx2")
        assert len(first.requests) == 2  # asked once directly, once again through httpx2 (which follows it)
        assert proxy.requests[0].startswith(b"POST http://model.test/v1/chat/completions HTTP/1.1")


@pytest.mark.parametrize("base_url", [
    "http://127.0.0.1:8080/v1", "https://api.openai.com/v1", "https://API.Example.COM/v1/", "http://host:80/v1",
    "https://host:443/v1", "https://host:8443/", "https://res.openai.azure.com/openai/deployments/gpt?api-version=1",
    "http://localhost:11434/v1", "https://example.com", "https://example.com/a%20b", "https://example.com/a b",
    "https://exämple.com/v1", "http://[::1]:8000/v1", "https://user:pw@example.com/v1", "https://example.com/./v1/../v2",
])
def test_the_url_is_written_as_httpx2_writes_it(base_url: str) -> None:
    url = httpx2.URL(base_url)
    path, separator, query = url.raw_path.partition(b"?")
    expected = str(url.copy_with(raw_path=path + (b"" if path.endswith(b"/") else b"/") + b"chat/completions"
                                 + separator + query))
    assert chat_http.chat_url(base_url) == expected
