"""Ready-made toolkits from the Agentica tools page: search, web, knowledge, code, data, media.

    from agentica_cli.toolkits import ArxivTool, DuckDuckGoTool
    agent = Agent(model=..., tools=[DuckDuckGoTool(max_results=10), ArxivTool(max_results=5)])

Each class lives in its own module and is imported on first use, so importing this package
costs nothing; heavy optional dependencies are imported only when a tool runs. Shared parts:
`_http.py` (HTTP with timeouts, retries, SSRF guard, key and extra errors), `_text.py`
(compact result text), `catalog.py` (the names the CLI's --tools and [tools] enable use).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# class name -> module; one line per toolkit.
_LAZY = {
    "BaiduSearchTool": "agentica_cli.toolkits.baidu",
    "DuckDuckGoTool": "agentica_cli.toolkits.duckduckgo",
    "SearchSerperTool": "agentica_cli.toolkits.serper",
    "SearchExaTool": "agentica_cli.toolkits.exa",
    "UrlCrawlerTool": "agentica_cli.toolkits.url_crawler",
    "JinaTool": "agentica_cli.toolkits.jina",
    "BrowserTool": "agentica_cli.toolkits.browser",
    "ArxivTool": "agentica_cli.toolkits.arxiv",
    "WikipediaTool": "agentica_cli.toolkits.wikipedia",
    "YFinanceTool": "agentica_cli.toolkits.yfinance",
    "WeatherTool": "agentica_cli.toolkits.weather",
    "ShellTool": "agentica_cli.toolkits.shell",
    "CodeTool": "agentica_cli.toolkits.code",
    "SqlTool": "agentica_cli.toolkits.sql",
    "DalleTool": "agentica_cli.toolkits.dalle",
    "CogViewTool": "agentica_cli.toolkits.cogview",
    "ImageAnalysisTool": "agentica_cli.toolkits.image_analysis",
    "OcrTool": "agentica_cli.toolkits.ocr",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentica_cli.toolkits' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
