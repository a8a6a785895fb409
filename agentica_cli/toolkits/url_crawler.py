"""UrlCrawlerTool: a page as clean Markdown, or a small same-site crawl (depth and page limits,
robots.txt respected). Every request goes through the fetch_url SSRF rules: public addresses
only unless `allow_private` says otherwise, checked again on each redirect."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from agentica_cli.toolkits._extract import extract
from agentica_cli.toolkits._http import DEFAULT_TIMEOUT_S, HttpClient, ToolkitError, ToolkitHttpError, url_guard
from agentica_cli.toolkits._text import clip
from agentica_cli.tools.base import Tool

ROBOTS_AGENT = "agentica"
MAX_DEPTH_CAP = 3
MAX_PAGES_CAP = 50
_TEXT_MIMES = ("text/plain", "text/markdown", "application/json", "text/csv")


class UrlCrawlerTool(Tool):
    """Read web pages as Markdown (main content only); crawl a site a few links deep."""

    def __init__(
        self,
        *,
        max_pages: int = 10,
        max_depth: int = 2,
        max_chars: int = 20_000,
        respect_robots: bool = True,
        allow_private: bool | list[str] | tuple[str, ...] = False,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = 5 * 1024 * 1024,
        concurrency: int = 4,
    ):
        super().__init__(name="url_crawler")
        self.max_pages = max(1, min(int(max_pages), MAX_PAGES_CAP))
        self.max_depth = max(0, min(int(max_depth), MAX_DEPTH_CAP))
        self.max_chars = max(1000, int(max_chars))  # of the whole answer
        self.respect_robots = respect_robots
        self.concurrency = max(1, int(concurrency))
        self.http = HttpClient(service="the web site", timeout=timeout, max_bytes=max_bytes,
                               guard=url_guard(allow_private), retries=1)
        self._robots: dict[str, RobotFileParser | None] = {}
        self.register(self.crawl_url, is_read_only=True, concurrency_safe=True)

    async def crawl_url(self, url: str, depth: int = 0) -> str:
        """Read a web page as Markdown (main content only); depth > 0 also reads same-site linked pages.

        Args:
            url: http(s) URL.
            depth: Link levels to follow on the same site (0: this page only).
        """
        depth = max(0, min(int(depth), self.max_depth))
        site = _origin(url)
        if not site:
            raise ValueError(f"{url!r} is not an http(s) URL.")
        pages: list[str] = []
        seen = {url}
        level = [url]
        semaphore = asyncio.Semaphore(self.concurrency)

        async def read(page_url: str) -> tuple[str, str, list[str]]:
            async with semaphore:
                return await self._read(page_url)

        unread = 0
        for current_depth in range(depth + 1):
            batch = level[: self.max_pages - len(pages)]
            unread = len(level) - len(batch)
            results = await asyncio.gather(*(read(u) for u in batch), return_exceptions=True)
            next_level: list[str] = []
            for page_url, result in zip(batch, results, strict=True):
                if isinstance(result, BaseException):
                    if not isinstance(result, Exception):
                        raise result
                    if current_depth == 0:
                        raise result  # the page asked for: its error is the answer
                    pages.append(f"## {page_url}\n[skipped: {result}]")
                    continue
                title, text, links = result
                pages.append(f"## {title or page_url}\n{page_url}\n\n{text}" if depth else
                             f"URL: {page_url}\n" + (f"Title: {title}\n" if title else "") + "\n" + text)
                for link in links:
                    if link not in seen and _origin(link) == site:
                        seen.add(link)
                        next_level.append(link)
            level = next_level
            if not level or len(pages) >= self.max_pages:
                break
        answer = "\n\n".join(pages)
        if unread:
            answer += f"\n\n[stopped at the {self.max_pages}-page limit; {unread} more same-site links not read]"
        return clip(answer, self.max_chars, "ask for one page at a time to read more")

    async def _read(self, url: str) -> tuple[str, str, list[str]]:
        if self.respect_robots and not await self._allowed(url):
            raise ToolkitError(f"robots.txt of {_origin(url)} does not allow reading {url}.")
        response = await self.http.get(url)
        mime = response.content_type
        if "html" in mime or (not mime and "<html" in response.text[:1000].lower()):
            page = extract(response.text, response.url)
            text = page.markdown or "(the page has no readable text)"
            title, links = page.title, page.links
        elif mime.startswith(_TEXT_MIMES) or mime.endswith(("+json", "+xml")) or mime.startswith("text/"):
            title, text, links = "", response.text, []
        else:
            raise ToolkitError(f"{url} is {mime}, not a web page; crawl_url reads HTML and text only.")
        if response.truncated:
            text += f"\n\n[the download stopped at {self.http.max_bytes:,} bytes]"
        return title, text, links

    async def _allowed(self, url: str) -> bool:
        site = _origin(url)
        if site not in self._robots:
            self._robots[site] = await self._fetch_robots(site)
        rules = self._robots[site]
        return True if rules is None else rules.can_fetch(ROBOTS_AGENT, url)

    async def _fetch_robots(self, site: str) -> RobotFileParser | None:
        try:
            response = await self.http.get(site + "/robots.txt", ok_statuses=(401, 403, 404, 410))
        except ToolkitHttpError:
            return None  # no robots.txt to be had: the page request itself will say what is wrong
        rules = RobotFileParser(site + "/robots.txt")
        if response.status in (401, 403):
            rules.disallow_all = True  # type: ignore[attr-defined]  # typeshed omits it; RobotFileParser.__init__ sets it
        elif response.status < 300:
            rules.parse(response.text.splitlines())
        else:
            return None
        return rules


def _origin(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}"
