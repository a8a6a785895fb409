"""WikipediaTool: search and read Wikipedia pages in any language, through the MediaWiki API."""

from __future__ import annotations

import re
from typing import Any

from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient
from agentica_cli.toolkits._text import clamp, clip, numbered_results
from agentica_cli.tools.base import Tool

MAX_RESULTS_CAP = 20
_TAGS = re.compile(r"<[^>]+>")
_LANG = re.compile(r"^[a-z][a-z0-9-]{1,15}$")


class WikipediaTool(Tool):
    """Wikipedia search and page text."""

    def __init__(
        self,
        *,
        language: str = "en",
        max_results: int = 5,
        max_chars: int = 12_000,
        base_url: str = "https://{lang}.wikipedia.org/w/api.php",
        timeout: float = DEFAULT_TIMEOUT_S,
    ):
        super().__init__(name="wikipedia")
        self.language = language
        self.max_results = clamp(max_results, 5, MAX_RESULTS_CAP)
        self.max_chars = max(1000, int(max_chars))
        self.base_url = base_url  # "{lang}" is replaced by the language code
        self.timeout = timeout
        self.register(self.wikipedia_search, is_read_only=True, concurrency_safe=True)
        self.register(self.wikipedia_page, is_read_only=True, concurrency_safe=True)

    def _api(self, lang: str | None) -> HttpClient:
        lang = (lang or self.language).strip().lower()
        if not _LANG.match(lang):
            raise ValueError(f"{lang!r} is not a Wikipedia language code (e.g. en, zh, de).")
        return HttpClient(service="Wikipedia", base_url=self.base_url.replace("{lang}", lang), timeout=self.timeout)

    async def wikipedia_search(self, query: str, lang: str | None = None) -> str:
        """Search Wikipedia; returns page titles with a snippet each.

        Args:
            query: Search terms.
            lang: Language code, e.g. "en", "zh" (default: the tool's).
        """
        if not query.strip():
            raise ValueError("query is empty.")
        data = await self._api(lang).get_json(params={
            "action": "query", "list": "search", "srsearch": query, "srlimit": self.max_results,
            "format": "json", "formatversion": 2, "utf8": 1,
        })
        hits = (data.get("query") or {}).get("search") if isinstance(data, dict) else None
        if hits is None:
            raise ValueError(f"Wikipedia sent an unexpected response: {_api_error(data)}")
        if not hits:
            return f"No Wikipedia pages match {query!r}."
        items = [{"title": h.get("title"), "snippet": _TAGS.sub("", str(h.get("snippet") or "")),
                  "extra": f"{h['wordcount']} words" if h.get("wordcount") else ""} for h in hits]
        return numbered_results(items) + "\nRead one with wikipedia_page(title)."

    async def wikipedia_page(self, title: str, lang: str | None = None) -> str:
        """A Wikipedia page's plain text (redirects followed).

        Args:
            title: Exact page title (from wikipedia_search).
            lang: Language code (default: the tool's).
        """
        data = await self._api(lang).get_json(params={
            "action": "query", "prop": "extracts|info", "inprop": "url", "explaintext": 1, "redirects": 1,
            "titles": title, "format": "json", "formatversion": 2, "utf8": 1,
        })
        pages = (data.get("query") or {}).get("pages") if isinstance(data, dict) else None
        if not pages:
            raise ValueError(f"Wikipedia sent an unexpected response: {_api_error(data)}")
        page = pages[0]
        if page.get("missing") or page.get("invalid"):
            return f"No Wikipedia page titled {title!r}; search with wikipedia_search first."
        text = re.sub(r"\n{3,}", "\n\n", str(page.get("extract") or "")).strip()
        header = f"# {page.get('title', title)}\n{page.get('fullurl', '')}\n\n"
        return header + clip(text, self.max_chars, "the rest of the page was left out")


def _api_error(data: Any) -> str:
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return str(data["error"].get("info") or data["error"].get("code"))
    return "no 'query' block"
