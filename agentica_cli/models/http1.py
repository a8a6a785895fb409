"""A small HTTP/1.1 client on asyncio's streams: the model transport's direct route.

httpx2 with what it runs on (anyio, httpcore2, h11, and the stdlib's email, http.client and
urllib.request it imports) costs 55-70 ms of CPU to import, in every `agentica -p` process and
in the batch's zygote before it can fork its first session (docs/performance.md). A chat
completions request needs little of it: one POST of a ready body to one origin, the answer read
as it comes. This module does that with the stdlib only (asyncio, ssl, zlib), keeping httpx2's
behaviour for what such a request meets:

- connections: TCP with happy eyeballs (anyio's 0.25 s), TLS with the context the caller gives
  (chat_http's, as httpx2 makes it), kept alive per origin and reused for up to 5 s idle
  (httpx2's keepalive_expiry); one the server closed while idle is noticed before reuse (it
  reads as readable) and dropped, as httpcore2 drops it;
- the request: `Host`, then httpx2's defaults (`Accept: */*`, `Accept-Encoding: gzip, deflate`,
  `Connection: keep-alive`), then the caller's headers, `Content-Length`; names and values
  validated as h11 validates them (no CR, LF or NUL can reach the wire);
- the answer: h11's framing rules (1xx skipped, no body for 204 and 304, `chunked`, a
  `Content-Length`, else the body runs to the connection's end), a head of at most 100 KiB,
  line ends LF or CRLF, obsolete line folding joined; gzip and deflate bodies decoded;
- redirects: followed up to 20, as httpx2 follows them (303, and 301/302 after a POST, become a
  GET without body; `Authorization` dropped when the origin changes, but for an http -> https
  upgrade of the same host); the caller's `before_tls` runs before any https connection;
- time limits: one for connecting (DNS, TCP and TLS), one for each read and each write.

Errors are TransportError subclasses, named as httpx2 names them (ConnectError, ReadTimeout,
RemoteProtocolError, ...), each with the request. Not here, so chat_http sends through httpx2
instead (chat_http.direct_route): proxies (any *_proxy variable), user info in the URL, a host
that is not ASCII, Python before 3.11 (no asyncio.timeout), and platforms whose proxies come from
system settings (macOS, Windows). Cookies a server sets are not kept (httpx2's client would send
them back to it); a chat completions API does not use them.
"""

from __future__ import annotations

import asyncio
import re
import select
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from urllib.parse import urljoin, urlsplit

MAX_HEAD = 100 * 1024  # httpcore2's h11 limit on a response's status line and headers
MAX_REDIRECTS = 20  # httpx2's
KEEPALIVE_EXPIRY = 5.0  # httpx2's: seconds an idle connection may wait for reuse
HAPPY_EYEBALLS_DELAY = 0.25  # anyio's connect_tcp
READ_SIZE = 65536
DEFAULT_HEADERS = (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"), ("Connection", "keep-alive"))
DEFAULT_PORTS = {"http": 80, "https": 443}

_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")  # a header name (RFC 9110 token), as h11 checks it
# A header value: visible characters and obs-text, inner spaces and tabs, nothing at its ends (h11's field_value)
_FIELD_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?")
_STATUS_LINE = re.compile(rb"HTTP/(\d)\.(\d) ([0-9]{3})(?: ([\t\x20-\x7e\x80-\xff]*))?")
_HEADER_LINE = re.compile(rb"([^\s:]+):[ \t]*(.*?)[ \t]*")
_HEAD_END = re.compile(rb"\n\r?\n")
_CUT = "peer closed connection without sending complete message body"  # h11's words, which users may know
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,20})[ \t]*(?:;.*)?")


class TransportError(Exception):
    """No (whole) answer: the connection, the protocol or a time limit failed."""

    def __init__(self, message: str, *, request: Request):
        super().__init__(message)
        self.request = request


class TimeoutException(TransportError):  # httpx2's name
    pass


class ConnectError(TransportError):
    pass


class ConnectTimeout(TimeoutException):
    pass


class ReadError(TransportError):
    pass


class ReadTimeout(TimeoutException):
    pass


class WriteError(TransportError):
    pass


class WriteTimeout(TimeoutException):
    pass


class RemoteProtocolError(TransportError):
    """The server broke HTTP/1.1 (a bad status line or framing, a connection closed early)."""


class LocalProtocolError(TransportError):
    """The request cannot be sent as given (a header value with a line break, say)."""


class DecodingError(TransportError):
    """A gzip or deflate body that does not decode."""


class TooManyRedirects(TransportError):
    pass


class NotDirect(TransportError):
    """A redirect to a URL this client must not connect to itself (`Client.may_connect`: a proxy
    would carry it): the caller sends the request another way."""


class Request:
    """What was sent (the errors' and responses' `request`; `url` is what an error message names)."""

    def __init__(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes):
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.url}>"


class Headers:
    """A response's headers: names compared without case; a repeated one reads as its values
    joined by ", " (as httpx2's Headers.get joins them)."""

    def __init__(self, items: list[tuple[str, str]]):
        self._items = items

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower()
        values = [value for item, value in self._items if item.lower() == key]
        return ", ".join(values) if values else default

    def get_list(self, name: str) -> list[str]:
        key = name.lower()
        return [value for item, value in self._items if item.lower() == key]

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(name.lower() for name, _ in self._items))

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


class _Origin:
    __slots__ = ("host", "key", "port", "scheme")

    def __init__(self, scheme: str, host: str, port: int):
        self.scheme, self.host, self.port = scheme, host, port
        self.key = (scheme, host, port)


class _Target:
    """A URL taken apart for one request: its origin, the Host header's value, the request target."""

    def __init__(self, url: str, request: Request):
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as err:
            raise LocalProtocolError(f"invalid URL {url!r}: {err}", request=request) from None
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        if scheme not in DEFAULT_PORTS or not host:
            raise LocalProtocolError(f"invalid URL {url!r}: an http or https URL with a host is needed",
                                     request=request)
        if not host.isascii() or parts.username is not None or parts.password is not None:
            raise LocalProtocolError(f"URL {url!r}: a non-ASCII host or user info is httpx2's to send",
                                     request=request)
        port = port or DEFAULT_PORTS[scheme]
        self.origin = _Origin(scheme, host, port)
        shown = f"[{host}]" if ":" in host else host
        self.host_header = shown if port == DEFAULT_PORTS[scheme] else f"{shown}:{port}"
        path = parts.path or "/"
        self.target = path + (f"?{parts.query}" if parts.query else "")
        if not self.target.isascii() or any(c in self.target for c in " \t\r\n\x00"):
            from urllib.parse import quote

            self.target = quote(self.target, safe="/?=&%:@!$'()*+,;-._~")


class _Connection:
    """One socket to one origin, with what has been read from it and not yet used."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, origin: _Origin):
        self.reader = reader
        self.writer = writer
        self.origin = origin
        self.buffer = bytearray()
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        """Whether an idle connection can carry another request: not expired, and nothing to read
        on it (a server that closed it, or sent what it should not have, makes it readable)."""
        # asyncio reads the socket whenever it can: what came while idle is in the reader's buffer
        # (or is its end); what came since the loop last looked makes the socket readable
        unread = getattr(self.reader, "_buffer", None)
        if self.buffer or unread or now - self.idle_since > KEEPALIVE_EXPIRY or self.reader.at_eof():
            return False
        sock = self.writer.get_extra_info("socket")
        if sock is None:
            return False
        try:
            readable, _, _ = select.select([sock.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    async def fill(self, seconds: float | None, request: Request) -> bool:
        """Read what the server sent next into the buffer; False at the connection's end."""
        try:
            async with asyncio.timeout(seconds):
                data = await self.reader.read(READ_SIZE)
        except TimeoutError:
            raise ReadTimeout("timed out reading the answer", request=request) from None
        except (OSError, ssl.SSLError) as err:
            raise ReadError(str(err) or type(err).__name__, request=request) from err
        if not data:
            return False
        self.buffer += data
        return True

    def take(self, count: int) -> bytes:
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data

    def abort(self) -> None:
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()


class _Decoder:
    """Content-Encoding undone (gzip, deflate; an unknown coding is passed through, as httpx2 does)."""

    def __init__(self, codings: list[str], request: Request):
        self.request = request
        self.steps: list[list] = []  # [kind, decompressobj, first chunk seen] in decoding order
        for coding in reversed(codings):
            if coding == "gzip":
                self.steps.append(["gzip", zlib.decompressobj(zlib.MAX_WBITS | 16), False])
            elif coding == "deflate":
                self.steps.append(["deflate", zlib.decompressobj(), False])

    def decode(self, data: bytes) -> bytes:
        for step in self.steps:
            data = self._step(step, data)
        return data

    def flush(self) -> bytes:
        data = b""
        for step in self.steps:
            data = self._step(step, data) + step[1].flush() if data else step[1].flush()
        return data

    def _step(self, step: list, data: bytes) -> bytes:
        kind, inflate, started = step
        try:
            if kind == "deflate" and not started and data:
                step[2] = True
                try:  # zlib-wrapped as the RFC says; raw deflate as some servers send it (httpx2 tries both)
                    return inflate.decompress(data)
                except zlib.error:
                    step[1] = zlib.decompressobj(-zlib.MAX_WBITS)
                    return step[1].decompress(data)
            return inflate.decompress(data)
        except zlib.error as err:
            raise DecodingError(f"the {kind} body does not decode: {err}", request=self.request) from err


class Response:
    """An answer whose status and headers are read; its body is read with aread() or
    aiter_bytes() (decoded), and aclose() gives the connection back (or closes it)."""

    def __init__(self, request: Request, status_code: int, reason: str, version: str, headers: Headers,
                 connection: _Connection, framing: str, length: int, reusable: bool, client: Client):
        self.request = request
        self.url = request.url
        self.status_code = status_code
        self.reason_phrase = reason
        self.http_version = version
        self.headers = headers
        self._connection: _Connection | None = connection
        self._framing = framing  # "none", "length", "chunked" or "close"
        self._left = length  # bytes of the body (or of the current chunk) not read yet
        self._reusable = reusable
        self._client = client
        codings = [c.strip().lower() for c in (headers.get("content-encoding") or "").split(",") if c.strip()]
        self._decoder = _Decoder(codings, request) if codings else None
        self._content: bytes | None = None
        self._started = False
        self._done = framing == "none"
        if self._done:
            self._release()

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def is_redirect(self) -> bool:
        return self.status_code in (301, 302, 303, 307, 308) and "location" in self.headers

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise RuntimeError("the body is not read yet (aread())")
        return self._content

    @property
    def text(self) -> str:
        return self.content.decode(self._charset(), errors="replace")

    def _charset(self) -> str:
        for param in (self.headers.get("content-type") or "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                charset = value.strip().strip('"')
                try:
                    import codecs

                    codecs.lookup(charset)
                    return charset
                except LookupError:
                    break
        return "utf-8"

    async def aread(self) -> bytes:
        if self._content is None:
            self._content = b"".join([piece async for piece in self.aiter_bytes()])
        return self._content

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        if self._content is not None:
            if self._content:
                yield self._content
            return
        if self._started:
            raise RuntimeError("the body was read already")
        self._started = True
        decoder = self._decoder
        async for raw in self._raw():
            data = decoder.decode(raw) if decoder is not None else raw
            if data:
                yield data
        if decoder is not None:
            rest = decoder.flush()
            if rest:
                yield rest

    async def _raw(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if self._done or connection is None:
            return
        read_timeout = self._client.timeout
        request = self.request
        if self._framing == "length":
            length = self._left
            while self._left:
                if not connection.buffer and not await connection.fill(read_timeout, request):
                    raise RemoteProtocolError(f"{_CUT} (received {length - self._left} bytes, expected {length})",
                                              request=request)
                piece = connection.take(min(self._left, len(connection.buffer)))
                self._left -= len(piece)
                yield piece
        elif self._framing == "chunked":
            while True:
                line = await self._line(connection, read_timeout)
                size = _CHUNK_SIZE.fullmatch(line)
                if size is None:
                    raise RemoteProtocolError(f"bad chunk size line {line[:40]!r}", request=request)
                self._left = int(size.group(1), 16)
                if self._left == 0:
                    while await self._line(connection, read_timeout):  # trailers, up to the blank line
                        pass
                    break
                while self._left:
                    if not connection.buffer and not await connection.fill(read_timeout, request):
                        raise RemoteProtocolError(f"{_CUT} (incomplete chunked read)", request=request)
                    piece = connection.take(min(self._left, len(connection.buffer)))
                    self._left -= len(piece)
                    yield piece
                if await self._line(connection, read_timeout):
                    raise RemoteProtocolError("a chunk is longer than its size says", request=request)
        else:  # "close": the body is whatever comes until the server closes
            if connection.buffer:
                yield connection.take(len(connection.buffer))
            while await connection.fill(read_timeout, request):
                yield connection.take(len(connection.buffer))
        self._done = True
        self._release()

    async def _line(self, connection: _Connection, read_timeout: float | None) -> bytes:
        """The next line of a chunked body (its size line, its end, a trailer), without its end."""
        while True:
            end = connection.buffer.find(b"\n")
            if end >= 0:
                line = connection.take(end + 1)[:-1]
                return line[:-1] if line.endswith(b"\r") else line
            if len(connection.buffer) > MAX_HEAD:
                raise RemoteProtocolError("a chunk line is too long", request=self.request)
            if not await connection.fill(read_timeout, self.request):
                raise RemoteProtocolError(f"{_CUT} (incomplete chunked read)", request=self.request)

    def _release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            if self._reusable and not connection.buffer:
                self._client._give_back(connection)
            else:
                connection.abort()

    async def aclose(self) -> None:
        """Done with it: a connection whose body was read whole goes back to the pool; one cut
        short is closed (what is left of its body would be read as the next answer)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.abort()

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"


class Client:
    """Requests over kept-alive HTTP/1.1 connections, for one event loop (asyncio's streams
    belong to the loop that opened them). `tls`: the context for https; `before_tls`, if given,
    runs before any https connection is opened (chat_http loads the context's CA certificates);
    `may_connect(url)`, if given, says whether a redirect to another origin may be followed here
    (else NotDirect is raised)."""

    def __init__(self, *, timeout: float | None, connect_timeout: float | None, tls: ssl.SSLContext,
                 before_tls: Callable[[], object] | None = None, max_redirects: int = MAX_REDIRECTS,
                 may_connect: Callable[[str], bool] | None = None):
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.tls = tls
        self.before_tls = before_tls
        self.max_redirects = max_redirects
        self.may_connect = may_connect
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}

    async def send(self, method: str, url: str, headers: Mapping[str, str], body: bytes = b"",
                   *, stream: bool = False) -> Response:
        """The answer to `method url`, redirects followed; with `stream` its body unread."""
        request = Request(method, url, list(headers.items()), body)
        for _hop in range(self.max_redirects + 1):
            response = await self._send_one(request)
            if not response.is_redirect:
                if not stream:
                    try:
                        await response.aread()
                    finally:
                        await response.aclose()
                return response
            next_request = self._redirected(request, response)
            await _discard(response)
            request = next_request
        raise TooManyRedirects(f"more than {self.max_redirects} redirects", request=request)

    def _redirected(self, request: Request, response: Response) -> Request:
        location = response.headers["location"]
        url = urljoin(request.url, location.strip())
        try:
            old, new = urlsplit(request.url), urlsplit(url)
            old_origin = (old.scheme.lower(), old.hostname, old.port or DEFAULT_PORTS.get(old.scheme.lower()))
            new_origin = (new.scheme.lower(), new.hostname, new.port or DEFAULT_PORTS.get(new.scheme.lower()))
        except ValueError as err:
            raise RemoteProtocolError(f"invalid URL in the Location header: {err}", request=request) from None
        method = request.method
        status = response.status_code
        if (status == 303 and method != "HEAD") or (status == 302 and method not in ("HEAD", "QUERY")) \
                or (status == 301 and method == "POST"):
            method = "GET"
        headers = list(request.headers)
        if old_origin != new_origin:
            if self.may_connect is not None and not self.may_connect(url):
                raise NotDirect(f"redirected to {url}, which a proxy would carry", request=request)
            upgrade = (old_origin[1] == new_origin[1] and old_origin[0] == "http" and old_origin[2] == 80
                       and new_origin[0] == "https" and new_origin[2] == 443)
            if not upgrade:
                headers = [(name, value) for name, value in headers if name.lower() != "authorization"]
        body = request.body
        if method != request.method and method == "GET":
            headers = [(name, value) for name, value in headers
                       if name.lower() not in ("content-length", "transfer-encoding")]
            body = b""
        return Request(method, url, headers, body)

    async def _send_one(self, request: Request) -> Response:
        target = _Target(request.url, request)
        head = _request_head(request, target)
        connection = await self._connection(target.origin, request)
        try:
            await self._write(connection, head + request.body if len(request.body) < READ_SIZE else head, request)
            if len(request.body) >= READ_SIZE:
                await self._write(connection, request.body, request)
            return await self._read_head(connection, request)
        except BaseException:
            connection.abort()
            raise

    async def _connection(self, origin: _Origin, request: Request) -> _Connection:
        idle = self._idle.get(origin.key)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.usable(now):
                return connection
            connection.abort()
        tls = None
        if origin.scheme == "https":
            if self.before_tls is not None:
                self.before_tls()
            tls = self.tls
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(
                    origin.host, origin.port, ssl=tls, server_hostname=origin.host if tls else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY, limit=READ_SIZE)
        except TimeoutError:
            raise ConnectTimeout(f"timed out connecting to {origin.host}:{origin.port}", request=request) from None
        except (OSError, ssl.SSLError) as err:
            raise ConnectError(str(err) or type(err).__name__, request=request) from err
        return _Connection(reader, writer, origin)

    async def _write(self, connection: _Connection, data: bytes, request: Request) -> None:
        try:
            connection.writer.write(data)
            async with asyncio.timeout(self.timeout):
                await connection.writer.drain()
        except TimeoutError:
            raise WriteTimeout("timed out sending the request", request=request) from None
        except (OSError, ssl.SSLError) as err:
            raise WriteError(str(err) or type(err).__name__, request=request) from err

    async def _read_head(self, connection: _Connection, request: Request) -> Response:
        while True:  # 1xx answers (100 Continue, 103 Early Hints) come before the answer
            head = await _head_bytes(connection, self.timeout, request)
            status, reason, version, headers = _parse_head(head, request)
            if status >= 200:
                break
            if status == 101:
                raise RemoteProtocolError("the server switched protocols", request=request)
        framing, length = _framing(status, request.method, headers, request)
        closing = version != "HTTP/1.1" or any(
            token.strip().lower() == "close" for token in (headers.get("connection") or "").split(","))
        return Response(request, status, reason, version, headers, connection, framing, length,
                        reusable=not closing and framing != "close", client=self)

    def _give_back(self, connection: _Connection) -> None:
        connection.idle_since = time.monotonic()
        self._idle.setdefault(connection.origin.key, []).append(connection)

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.abort()


async def _discard(response: Response) -> None:
    """A redirect's body read (so its connection can be reused) when short; else the connection closed."""
    try:
        async with asyncio.timeout(1.0):
            async for _ in response.aiter_bytes():
                pass
    except (TransportError, TimeoutError):
        pass
    await response.aclose()


def _request_head(request: Request, target: _Target) -> bytes:
    """The request line and headers, checked as h11 checks them."""
    given = {name.lower() for name, _ in request.headers}
    lines = [f"{request.method} {target.target} HTTP/1.1".encode("ascii"), b"Host: " + target.host_header.encode()]
    fields = [(name, value) for name, value in DEFAULT_HEADERS if name.lower() not in given]
    fields += [(name, value) for name, value in request.headers if name.lower() not in ("host", "content-length")]
    if request.body or request.method in ("POST", "PUT", "PATCH"):
        fields.append(("Content-Length", str(len(request.body))))
    for name, value in fields:
        raw_name, raw_value = _encoded(name, request), _encoded(value, request)
        if not _TOKEN.fullmatch(raw_name):
            raise LocalProtocolError(f"illegal header name {name!r}", request=request)
        if not _FIELD_VALUE.fullmatch(raw_value):
            raise LocalProtocolError(f"illegal header value for {name}", request=request)
        lines.append(raw_name + b": " + raw_value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _encoded(text: str, request: Request) -> bytes:
    try:
        return text.encode("ascii")  # as httpx2 encodes a header given as text
    except UnicodeEncodeError:
        raise LocalProtocolError(f"a header holds a character that is not ASCII: {text[:40]!r}",
                                 request=request) from None


async def _head_bytes(connection: _Connection, read_timeout: float | None, request: Request) -> bytes:
    """The next answer's status line and headers, up to and without the blank line after them."""
    buffer = connection.buffer
    searched = 0
    while True:
        end = _HEAD_END.search(buffer, max(0, searched - 3))
        if end is not None:
            return connection.take(end.end())[: end.start()]
        if len(buffer) > MAX_HEAD:
            raise RemoteProtocolError("the answer's headers are too long", request=request)
        searched = len(buffer)
        if not await connection.fill(read_timeout, request):
            if not buffer:
                raise RemoteProtocolError("Server disconnected without sending a response.", request=request)
            raise RemoteProtocolError("the server closed the connection inside the answer's headers",
                                      request=request)


def _parse_head(head: bytes, request: Request) -> tuple[int, str, str, Headers]:
    lines = [line[:-1] if line.endswith(b"\r") else line for line in head.split(b"\n")]
    status = _STATUS_LINE.fullmatch(lines[0])
    if status is None:
        raise RemoteProtocolError(f"illegal status line: {lines[0][:80]!r}", request=request)
    folded: list[bytes] = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):  # obsolete line folding: part of the line before
            if not folded:
                raise RemoteProtocolError("a continuation line before any header", request=request)
            folded[-1] = folded[-1].rstrip(b" \t") + b" " + line.strip(b" \t")
        else:
            folded.append(line)
    headers: list[tuple[str, str]] = []
    for line in folded:
        match = _HEADER_LINE.fullmatch(line)
        if match is None or not _TOKEN.fullmatch(match.group(1)) or not _FIELD_VALUE.fullmatch(match.group(2)):
            raise RemoteProtocolError(f"illegal header line: {line[:80]!r}", request=request)
        name, value = match.group(1).decode("latin-1"), match.group(2).decode("latin-1")
        if name.lower() == "content-length" and any(  # the same length said twice: once, as h11 keeps it
                seen.lower() == "content-length" and said == value for seen, said in headers):
            continue
        headers.append((name, value))
    version = f"HTTP/{status.group(1).decode()}.{status.group(2).decode()}"
    reason = (status.group(4) or b"").decode("latin-1")
    return int(status.group(3)), reason, version, Headers(headers)


def _framing(status: int, method: str, headers: Headers, request: Request) -> tuple[str, int]:
    """How the body is delimited, by h11's rules for an answer: ("none" | "length" | "chunked" | "close", length)."""
    if method == "HEAD" or status in (204, 304) or status < 200:
        return "none", 0
    encodings = headers.get_list("transfer-encoding")
    if encodings:
        if [value.strip().lower() for value in ", ".join(encodings).split(",")] != ["chunked"]:
            raise RemoteProtocolError(f"unsupported Transfer-Encoding {', '.join(encodings)!r}", request=request)
        return "chunked", 0
    lengths = headers.get_list("content-length")
    if lengths:
        values = {value.strip() for value in ",".join(lengths).split(",")}
        if len(values) != 1 or not next(iter(values)).isdigit() or len(next(iter(values))) > 20:
            raise RemoteProtocolError(f"bad Content-Length {', '.join(lengths)!r}", request=request)
        length = int(next(iter(values)))
        return ("length", length) if length else ("none", 0)
    return "close", 0
