"""SearchExaTool: Exa neural search, with page text, through its HTTP API (EXA_API_KEY)."""

from __future__ import annotations

from typing import Any

from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient, api_key
from agentica_cli.toolkits._text import clamp, clip, squash
from agentica_cli.tools.base import Tool

MAX_RESULTS_CAP = 25
MAX_URLS = 10


class SearchExaTool(Tool):
    """Exa search (meaning-based) and page contents."""

    key_env = "EXA_API_KEY"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        max_results: int = 5,
        text_chars: int = 1000,
        base_url: str = "https://api.exa.ai",
        search_type: str = "auto",
        timeout: float = DEFAULT_TIMEOUT_S,
    ):
        super().__init__(name="search_exa")
        self.api_key = api_key
        self.max_results = clamp(max_results, 5, MAX_RESULTS_CAP)
        self.text_chars = max(0, int(text_chars))  # page text per search result (0: none)
        self.search_type = search_type
        self.http = HttpClient(service="Exa", base_url=base_url, timeout=timeout, key_env=self.key_env)
        self.register(self.exa_search, is_read_only=True, concurrency_safe=True)
        self.register(self.exa_contents, is_read_only=True, concurrency_safe=True)

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": api_key(self.api_key, self.key_env, service="Exa") or ""}

    async def exa_search(self, query: str) -> str:
        """Exa search: finds pages by meaning; returns titles, URLs, dates and text excerpts.

        Args:
            query: What to find, in plain words.
        """
        if not query.strip():
            raise ValueError("query is empty.")
        body: dict[str, Any] = {"query": query, "numResults": self.max_results, "type": self.search_type}
        if self.text_chars:
            body["contents"] = {"text": {"maxCharacters": self.text_chars}}
        data = await self.http.post_json("/search", json_body=body, headers=self._headers())
        return format_exa(data, self.text_chars) or f"No results for {query!r}."

    async def exa_contents(self, urls: list[str]) -> str:
        """Page text of up to 10 URLs, through Exa.

        Args:
            urls: Page URLs (for example from exa_search).
        """
        if not urls:
            raise ValueError("give at least one URL.")
        chars = max(self.text_chars, 4000)
        body = {"urls": list(urls)[:MAX_URLS], "text": {"maxCharacters": chars}}
        data = await self.http.post_json("/contents", json_body=body, headers=self._headers())
        return format_exa(data, chars) or "Exa returned no contents for these URLs."


def format_exa(data: Any, text_chars: int) -> str:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError("Exa sent an unexpected response (no 'results' list).")
    blocks = []
    for number, row in enumerate(data["results"], start=1):
        if not isinstance(row, dict):
            continue
        meta = ", ".join(squash(row.get(k), 40)[:10] if k == "publishedDate" else squash(row.get(k), 60)
                         for k in ("publishedDate", "author") if row.get(k))
        block = f"{number}. {squash(row.get('title'), 200) or '(no title)'}" + (f" ({meta})" if meta else "")
        block += f"\n   {row.get('url', '')}"
        text = (row.get("text") or row.get("summary") or "").strip()
        if text and text_chars:
            block += "\n" + clip(text, text_chars)
        blocks.append(block)
    return "\n\n".join(blocks)
