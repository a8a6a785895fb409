"""BuiltinWebSearchTool (web_search) and BuiltinFetchUrlTool (fetch_url).

Heavy libraries (ddgs, httpx, markdownify) are imported on first use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urljoin, urlsplit

from agentica_cli.tools.base import Tool
from agentica_cli.tools.web_access import (  # shared with the toolkits; importable from here as before
    AddressPolicy,
    FetchError,
    FetchRefusedError,  # noqa: F401
    NoAddressConnected,
    Resolver,
    _is_public,  # noqa: F401
    _title_of,
    html_to_markdown,
    send_pinned,
    system_resolver,  # noqa: F401
)

if TYPE_CHECKING:
    import httpx

MAX_SEARCH_RESULTS = 20
DEFAULT_MAX_CHARS = 20_000
MAX_CHARS_CAP = 100_000
MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024
FETCH_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "application/javascript",
               "application/x-yaml", "application/yaml", "application/toml")


class WebSearchError(RuntimeError):
    """The search provider failed; the message says why in plain words."""


class SearchProvider(Protocol):
    def search(self, query: str, max_results: int) -> list[dict[str, Any]]:
        """Results as dicts with title, url (or href) and snippet (or body)."""
        ...


class DdgsProvider:
    """Key-less search through the `ddgs` library (several engines, no account needed)."""

    name = "ddgs"

    def __init__(self, timeout: float = 10.0, proxy: str | None = None, backend: str = "auto"):
        self.timeout = timeout
        self.proxy = proxy
        self.backend = backend

    def search(self, query: str, max_results: int) -> list[dict[str, Any]]:
        try:
            from ddgs import DDGS
        except ImportError as err:
            raise WebSearchError("the 'ddgs' package is not installed (pip install ddgs).") from err
        try:
            # ddgs annotates timeout as int, but hands it to primp's Client, which takes float seconds
            return DDGS(timeout=self.timeout, proxy=self.proxy).text(  # type: ignore[arg-type]
                query, max_results=max_results, backend=self.backend
            )
        except Exception as err:
            text = str(err)
            if any(word in text for word in ("ConnectError", "DNS", "Connection refused", "timed out", "Timeout")):
                reason = "could not reach the search engines (no network connection?)"
            elif "No results" in text:
                return []
            else:
                reason = "the search engines returned an error"
            raise WebSearchError(f"web search failed: {reason}. Details: {text[:300]}") from None


class BuiltinWebSearchTool(Tool):
    def __init__(self, provider: SearchProvider | None = None, *, timeout: float = 10.0, proxy: str | None = None):
        super().__init__(name="web_search")
        self.provider: SearchProvider = provider or DdgsProvider(timeout=timeout, proxy=proxy)
        self.register(self.web_search, is_read_only=True, concurrency_safe=True)

    async def web_search(self, query: str, max_results: int = 5) -> str:
        """Search the web; returns titles, URLs and snippets. Use fetch_url to read a result.

        Args:
            query: Search terms.
            max_results: Number of results (default 5, max 20).
        """
        if not query.strip():
            raise WebSearchError("query is empty.")
        count = max(1, min(int(max_results), MAX_SEARCH_RESULTS))
        results = await asyncio.to_thread(self.provider.search, query, count)
        if not results:
            return f"No results for {query!r}."
        lines = []
        for number, item in enumerate(results[:count], start=1):
            title = str(item.get("title") or "(no title)").strip()
            url = str(item.get("url") or item.get("href") or item.get("link") or "").strip()
            snippet = " ".join(str(item.get("snippet") or item.get("body") or "").split())
            lines.append(f"{number}. {title}\n   {url}" + (f"\n   {snippet[:300]}" if snippet else ""))
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------
# fetch_url
# ----------------------------------------------------------------------------------------

class BuiltinFetchUrlTool(Tool):
    def __init__(
        self,
        *,
        allow_private: bool | Iterable[str] = False,
        timeout: float = FETCH_TIMEOUT_S,
        max_bytes: int = MAX_DOWNLOAD_BYTES,
        user_agent: str = "agentica-fetch/0.1",
        resolver: Resolver | None = None,
    ):
        super().__init__(name="fetch_url")
        self.policy = AddressPolicy(allow_private, resolver=resolver)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.register(self.fetch_url, is_read_only=True, concurrency_safe=True)

    async def fetch_url(self, url: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """Fetch a public http(s) page and return it as Markdown (HTML converted; text as is).

        Output is cut at max_chars (a note says how much more there is).

        Args:
            url: The http or https URL.
            max_chars: Max characters returned (default 20000, max 100000).
        """
        limit = max(1000, min(int(max_chars), MAX_CHARS_CAP))
        try:
            final_url, content_type, body, cut = await asyncio.wait_for(self._download(url), self.timeout)
        except asyncio.TimeoutError:
            raise FetchError(f"fetching {url} took longer than {self.timeout:.0f} s.") from None
        charset = "utf-8"
        for param in content_type.split(";")[1:]:
            key, _, value = param.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            text = body.decode(charset, errors="replace")
        except LookupError:
            text = body.decode("utf-8", errors="replace")
        mime = content_type.split(";")[0].strip().lower()
        title = ""
        if "html" in mime or (not mime and "<html" in text[:1000].lower()):
            title = _title_of(text)
            text = html_to_markdown(text)
        header = f"URL: {final_url}\n" + (f"Title: {title}\n" if title else "") + "\n"
        notes = []
        if len(text) > limit:
            more = (f"call again with a larger max_chars (max {MAX_CHARS_CAP:,}) to see more" if limit < MAX_CHARS_CAP
                    else f"{MAX_CHARS_CAP:,} is the most fetch_url returns")
            notes.append(f"truncated: showing {limit:,} of {len(text):,} characters; {more}")
            text = text[:limit]
        if cut:
            notes.append(f"the download stopped at the {self.max_bytes:,}-byte limit; the rest of the page "
                         "was not read")
        return header + text + "".join(f"\n\n[{note}]" for note in notes)

    async def _download(self, url: str) -> tuple[str, str, bytes, bool]:
        """(final URL, content type, body, whether the body was cut at max_bytes)."""
        import httpx

        headers = {"User-Agent": self.user_agent, "Accept": "text/html,text/plain,*/*;q=0.5"}
        # No kept-alive connections: every request opens its own to the address just vetted,
        # so a connection made for one host name is never reused for another.
        async with httpx.AsyncClient(follow_redirects=False, timeout=self.timeout, headers=headers,
                                     trust_env=False, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            current = url
            for _ in range(MAX_REDIRECTS + 1):
                # Checked before every request, so a redirect cannot lead to a private address.
                addresses = await self.policy.vetted_addresses(current)
                response = await self._send_to(client, current, addresses)
                try:
                    if response.is_redirect:
                        current = urljoin(current, response.headers.get("location", ""))
                        continue
                    if response.status_code >= 400:
                        raise FetchError(f"{current} answered HTTP {response.status_code} {response.reason_phrase}.")
                    content_type = response.headers.get("content-type", "")
                    mime = content_type.split(";")[0].strip().lower()
                    if mime and not mime.startswith(_TEXT_TYPES) and not mime.endswith(("+xml", "+json")):
                        raise FetchError(f"{current} is {mime}, not a text page; fetch_url only reads text.")
                    body = bytearray()
                    cut = False
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > self.max_bytes:
                            del body[self.max_bytes:]
                            cut = True
                            break
                    return current, content_type, bytes(body), cut
                finally:
                    await response.aclose()
            raise FetchError(f"too many redirects (more than {MAX_REDIRECTS}) starting from {url}.")

    @staticmethod
    async def _send_to(client: httpx.AsyncClient, url: str, addresses: list[str]) -> httpx.Response:
        try:
            return await send_pinned(client, "GET", url, addresses)
        except NoAddressConnected as err:
            parts = urlsplit(url)  # named without any user:password@ the URL may carry
            where = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
            raise FetchError(err.describe(where)) from None
