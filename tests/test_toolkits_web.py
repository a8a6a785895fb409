"""UrlCrawlerTool and the shared HTTP layer against 127.0.0.1 servers: main-content extraction, a
same-site crawl with robots.txt, SSRF refusals, retries, timeouts, malformed and oversized answers;
and an Agent that answers from a crawled page (scripted model server)."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import scripted_model, tool_results
from toolkit_support import LocalWeb, fixture_text, local_web, ok, run

from agentica_cli.agent import Agent
from agentica_cli.testing import turns
from agentica_cli.toolkits import DuckDuckGoTool, SearchSerperTool, UrlCrawlerTool, WikipediaTool
from agentica_cli.toolkits._http import HttpClient, ToolkitHttpError


@pytest.fixture
def web():
    yield from local_web()


def serve_site(web: LocalWeb) -> None:
    web.route("GET", "/story.html", fixture_text("article.html"))
    web.route("GET", "/reports/tidal-2026.html",
              "<html><head><title>Tidal report</title></head><body><main><h1>Report</h1>"
              "<p>Output figures for 2026.</p></main></body></html>")
    web.route("GET", "/faq", "<html><body><p>FAQ text</p></body></html>")
    web.route("GET", "/robots.txt", "User-agent: *\nDisallow: /faq\nDisallow: /news\n",
              headers={"Content-Type": "text/plain"})


def test_crawler_returns_the_article_without_navigation_ads_or_comments(web: LocalWeb) -> None:
    serve_site(web)
    text = ok(UrlCrawlerTool(allow_private=True), "crawl_url", url=f"{web.url}/story.html")
    assert text.startswith(f"URL: {web.url}/story.html\nTitle: Tidal Power in the Bay | Coastal Times\n\n"
                           "# Tidal Power in the Bay\n")
    for kept in ("The new tidal station in the bay produced 42 megawatts", "## What comes next",
                 f"[full report]({web.url}/reports/tidal-2026.html)", "By Ana Reyes"):
        assert kept in text
    for dropped in ("cookies", "Sport", "Trending", "ADVERTISEMENT", "Sponsored", "Share", "Great news",
                    "All rights reserved", "dataLayer", "width:300px"):
        assert dropped not in text, dropped
    assert [s.path for s in web.seen] == ["/robots.txt", "/story.html"]


def test_crawl_follows_same_site_links_within_limits_and_robots(web: LocalWeb) -> None:
    serve_site(web)
    tool = UrlCrawlerTool(allow_private=True, max_pages=3)
    text = ok(tool, "crawl_url", url=f"{web.url}/story.html", depth=1)
    assert text.startswith("## Tidal Power in the Bay | Coastal Times\n")
    # The article's own links come first (report, FAQ), before the menus' (/, /news, /sport, ...).
    assert "## Tidal report\n" in text and "Output figures for 2026." in text
    assert f"## {web.url}/faq\n[skipped: robots.txt of {web.url} does not allow reading {web.url}/faq.]" in text
    assert text.endswith("[stopped at the 3-page limit; 6 more same-site links not read]")
    paths = [s.path for s in web.seen]
    assert "/faq" not in paths and "/news" not in paths  # disallowed by robots.txt
    assert paths.count("/robots.txt") == 1  # read once per site
    assert not any(s.path.startswith("/share") for s in web.seen)  # other sites are not followed
    web.route("GET", "/robots.txt", "User-agent: *\nDisallow: /\n", headers={"Content-Type": "text/plain"})
    call = run(UrlCrawlerTool(allow_private=True), "crawl_url", url=f"{web.url}/story.html")
    assert call.error == f"Error: ToolkitError: robots.txt of {web.url} does not allow reading {web.url}/story.html."


def test_crawler_refuses_private_addresses_also_after_a_redirect(web: LocalWeb) -> None:
    serve_site(web)
    call = run(UrlCrawlerTool(), "crawl_url", url=f"{web.url}/story.html")
    assert call.error is not None and call.error.startswith(
        f"Error: FetchRefusedError: refusing to fetch {web.url}/robots.txt: 127.0.0.1 resolves to 127.0.0.1, "
        "a private, loopback or link-local address")
    assert web.seen == []
    # Allowed: 127.0.0.1 only. A redirect to another loopback address is refused before connecting.
    web.route("GET", "/away", b"", status=302, headers={"Location": "http://127.0.0.2:9/admin"})
    tool = UrlCrawlerTool(allow_private=["127.0.0.1/32"], respect_robots=False)
    call = run(tool, "crawl_url", url=f"{web.url}/away")
    assert call.error == ("Error: FetchRefusedError: refusing to fetch http://127.0.0.2:9/admin: 127.0.0.2 resolves to "
                          "127.0.0.2, a private, loopback or link-local address (the tool only fetches public "
                          "addresses).")
    assert run(tool, "crawl_url", url="file:///etc/passwd").error == (
        "Error: ValueError: 'file:///etc/passwd' is not an http(s) URL.")


def test_http_layer_retries_429_then_succeeds(web: LocalWeb) -> None:
    web.route("GET", "/w/api.php", responses=[(429, "slow down"), (503, "busy"),
                                              (200, json.loads(fixture_text("wiki_missing.json")))],
              headers={"Retry-After": "0"})
    tool = WikipediaTool(base_url=web.url + "/w/api.php")
    assert ok(tool, "wikipedia_page", title="x").startswith("No Wikipedia page titled 'x'")
    assert len(web.seen) == 3


def test_http_layer_errors_are_readable(web: LocalWeb) -> None:
    web.route("GET", "/w/api.php", responses=[(429, "slow down")], headers={"Retry-After": "0"})
    call = run(WikipediaTool(base_url=web.url + "/w/api.php"), "wikipedia_search", query="x")
    assert call.error == ("Error: ToolkitHttpError: Wikipedia is rate limiting requests (HTTP 429); try again later. "
                          "Details: slow down")
    assert len(web.seen) == 3  # the first try and two retries
    web.route("GET", "/w/api.php", responses=[(429, "slow down")], headers={"Retry-After": "3600"})
    run(WikipediaTool(base_url=web.url + "/w/api.php"), "wikipedia_search", query="x")
    assert len(web.seen) == 4  # an hour's Retry-After is not waited for
    web.route("POST", "/search", "<html><body>Bad gateway page</body></html>")
    call = run(SearchSerperTool(api_key="k", base_url=web.url), "serper_search", query="x")
    assert call.error == ("Error: ToolkitHttpError: Serper sent a malformed response (not JSON): "
                          "'<html><body>Bad gateway page</body></html>'")


def test_http_layer_timeout_and_size_cap(web: LocalWeb) -> None:
    web.route("GET", "/slow", hold=True)
    client = HttpClient(service="Slow API", base_url=web.url, timeout=0.5)
    with pytest.raises(ToolkitHttpError, match=r"^Slow API did not answer within 0.5 s \(http://127.0.0.1:\d+/slow\)"):
        asyncio.run(client.get("/slow", params={"key": "secret"}))
    web.route("GET", "/big", {"items": ["x" * 1000] * 100})
    small = HttpClient(service="Big API", base_url=web.url, max_bytes=10_000)
    response = asyncio.run(small.get("/big"))
    assert response.truncated and len(response.content) == 10_000
    with pytest.raises(ToolkitHttpError, match="larger than the size limit"):
        response.json()


def test_agent_answers_from_a_crawled_local_page(scripted, web: LocalWeb) -> None:
    serve_site(web)
    page = f"{web.url}/story.html"
    server = scripted(
        turns.tool_calls(turns.call("crawl_url", {"url": page}, id="c1")),
        turns.text("The station produced 42 megawatts at peak."),
    )
    agent = Agent(scripted_model(server), tools=[DuckDuckGoTool(max_results=3), UrlCrawlerTool(allow_private=True)])
    result = agent.run_sync(f"How much power did the station in {page} produce?")
    assert result.content == "The station produced 42 megawatts at peak."
    first, second = server.requests
    offered = [t["function"]["name"] for t in first["tools"]]
    assert offered == ["duckduckgo_search", "duckduckgo_news", "crawl_url"]
    assert "produced 42 megawatts at peak on its first day" in tool_results(second)["c1"]
    assert "ADVERTISEMENT" not in tool_results(second)["c1"]
