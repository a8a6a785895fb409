"""DuckDuckGoTool: key-less web and news search through the `ddgs` library (several engines)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from agentica_cli.toolkits._http import ToolkitError, require_module
from agentica_cli.toolkits._text import clamp, numbered_results
from agentica_cli.tools.base import Tool

MAX_RESULTS_CAP = 30


class DuckDuckGoTool(Tool):
    """Key-less web and news search (ddgs: DuckDuckGo and other engines)."""

    def __init__(
        self,
        max_results: int = 10,
        *,
        region: str = "wt-wt",
        safesearch: Literal["on", "moderate", "off"] = "moderate",
        backend: str = "auto",
        proxy: str | None = None,
        timeout: float = 10.0,
        news: bool = True,
    ):
        super().__init__(name="duckduckgo")
        self.max_results = clamp(max_results, 10, MAX_RESULTS_CAP)
        self.region, self.safesearch, self.backend = region, safesearch, backend
        self.proxy, self.timeout = proxy, timeout
        self.register(self.duckduckgo_search, is_read_only=True, concurrency_safe=True)
        if news:
            self.register(self.duckduckgo_news, is_read_only=True, concurrency_safe=True)

    async def duckduckgo_search(self, query: str, timelimit: Literal["d", "w", "m", "y"] | None = None) -> str:
        """Web search without an API key: titles, URLs and snippets.

        Args:
            query: Search terms.
            timelimit: Only results from the last day, week, month or year.
        """
        rows = await asyncio.to_thread(self._run, "text", query, timelimit)
        return shape_results(rows, "text", self.max_results) or f"No results for {query!r}."

    async def duckduckgo_news(self, query: str, timelimit: Literal["d", "w", "m"] | None = None) -> str:
        """Recent news articles: title, source, date, URL, summary.

        Args:
            query: Search terms.
            timelimit: Only news from the last day, week or month.
        """
        rows = await asyncio.to_thread(self._run, "news", query, timelimit)
        return shape_results(rows, "news", self.max_results) or f"No news for {query!r}."

    def _run(self, kind: str, query: str, timelimit: str | None) -> list[dict[str, Any]]:
        if not query.strip():
            raise ValueError("query is empty.")
        ddgs = require_module("ddgs", extra="web", toolkit="DuckDuckGoTool")
        client = ddgs.DDGS(timeout=self.timeout, proxy=self.proxy)
        method = client.news if kind == "news" else client.text
        try:
            return method(query, region=self.region, safesearch=self.safesearch, timelimit=timelimit,
                          max_results=self.max_results, backend=self.backend) or []
        except Exception as err:
            text = str(err)
            if "No results" in text:
                return []
            if any(word in text for word in ("ConnectError", "DNS", "Connection refused", "timed out", "Timeout")):
                raise ToolkitError("search failed: could not reach the search engines (no network connection?). "
                                   f"Details: {text[:200]}") from None
            raise ToolkitError(f"search failed: the search engines returned an error. Details: {text[:300]}") \
                from None


def shape_results(rows: list[dict[str, Any]], kind: str, limit: int) -> str:
    """ddgs rows (text: title/href/body; news: date/title/body/url/source) as numbered lines."""
    items = []
    for row in rows[:limit]:
        if not isinstance(row, dict):
            continue
        extra = ", ".join(str(row[k])[:40] for k in ("source", "date") if kind == "news" and row.get(k))
        items.append({"title": row.get("title"), "url": row.get("href") or row.get("url"),
                      "snippet": row.get("body"), "extra": extra})
    return numbered_results(items)
