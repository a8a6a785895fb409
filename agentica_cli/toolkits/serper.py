"""SearchSerperTool: Google results through the Serper JSON API (SERPER_API_KEY)."""

from __future__ import annotations

from typing import Any, Literal

from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient, api_key
from agentica_cli.toolkits._text import clamp, numbered_results, squash
from agentica_cli.tools.base import Tool

MAX_RESULTS_CAP = 20


class SearchSerperTool(Tool):
    """Google web and news search via Serper."""

    key_env = "SERPER_API_KEY"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        max_results: int = 10,
        base_url: str = "https://google.serper.dev",
        gl: str | None = None,
        hl: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ):
        super().__init__(name="search_serper")
        self.api_key = api_key
        self.max_results = clamp(max_results, 10, MAX_RESULTS_CAP)
        self.gl, self.hl = gl, hl  # country and language, e.g. "cn", "zh-cn"
        self.http = HttpClient(service="Serper", base_url=base_url, timeout=timeout, key_env=self.key_env)
        self.register(self.serper_search, is_read_only=True, concurrency_safe=True)

    async def serper_search(self, query: str, kind: Literal["search", "news"] = "search") -> str:
        """Google search via Serper: titles, URLs and snippets.

        Args:
            query: Search terms.
            kind: "search" (web pages) or "news".
        """
        if not query.strip():
            raise ValueError("query is empty.")
        key = api_key(self.api_key, self.key_env, service="Serper")
        body = {"q": query, "num": self.max_results, "gl": self.gl, "hl": self.hl}
        data = await self.http.post_json(
            "/" + kind, json_body={k: v for k, v in body.items() if v is not None}, headers={"X-API-KEY": key or ""}
        )
        return format_serper(data, query, kind, self.max_results)


def format_serper(data: Any, query: str, kind: str, limit: int) -> str:
    if not isinstance(data, dict):
        raise ValueError("Serper sent an unexpected response (not a JSON object).")
    lines: list[str] = []
    box = data.get("answerBox") or {}
    if isinstance(box, dict) and (box.get("answer") or box.get("snippet")):
        lines.append("Answer: " + squash(box.get("answer") or box.get("snippet"), 400))
    graph = data.get("knowledgeGraph") or {}
    if isinstance(graph, dict) and graph.get("title"):
        about = squash(graph.get("description"), 300)
        lines.append(f"About {squash(graph['title'], 100)}" + (f": {about}" if about else ""))
    rows = data.get("news" if kind == "news" else "organic") or []
    items = []
    for row in rows[:limit]:
        if not isinstance(row, dict):
            continue
        extra = ", ".join(squash(row.get(k), 60) for k in ("source", "date") if row.get(k))
        items.append({"title": row.get("title"), "url": row.get("link"), "snippet": row.get("snippet"),
                      "extra": extra})
    if not items and not lines:
        return f"No results for {query!r}."
    return "\n".join([*lines, numbered_results(items)]).strip()
