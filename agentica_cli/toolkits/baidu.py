"""BaiduSearchTool: Baidu web search (Chinese results), parsed from the results page.

Baidu has no public search API; the HTML results page is parsed with BeautifulSoup (installed
with markdownify), trying several selectors because Baidu's markup changes often.
"""

from __future__ import annotations

import json
from typing import Any

from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient, ToolkitError
from agentica_cli.toolkits._text import clamp, numbered_results, squash
from agentica_cli.tools.base import Tool

MAX_RESULTS_CAP = 20
# Baidu answers a plain client with its bot check; a browser-like agent that still says who it is.
BAIDU_USER_AGENT = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 "
                    "Safari/537.36 agentica-toolkits/0.1")
RESULT_SELECTORS = ("div.c-container[tpl]", "div.result", "div.c-container", "div[mu]", "div[srcid]")
SNIPPET_SELECTORS = ('[class*="content-right"]', ".c-abstract", '[class*="abstract"]', '[class*="summary"]',
                     ".c-span-last", '[data-module="abstract"]', "span.content-right_8Zs40")
CAPTCHA_MARKS = ("百度安全验证", "wappass.baidu.com", "captcha")


class BaiduSearchTool(Tool):
    """Baidu web search."""

    def __init__(self, max_results: int = 5, *, base_url: str = "https://www.baidu.com/s",
                 timeout: float = DEFAULT_TIMEOUT_S, user_agent: str = BAIDU_USER_AGENT):
        super().__init__(name="baidu_search")
        self.max_results = clamp(max_results, 5, MAX_RESULTS_CAP)
        self.http = HttpClient(service="Baidu", base_url=base_url, timeout=timeout, user_agent=user_agent,
                               headers={"Accept": "text/html", "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"})
        self.register(self.baidu_search, is_read_only=True, concurrency_safe=True)

    async def baidu_search(self, query: str) -> str:
        """Search Baidu (best for Chinese-language results): titles, URLs and snippets.

        Args:
            query: Search terms.
        """
        if not query.strip():
            raise ValueError("query is empty.")
        page = await self.http.get(params={"wd": query, "rn": max(10, self.max_results), "ie": "utf-8"})
        results = parse_results(page.text, page.url)
        if not results:
            return f"No results for {query!r}."
        return numbered_results(results[: self.max_results])


def parse_results(html: str, page_url: str = "") -> list[dict[str, Any]]:
    """Results from a Baidu results page; ToolkitError for a bot-check page."""
    from bs4 import BeautifulSoup

    if any(mark in html[:20_000] for mark in CAPTCHA_MARKS) or "wappass" in page_url:
        raise ToolkitError("Baidu asked for a captcha (bot check) instead of results; try again later or use "
                           "another search toolkit.")
    soup = BeautifulSoup(html, "html.parser")
    blocks: list[Any] = []
    for selector in RESULT_SELECTORS:
        blocks = [b for b in soup.select(selector) if b.select_one("h3")]
        if blocks:
            break
    results, seen = [], set()
    for block in blocks:
        title_tag = block.select_one("h3 a") or block.select_one("h3")
        title = squash(title_tag.get_text(" ") if title_tag else "")
        tools = _data_tools(block)
        title = title or squash(tools.get("title"))
        url = _result_url(block, title_tag, tools)
        if not title or not url or url in seen:
            continue
        seen.add(url)
        snippet = ""
        for selector in SNIPPET_SELECTORS:
            node = block.select_one(selector)
            if node and squash(node.get_text(" ")):
                snippet = squash(node.get_text(" "))
                break
        if not snippet:  # last resort: the block's text without its title
            snippet = squash(block.get_text(" ")).replace(title, "", 1)
        results.append({"title": title, "url": url, "snippet": snippet})
    return results


def _data_tools(block: Any) -> dict[str, Any]:
    raw = block.get("data-tools") or ""
    node = block.select_one("[data-tools]") if not raw else None
    raw = raw or (node.get("data-tools") if node else "") or ""
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _result_url(block: Any, title_tag: Any, tools: dict[str, Any]) -> str:
    # `mu` holds the real target; the title link is usually a baidu.com/link?url= redirect.
    for candidate in (block.get("mu"), title_tag.get("href") if title_tag is not None and title_tag.name == "a"
                      else None, tools.get("url")):
        if isinstance(candidate, str) and candidate.startswith(("http://", "https://")):
            return candidate
    return ""
