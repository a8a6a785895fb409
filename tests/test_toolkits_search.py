"""Search toolkits against a local 127.0.0.1 server serving recorded responses: Serper, Exa, Jina,
Baidu; DuckDuckGo's result shaping and its offline error (ddgs has no endpoint override)."""

from __future__ import annotations

import json
import socket

import pytest
from toolkit_support import LocalWeb, fixture_text, local_web, ok, run

from agentica_cli.toolkits import BaiduSearchTool, DuckDuckGoTool, JinaTool, SearchExaTool, SearchSerperTool


@pytest.fixture
def web():
    yield from local_web()


def test_serper_search_and_news(web: LocalWeb, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPER_API_KEY", "serper-key")
    web.route("POST", "/search", json.loads(fixture_text("serper_search.json")))
    web.route("POST", "/news", json.loads(fixture_text("serper_news.json")))
    tool = SearchSerperTool(max_results=2, base_url=web.url, gl="us")
    assert ok(tool, "serper_search", query="apple inc") == (
        "Answer: Tim Cook (Aug 24, 2011–)\n"
        "About Apple: Apple Inc. is an American multinational technology company headquartered in Cupertino, "
        "California.\n"
        "1. Apple\n   https://www.apple.com/\n   Discover the innovative world of Apple and shop everything iPhone, "
        "iPad, Apple Watch, Mac, and Apple TV.\n"
        "2. Apple Inc. - Wikipedia (2 days ago)\n   https://en.wikipedia.org/wiki/Apple_Inc.\n   Apple Inc. is an "
        "American multinational technology company headquartered in Cupertino, California, in Silicon Valley."
    )
    sent = web.requests_to("/search")[0]
    assert sent.headers["x-api-key"] == "serper-key"
    assert sent.json() == {"q": "apple inc", "num": 2, "gl": "us"}
    assert sent.headers["user-agent"].startswith("agentica-toolkits/")
    news = ok(tool, "serper_news" if "serper_news" in tool.functions else "serper_search", query="apple inc",
              kind="news")
    assert news.startswith("1. Apple unveils new chips (Example News, 3 hours ago)\n   https://news.example.com/")
    function = tool.functions["serper_search"]
    assert function.is_read_only and function.concurrency_safe


def test_serper_missing_key_and_401(web: LocalWeb, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    tool = SearchSerperTool(base_url=web.url)
    assert run(tool, "serper_search", query="x").error == (
        "Error: MissingKeyError: Serper needs an API key: set SERPER_API_KEY (or pass api_key=...)."
    )
    assert web.seen == []  # nothing sent without a key
    web.route("POST", "/search", {"message": "Unauthorized."}, status=401)
    call = run(SearchSerperTool(api_key="wrong", base_url=web.url), "serper_search", query="x")
    assert call.error == (
        "Error: ToolkitHttpError: Serper refused the request (HTTP 401): check the API key in SERPER_API_KEY."
    )


def test_exa_search_and_contents(web: LocalWeb) -> None:
    web.route("POST", "/search", json.loads(fixture_text("exa_search.json")))
    web.route("POST", "/contents", json.loads(fixture_text("exa_contents.json")))
    tool = SearchExaTool(api_key="exa-key", base_url=web.url, max_results=3, text_chars=60)
    result = ok(tool, "exa_search", query="surveys of large language models")
    assert result == (
        "1. A Comprehensive Overview of Large Language Models (2023-07-12, Humza Naveed, Asad Ullah Khan)\n"
        "   https://arxiv.org/abs/2307.06435\n"
        "Large Language Models (LLMs) have recently demonstrated rema\n\n"
        "[truncated: 60 of 128 characters shown]\n\n"
        "2. Survey of LLM agents\n   https://example.com/llm-survey\n"
        "Agents built on language models plan, use tools and reflect."
    )
    sent = web.requests_to("/search")[0]
    assert sent.headers["x-api-key"] == "exa-key"
    assert sent.json() == {"query": "surveys of large language models", "numResults": 3, "type": "auto",
                           "contents": {"text": {"maxCharacters": 60}}}
    assert "The full text of page A." in ok(tool, "exa_contents", urls=["https://example.com/a"])
    assert web.requests_to("/contents")[0].json()["urls"] == ["https://example.com/a"]


def test_jina_reader_search_and_private_refusal(web: LocalWeb, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JINA_API_KEY", raising=False)
    web.route("GET", "/https://example.com/", fixture_text("jina_reader.txt"), headers={"Content-Type": "text/plain"})
    web.route("GET", "/", json.loads(fixture_text("jina_search.json")))
    tool = JinaTool(reader_base_url=web.url, search_base_url=web.url, max_results=1)
    text = ok(tool, "jina_read", url="https://example.com/")
    assert text.startswith("Title: Example Domain\n\nURL Source: https://example.com/")
    assert "authorization" not in web.requests_to("/https://example.com/")[0].headers  # key-less reading
    assert run(tool, "jina_search", query="reader").error == (
        "Error: MissingKeyError: Jina search needs an API key: set JINA_API_KEY (or pass api_key=...)."
    )
    monkeypatch.setenv("JINA_API_KEY", "jina-key")
    assert ok(tool, "jina_search", query="reader") == (
        "1. Jina AI - Search Foundation\n   https://jina.ai/\n   Best embeddings, rerankers, LLM-reader, web scraper."
    )
    assert web.requests_to("/")[0].headers["authorization"] == "Bearer jina-key"
    for url in ("http://127.0.0.1:8080/admin", "http://localhost/", "http://10.0.0.5/", "file:///etc/passwd"):
        assert run(tool, "jina_read", url=url).error.startswith("Error: FetchRefusedError: ")


def test_baidu_parses_results_page(web: LocalWeb) -> None:
    web.route("GET", "/s", fixture_text("baidu_results.html"))
    tool = BaiduSearchTool(max_results=3, base_url=web.url + "/s")
    assert ok(tool, "baidu_search", query="人工智能") == (
        "1. 人工智能 (智能科学与技术专业术语) - 百度百科\n   https://baike.baidu.com/item/人工智能/9180\n"
        "   人工智能（Artificial Intelligence），英文缩写为AI。它是研究、开发用于模拟、延伸和扩展人的智能的理论、方法、"
        "技术及应用系统的一门新的技术科学。\n"
        "2. 什么是 人工智能 ？ - 知乎\n   https://www.zhihu.com/question/1234\n"
        "   2023年5月1日 — 人工智能 是计算机科学的一个分支，它企图了解智能的实质。\n"
        "3. 人工智能新闻\n   http://www.baidu.com/link?url=Aa3\n   最新的人工智能行业动态与研究进展。"
    )
    sent = web.requests_to("/s")[0]
    assert sent.param("wd") == "人工智能" and sent.param("ie") == "utf-8"
    assert "agentica" in sent.headers["user-agent"]


def test_baidu_captcha_page_is_a_clear_error(web: LocalWeb) -> None:
    web.route("GET", "/s", fixture_text("baidu_captcha.html"))
    call = run(BaiduSearchTool(base_url=web.url + "/s"), "baidu_search", query="x")
    assert call.error is not None and call.error.startswith(
        "Error: ToolkitError: Baidu asked for a captcha (bot check) instead of results")


def test_duckduckgo_shapes_ddgs_rows() -> None:
    from agentica_cli.toolkits.duckduckgo import shape_results

    text_rows = [  # as ddgs' text() returns them
        {"title": "Python.org", "href": "https://www.python.org/", "body": "The official home of the\nPython language"},
        {"title": "Python - Wikipedia", "href": "https://en.wikipedia.org/wiki/Python", "body": "Python is ..."},
    ]
    assert shape_results(text_rows, "text", 1) == (
        "1. Python.org\n   https://www.python.org/\n   The official home of the Python language"
    )
    news_rows = [{"date": "2026-11-30T08:00:00+00:00", "title": "Python 3.15 released", "body": "New features.",
                  "url": "https://news.example.com/py", "image": None, "source": "Example News"}]
    assert shape_results(news_rows, "news", 5) == (
        "1. Python 3.15 released (Example News, 2026-11-30T08:00:00+00:00)\n   https://news.example.com/py\n"
        "   New features."
    )


def test_duckduckgo_offline_is_a_readable_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    tool = DuckDuckGoTool(proxy=f"http://127.0.0.1:{dead}", timeout=3)
    call = run(tool, "duckduckgo_search", query="agentica")
    assert call.error is not None
    assert call.error.startswith("Error: ToolkitError: search failed: could not reach the search engines")
    assert set(tool.functions) == {"duckduckgo_search", "duckduckgo_news"}
