"""web_search through an injected provider and offline ddgs; fetch_url against 127.0.0.1 servers."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from builtin_support import call_tool

from builtin_tools import BuiltinFetchUrlTool, BuiltinWebSearchTool
from builtin_tools.web import AddressPolicy

# -- web_search ---------------------------------------------------------------------------


class RecordingProvider:
    """A provider object as a user would plug in a keyed search API."""

    def __init__(self, results: list[dict[str, Any]]):
        self.results = results
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, max_results: int) -> list[dict[str, Any]]:
        self.calls.append((query, max_results))
        return self.results[:max_results]


def test_web_search_formats_provider_results() -> None:
    provider = RecordingProvider([
        {"title": "Python", "url": "https://python.example/", "snippet": "The   language\nsite"},
        {"title": "PyPI", "href": "https://pypi.example/", "body": "Packages"},
        {"title": "Third", "url": "https://third.example/"},
    ])
    tool = BuiltinWebSearchTool(provider)
    call = call_tool(tool, "web_search", query="python", max_results=2)
    assert call.error is None
    assert call.result == (
        "1. Python\n   https://python.example/\n   The language site\n"
        "2. PyPI\n   https://pypi.example/\n   Packages"
    )
    assert provider.calls == [("python", 2)]
    call_tool(tool, "web_search", query="x", max_results=500)
    assert provider.calls[-1] == ("x", 20)
    assert call_tool(BuiltinWebSearchTool(RecordingProvider([])), "web_search", query="nothing").result == (
        "No results for 'nothing'."
    )
    assert tool.functions["web_search"].is_read_only and tool.functions["web_search"].concurrency_safe


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddgs_offline_gives_a_readable_error() -> None:
    # A proxy on a closed loopback port: ddgs cannot reach anything, whatever the machine's network.
    tool = BuiltinWebSearchTool(proxy=f"http://127.0.0.1:{_closed_port()}", timeout=5)
    start = time.monotonic()
    call = call_tool(tool, "web_search", query="agentica")
    assert time.monotonic() - start < 15
    assert call.error is not None
    assert call.error.startswith(
        "Error: WebSearchError: web search failed: could not reach the search engines (no network connection?)."
    )


# -- fetch_url ----------------------------------------------------------------------------

PAGE = """<html><head><title>Test  Page</title><style>body{color:red}</style>
<script>var secret = 'do not show';</script></head>
<body><h1>Hello</h1><p>Some <b>bold</b> text and a <a href="/other">link</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""


class Handler(BaseHTTPRequestHandler):
    other_origin = ""
    seen: ClassVar[list[tuple[str, str, str]]] = []  # (server address, path, Host header) of every request

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        Handler.seen.append((self.server.server_address[0], self.path, self.headers.get("Host", "")))
        if self.path == "/page.html":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/plain.txt":
            self._send(200, "plain café".encode("latin-1"), "text/plain; charset=latin-1")
        elif self.path == "/redirect":
            self._send(302, b"", "text/plain", {"Location": "/page.html"})
        elif self.path == "/redirect-other":
            self._send(302, b"", "text/plain", {"Location": f"{self.other_origin}/page.html"})
        elif self.path == "/long.txt":
            self._send(200, b"abcdefghij" * 5000, "text/plain")
        elif self.path == "/huge.txt":
            self._send(200, b"z" * 3_000_000, "text/plain")
        elif self.path == "/image.png":
            self._send(200, b"\x89PNG\x00\x00", "image/png")
        elif self.path == "/slow":
            time.sleep(3)
            self._send(200, b"late", "text/plain")
        else:
            self._send(404, b"missing", "text/plain")


def _serve(host: str, port: int = 0) -> Iterator[str]:
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def origins() -> Iterator[tuple[str, str]]:
    first = _serve("127.0.0.1")
    second = _serve("127.0.0.2")
    a, b = next(first), next(second)
    Handler.other_origin = b
    yield a, b
    for gen in (first, second):
        with pytest.raises(StopIteration):
            next(gen)


def fetch(tool: BuiltinFetchUrlTool, url: str, **kwargs: Any):  # type: ignore[no-untyped-def]
    return call_tool(tool, "fetch_url", url=url, **kwargs)


def test_fetch_refuses_loopback_by_default(origins: tuple[str, str]) -> None:
    call = fetch(BuiltinFetchUrlTool(), f"{origins[0]}/page.html")
    assert call.error is not None
    assert call.error.startswith("Error: FetchRefusedError: refusing to fetch http://127.0.0.1:")
    assert "resolves to 127.0.0.1, a private, loopback or link-local address" in call.error
    localhost = fetch(BuiltinFetchUrlTool(), origins[0].replace("127.0.0.1", "localhost") + "/page.html")
    assert localhost.error is not None and "FetchRefusedError" in localhost.error


def test_fetch_converts_html_to_markdown(origins: tuple[str, str]) -> None:
    call = fetch(BuiltinFetchUrlTool(allow_private=True), f"{origins[0]}/page.html")
    assert call.error is None, call.error
    assert call.result.startswith(f"URL: {origins[0]}/page.html\nTitle: Test Page\n\n")
    body = call.result.split("\n\n", 1)[1]
    assert "# Hello" in body
    assert "Some **bold** text and a [link](/other)." in body
    assert "* one\n* two" in body or "- one\n- two" in body
    assert "do not show" not in body and "color:red" not in body


def test_fetch_plain_text_with_charset_and_redirect(origins: tuple[str, str]) -> None:
    tool = BuiltinFetchUrlTool(allow_private=True)
    assert fetch(tool, f"{origins[0]}/plain.txt").result == f"URL: {origins[0]}/plain.txt\n\nplain café"
    followed = fetch(tool, f"{origins[0]}/redirect")
    assert followed.result.startswith(f"URL: {origins[0]}/page.html\nTitle: Test Page")


def test_redirect_to_a_disallowed_address_is_refused(origins: tuple[str, str]) -> None:
    only_first = BuiltinFetchUrlTool(allow_private=["127.0.0.1/32"])
    assert fetch(only_first, f"{origins[0]}/page.html").error is None
    call = fetch(only_first, f"{origins[0]}/redirect-other")
    assert call.error is not None
    assert f"refusing to fetch {origins[1]}/page.html: 127.0.0.2 resolves to 127.0.0.2" in call.error
    # with both allowed the same redirect is followed: the refusal above came from the check
    both = fetch(BuiltinFetchUrlTool(allow_private=True), f"{origins[0]}/redirect-other")
    assert both.error is None and both.result.startswith(f"URL: {origins[1]}/page.html")


def test_fetch_limits_and_errors(origins: tuple[str, str]) -> None:
    tool = BuiltinFetchUrlTool(allow_private=True)
    long = fetch(tool, f"{origins[0]}/long.txt", max_chars=1000)
    assert long.result.endswith(
        "\n\n[truncated: showing 1,000 of 50,000 characters; call again with a larger max_chars "
        "(max 100,000) to see more]"
    )
    capped = fetch(BuiltinFetchUrlTool(allow_private=True, max_bytes=100_000), f"{origins[0]}/huge.txt",
                   max_chars=100_000)
    # exactly max_bytes were read, and the model is told the page goes on
    assert capped.result == (f"URL: {origins[0]}/huge.txt\n\n" + "z" * 100_000 + "\n\n[the download stopped at "
                             "the 100,000-byte limit; the rest of the page was not read]")
    both = fetch(BuiltinFetchUrlTool(allow_private=True, max_bytes=200_000), f"{origins[0]}/huge.txt",
                 max_chars=500_000)
    assert both.result.endswith("z" * 100_000 + "\n\n[truncated: showing 100,000 of 200,000 characters; 100,000 is "
                                "the most fetch_url returns]\n\n[the download stopped at the 200,000-byte limit; "
                                "the rest of the page was not read]")
    whole = fetch(BuiltinFetchUrlTool(allow_private=True, max_bytes=50_000), f"{origins[0]}/long.txt",
                  max_chars=100_000)
    assert whole.result.endswith("abcdefghij")  # exactly max_bytes long: nothing was cut, no note
    assert "HTTP 404" in fetch(tool, f"{origins[0]}/missing").error
    assert "is image/png, not a text page" in fetch(tool, f"{origins[0]}/image.png").error
    for url in ("file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)"):
        refused = fetch(tool, url)
        assert refused.error is not None and "only http and https URLs can be fetched" in refused.error
    slow_tool = BuiltinFetchUrlTool(allow_private=True, timeout=0.5)
    start = time.monotonic()
    slow = fetch(slow_tool, f"{origins[0]}/slow")
    assert time.monotonic() - start < 2
    assert "took longer than" in slow.error or "ReadTimeout" in slow.error


class RebindingResolver:
    """A DNS answer that changes: the first lookup gets the first address, later ones the last."""

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.asked: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append((host, port))
        return [self.answers[min(len(self.asked), len(self.answers)) - 1]]


@pytest.fixture
def same_port_origins() -> Iterator[int]:
    """Servers on 127.0.0.1 and 127.0.0.2 with the same port: only the address tells them apart."""
    first = _serve("127.0.0.1")
    port = int(next(first).rsplit(":", 1)[1])
    second = _serve("127.0.0.2", port)
    next(second)
    Handler.seen = []
    yield port
    for gen in (first, second):
        with pytest.raises(StopIteration):
            next(gen)


def test_fetch_connects_to_the_vetted_address_so_dns_rebinding_cannot_reach_a_refused_one(
    same_port_origins: int,
) -> None:
    port = same_port_origins
    resolver = RebindingResolver("127.0.0.1", "127.0.0.2")
    tool = BuiltinFetchUrlTool(allow_private=["127.0.0.1/32"], resolver=resolver)
    # "rebind.test" exists only in this resolver: the fetch works only if the tool connects to
    # the address it vetted instead of letting the HTTP client look the name up again.
    call = fetch(tool, f"http://rebind.test:{port}/page.html")
    assert call.error is None, call.error
    assert call.result.startswith(f"URL: http://rebind.test:{port}/page.html\nTitle: Test Page\n")
    assert resolver.asked == [("rebind.test", port)]
    assert Handler.seen == [("127.0.0.1", "/page.html", f"rebind.test:{port}")]
    # Each redirect hop is resolved and vetted again: the second answer is refused, unfetched.
    resolver = RebindingResolver("127.0.0.1", "127.0.0.2")
    tool = BuiltinFetchUrlTool(allow_private=["127.0.0.1/32"], resolver=resolver)
    Handler.seen = []
    call = fetch(tool, f"http://rebind.test:{port}/redirect")
    assert call.error == (f"Error: FetchRefusedError: refusing to fetch http://rebind.test:{port}/page.html: "
                          "rebind.test resolves to 127.0.0.2, a private, loopback or link-local address (the "
                          "tool only fetches public addresses).")
    assert Handler.seen == [("127.0.0.1", "/redirect", f"rebind.test:{port}")]
    assert len(resolver.asked) == 2


def test_an_address_that_refuses_the_connection_falls_through_to_the_next(same_port_origins: int) -> None:
    class BothAnswers:
        async def __call__(self, host: str, port: int) -> list[str]:
            return ["127.0.0.3", "127.0.0.1"]  # nothing listens on 127.0.0.3

    tool = BuiltinFetchUrlTool(allow_private=["127.0.0.0/8"], resolver=BothAnswers())
    call = fetch(tool, f"http://two.test:{same_port_origins}/plain.txt")
    assert call.error is None, call.error
    assert Handler.seen == [("127.0.0.1", "/plain.txt", f"two.test:{same_port_origins}")]

    class NobodyListens:
        async def __call__(self, host: str, port: int) -> list[str]:
            return ["127.0.0.3", "127.0.0.4"]

    tool = BuiltinFetchUrlTool(allow_private=["127.0.0.0/8"], resolver=NobodyListens())
    call = fetch(tool, f"http://none.test:{same_port_origins}/plain.txt")
    assert call.error is not None
    assert call.error.startswith(f"Error: FetchError: cannot connect to none.test:{same_port_origins} "
                                 "(tried 127.0.0.3, 127.0.0.4): ")


def test_https_to_the_vetted_address_still_sends_the_host_name_as_sni() -> None:
    """TLS certificates are checked against the name, so the ClientHello must carry it."""
    hello = bytearray()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        def accept_one() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(5)
                hello.extend(conn.recv(4096))

        thread = threading.Thread(target=accept_one, daemon=True)
        thread.start()
        tool = BuiltinFetchUrlTool(allow_private=["127.0.0.1/32"], resolver=RebindingResolver("127.0.0.1"))
        call = fetch(tool, f"https://sni-name.test:{port}/")
        thread.join(5)
    assert call.error is not None  # the server hung up after reading the ClientHello
    assert hello[:1] == b"\x16"  # a TLS handshake record
    assert b"sni-name.test" in hello


@pytest.mark.parametrize("address", [
    "10.1.2.3", "172.16.0.1", "192.168.1.1", "127.0.0.1", "169.254.169.254", "0.0.0.0", "::1",
    "fe80::1", "fc00::1", "::ffff:192.168.0.1", "100.64.0.1",
])
def test_private_addresses_are_not_allowed(address: str) -> None:
    assert not AddressPolicy().allows(ipaddress.ip_address(address))


def test_public_addresses_are_allowed() -> None:
    for address in ("93.184.216.34", "2606:4700::1111", "8.8.8.8"):
        assert AddressPolicy().allows(ipaddress.ip_address(address))


def test_fetch_is_async_and_read_only() -> None:
    function = BuiltinFetchUrlTool().functions["fetch_url"]
    assert function.is_async and function.is_read_only and function.concurrency_safe
    assert asyncio.iscoroutinefunction(BuiltinFetchUrlTool().fetch_url)
