"""Knowledge toolkits against a local 127.0.0.1 server serving recorded responses: arXiv Atom XML
(and a PDF), MediaWiki JSON, Open-Meteo JSON, Yahoo Finance chart/quoteSummary/search JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolkit_support import LocalWeb, fixture_text, local_web, ok, run

from agentica_cli.toolkits import ArxivTool, WeatherTool, WikipediaTool, YFinanceTool
from agentica_cli.tools.context import ToolContext


@pytest.fixture
def web():
    yield from local_web()


def make_pdf(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica, xref offsets computed."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_arxiv_search_paper_and_errors(web: LocalWeb) -> None:
    web.route("GET", "/api/query", fixture_text("arxiv_search.xml"), headers={"Content-Type": "application/atom+xml"})
    tool = ArxivTool(max_results=2, base_url=web.url + "/api/query")
    assert ok(tool, "arxiv_search", query="attention transformer", sort="date") == (
        "1. [1706.03762v7] Attention Is All You Need (Ashish Vaswani, Noam Shazeer, Niki Parmar +1; 2017-06-12)\n"
        "   The dominant sequence transduction models are based on complex recurrent or convolutional neural "
        "networks in an encoder-decoder configuration. We propose a new simple network architecture, the "
        "Transformer, based solely on attention mechani…\n"
        "2. [hep-th/9901001v1] An Old-Style Identifier Paper (A. Physicist; 1999-01-01)\n   Short abstract."
    )
    sent = web.seen[0]
    assert sent.param("search_query") == "all:attention transformer"
    assert sent.param("sortBy") == "submittedDate" and sent.param("max_results") == "2"
    ok(tool, "arxiv_search", query="ti:attention AND au:vaswani")
    assert web.seen[1].param("search_query") == "ti:attention AND au:vaswani"  # arXiv syntax passed as is
    paper = ok(tool, "arxiv_paper", paper="https://arxiv.org/abs/1706.03762v7")
    assert paper.startswith("Attention Is All You Need\nid: 1706.03762v7  published: 2017-06-12  updated: 2023-08-02\n"
                            "authors: Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit\n"
                            "categories: cs.CL, cs.LG\ncomment: 15 pages, 5 figures\n")
    assert web.seen[2].param("id_list") == "1706.03762v7"
    assert run(tool, "arxiv_paper", paper="not an id").error == (
        "Error: ValueError: 'not an id' is not an arXiv id (like 2301.12345 or hep-th/9901001)."
    )
    web.route("GET", "/api/query", fixture_text("arxiv_error.xml"))
    assert run(tool, "arxiv_search", query="x").error == (
        "Error: ValueError: arXiv rejected the query: incorrect id format for bad")
    web.route("GET", "/api/query", "<html>Service Unavailable</html", headers={"Content-Type": "text/html"})
    assert run(tool, "arxiv_search", query="x").error.startswith(
        "Error: ToolkitError: arXiv sent a malformed response (not Atom XML)")


def test_arxiv_read_downloads_the_pdf_and_extracts_text(web: LocalWeb, tmp_path: Path) -> None:
    pytest.importorskip("pypdf", reason="pypdf (the [pdf] extra) is not installed")
    web.route("GET", "/pdf/1706.03762", make_pdf("Attention Is All You Need"),
              headers={"Content-Type": "application/pdf"})
    tool = ArxivTool(base_url=web.url + "/api/query", pdf_base_url=web.url + "/pdf")

    class FakeAgentWithWorkDir:  # what the loop hands over: the running agent, whose work_dir is used
        work_dir = tmp_path

    call = run(tool, "arxiv_read", tool_context=ToolContext(agent=FakeAgentWithWorkDir()), paper="1706.03762")
    assert call.error is None, call.error
    saved = tmp_path / "arxiv" / "1706.03762.pdf"
    assert call.result == f"Saved {saved} (1 pages).\n\nAttention Is All You Need"
    assert saved.read_bytes().startswith(b"%PDF-1.4")
    web.route("GET", "/pdf/1706.03762", "<html>not a pdf</html>")
    call = run(tool, "arxiv_read", tool_context=ToolContext(agent=FakeAgentWithWorkDir()), paper="1706.03762")
    assert call.error == "Error: ToolkitError: arXiv did not send a PDF for 1706.03762 (got text/html)."
    assert not tool.functions["arxiv_read"].is_read_only and tool.functions["arxiv_search"].is_read_only


def test_wikipedia_search_and_page_in_a_chosen_language(web: LocalWeb) -> None:
    web.route("GET", "/zh/w/api.php", json.loads(fixture_text("wiki_search.json")))
    web.route("GET", "/en/w/api.php", json.loads(fixture_text("wiki_page.json")))
    tool = WikipediaTool(language="en", base_url=web.url + "/{lang}/w/api.php", max_chars=1000)
    assert ok(tool, "wikipedia_search", query="python", lang="zh") == (
        "1. Python (programming language) (15024 words)\n   Python is a high-level, general-purpose programming "
        "language. Its design philosophy emphasizes code readability\n"
        "2. Monty Python (8000 words)\n   Monty Python were a British comedy troupe\n"
        "Read one with wikipedia_page(title)."
    )
    assert web.seen[0].param("srsearch") == "python" and web.seen[0].param("srlimit") == "5"
    page = ok(tool, "wikipedia_page", title="python language")
    assert page == (
        "# Python (programming language)\nhttps://en.wikipedia.org/wiki/Python_(programming_language)\n\n"
        "Python is a high-level, general-purpose programming language. Its design philosophy emphasizes code "
        "readability with the use of significant indentation.\n\n== History ==\nPython was conceived in the late "
        "1980s by Guido van Rossum at Centrum Wiskunde & Informatica (CWI) in the Netherlands."
    )
    assert web.seen[1].path == "/en/w/api.php" and web.seen[1].param("redirects") == "1"
    web.route("GET", "/en/w/api.php", json.loads(fixture_text("wiki_missing.json")))
    assert ok(tool, "wikipedia_page", title="No such page xyz") == (
        "No Wikipedia page titled 'No such page xyz'; search with wikipedia_search first.")
    assert run(tool, "wikipedia_search", query="x", lang="../etc").error == (
        "Error: ValueError: '../etc' is not a Wikipedia language code (e.g. en, zh, de).")


def test_weather_current_and_forecast(web: LocalWeb) -> None:
    web.route("GET", "/geo/search", json.loads(fixture_text("open_meteo_geocoding.json")))
    web.route("GET", "/v1/forecast", json.loads(fixture_text("open_meteo_forecast.json")))
    tool = WeatherTool(base_url=web.url + "/v1", geocoding_url=web.url + "/geo")
    assert ok(tool, "get_weather", location="Beijing", days=2) == (
        "Beijing, Beijing, China (2026-12-01T11:00 local): mainly clear, 3.4°C (feels -1.2°C), humidity 31%, "
        "wind 12.6km/h, precipitation 0.0mm\n"
        "date | weather | min..max | precip (chance)\n"
        "2026-12-01 | mainly clear | -4.3..5.1°C | 0.0mm (3%)\n"
        "2026-12-02 | light snow | -6.0..2.0°C | 1.4mm (60%)"
    )
    forecast = web.requests_to("/v1/forecast")[0]
    assert (forecast.param("latitude"), forecast.param("longitude")) == ("39.9075", "116.39723")
    assert forecast.param("forecast_days") == "2" and forecast.param("temperature_unit") is None
    ok(tool, "get_weather", location="Beijing, US", unit="fahrenheit")
    second = web.requests_to("/v1/forecast")[1]
    assert second.param("latitude") == "40.0" and second.param("temperature_unit") == "fahrenheit"
    assert second.param("daily") is None  # days=0: no forecast asked for
    ok(tool, "get_weather", location="48.85, 2.35")
    assert len(web.requests_to("/geo/search")) == 2  # coordinates need no geocoding
    web.route("GET", "/geo/search", {"generationtime_ms": 0.5})
    assert run(tool, "get_weather", location="Nowhereville").error == (
        "Error: LookupError: no place called 'Nowhereville' found; try another spelling or 'lat,lon'.")
    web.route("GET", "/v1/forecast", {"reason": "x"})
    assert run(tool, "get_weather", location="1,2").error == (
        "Error: ValueError: Open-Meteo sent an unexpected response (no 'current' block).")


def test_yfinance_quote_history_fundamentals_news(web: LocalWeb) -> None:
    web.route("GET", "/v8/finance/chart/AAPL", json.loads(fixture_text("yahoo_chart.json")))
    web.route("GET", "/v8/finance/chart/NOPE", json.loads(fixture_text("yahoo_chart_missing.json")), status=404)
    web.route("GET", "/cookie", b"", status=404, headers={"Set-Cookie": "A3=d=AQABBKq; Path=/"})
    web.route("GET", "/v1/test/getcrumb", b"abcCRUMB123", headers={"Content-Type": "text/plain"})
    web.route("GET", "/v10/finance/quoteSummary/AAPL", json.loads(fixture_text("yahoo_quotesummary.json")))
    web.route("GET", "/v1/finance/search", json.loads(fixture_text("yahoo_search.json")))
    tool = YFinanceTool(base_url=web.url, cookie_url=web.url + "/cookie", max_news=2)
    assert ok(tool, "stock_quote", symbol="aapl") == (
        "Apple Inc. (AAPL, NasdaqGS): 278.85 USD (+2.71% vs 271.49) at 2025-11-28 17:00 UTC; day 276.10-279.50; "
        "volume 20,135,620; 52w 169.21-288.62"
    )
    history = ok(tool, "stock_history", symbol="AAPL", period="5d")
    assert history.splitlines()[:3] == ["AAPL 5d 1d (USD)", "date,open,high,low,close,volume",
                                        "2025-11-24,270.90,275.50,269.60,275.92,65585800"]
    assert web.requests_to("/v8/finance/chart/AAPL")[1].param("range") == "5d"
    fundamentals = ok(tool, "stock_fundamentals", symbol="AAPL")
    assert fundamentals.splitlines()[:5] == ["AAPL", "name: Apple Inc.", "sector: Technology",
                                             "industry: Consumer Electronics", "market cap: 4.12T"]
    assert "analyst view: buy" in fundamentals and fundamentals.endswith("tablets, wearables, and accessories "
                                                                         "worldwide.")
    summary = web.requests_to("/v10/finance/quoteSummary/AAPL")[0]
    assert summary.param("crumb") == "abcCRUMB123" and "A3=d=AQABBKq" in summary.headers["cookie"]
    assert ok(tool, "stock_news", symbol="AAPL") == (
        "1. Apple stock hits record high (Example Finance, 2025-11-28)\n   https://finance.example.com/news/apple-record\n"
        "2. What to expect from Apple's next quarter (Market Watchers, 2025-11-27)\n   https://markets.example.com/apple-q"
    )
    assert run(tool, "stock_quote", symbol="NOPE").error == (
        "Error: LookupError: no data for NOPE: No data found, symbol may be delisted")
    assert run(tool, "stock_quote", symbol="A;B").error.startswith("Error: ValueError: 'A;B' is not a ticker")


def test_yfinance_renews_an_expired_crumb(web: LocalWeb) -> None:
    web.route("GET", "/cookie", b"", status=404, headers={"Set-Cookie": "A3=x; Path=/"})
    web.route("GET", "/v1/test/getcrumb", responses=[(200, b"old"), (200, b"new")],
              headers={"Content-Type": "text/plain"})
    web.route("GET", "/v10/finance/quoteSummary/AAPL",
              responses=[(401, {"finance": {"error": {"code": "Unauthorized", "description": "Invalid Crumb"}}}),
                         (200, json.loads(fixture_text("yahoo_quotesummary.json")))])
    tool = YFinanceTool(base_url=web.url, cookie_url=web.url + "/cookie")
    assert "market cap: 4.12T" in ok(tool, "stock_fundamentals", symbol="AAPL")
    assert [s.param("crumb") for s in web.requests_to("/v10/finance/quoteSummary/AAPL")] == ["old", "new"]
