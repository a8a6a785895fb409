"""JinaTool: Jina Reader (a page as Markdown) and Jina search; JINA_API_KEY optional for reading."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import quote, urlsplit

from agentica_cli.toolkits._http import HttpClient, api_key
from agentica_cli.toolkits._text import clamp, clip, numbered_results
from agentica_cli.tools.base import Tool

MAX_RESULTS_CAP = 10
DEFAULT_MAX_CHARS = 20_000


def check_public_url(url: str) -> None:
    """Refuse non-http(s) URLs and literal private addresses: the service is told to fetch it, so a
    self-hosted reader must not be pointed at this machine's network. Host names are the service's
    to resolve."""
    from agentica_cli.tools.web_access import FetchRefusedError

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefusedError(f"only http and https URLs can be read, not {url!r}.")
    host = parts.hostname
    if host == "localhost" or host.endswith(".localhost"):
        raise FetchRefusedError(f"refusing to read {url}: {host} is a private, loopback or link-local address.")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return
    from agentica_cli.tools.web_access import _is_public

    if not _is_public(ip):
        raise FetchRefusedError(f"refusing to read {url}: {host} is a private, loopback or link-local address.")


class JinaTool(Tool):
    """Jina Reader and search."""

    key_env = "JINA_API_KEY"
    key_optional = True

    def __init__(
        self,
        api_key: str | None = None,
        *,
        max_results: int = 5,
        max_chars: int = DEFAULT_MAX_CHARS,
        reader_base_url: str = "https://r.jina.ai",
        search_base_url: str = "https://s.jina.ai",
        timeout: float = 30.0,
        search: bool = True,
    ):
        super().__init__(name="jina")
        self.api_key = api_key
        self.max_results = clamp(max_results, 5, MAX_RESULTS_CAP)
        self.max_chars = max(1000, int(max_chars))
        self.reader = HttpClient(service="Jina Reader", base_url=reader_base_url, timeout=timeout,
                                 key_env=self.key_env)
        self.searcher = HttpClient(service="Jina search", base_url=search_base_url, timeout=timeout,
                                   key_env=self.key_env)
        self.register(self.jina_read, is_read_only=True, concurrency_safe=True)
        if search:
            self.register(self.jina_search, is_read_only=True, concurrency_safe=True)

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        key = api_key(self.api_key, self.key_env, service="Jina", required=False)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def jina_read(self, url: str) -> str:
        """Read a web page as clean Markdown through Jina Reader.

        Args:
            url: The http(s) page URL.
        """
        check_public_url(url)
        target = f"{self.reader.base_url}/{quote(url, safe=':/?&=%#@+,;~')}"  # the page URL goes in the path
        response = await self.reader.get(target, headers=self._headers("text/plain"))
        return clip(response.text.strip(), self.max_chars) or f"Jina Reader returned no text for {url}."

    async def jina_search(self, query: str) -> str:
        """Web search through Jina (needs JINA_API_KEY): titles, URLs, descriptions.

        Args:
            query: Search terms.
        """
        if not query.strip():
            raise ValueError("query is empty.")
        api_key(self.api_key, self.key_env, service="Jina search")
        headers = {**self._headers("application/json"), "X-Respond-With": "no-content"}
        data = await self.searcher.get_json("/", params={"q": query, "num": self.max_results}, headers=headers)
        return format_jina_search(data, self.max_results) or f"No results for {query!r}."


def format_jina_search(data: Any, limit: int) -> str:
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("Jina search sent an unexpected response (no 'data' list).")
    items = [{"title": r.get("title"), "url": r.get("url"), "snippet": r.get("description") or r.get("content")}
             for r in rows[:limit] if isinstance(r, dict)]
    return numbered_results(items)
