"""The toolkits the CLI can add by name (`agentica --tools arxiv,weather`, `[tools] enable`), and
whether each is ready to use: its optional dependency installed, its API key set.

A toolkit class describes its needs with class attributes (all optional):
`extra` (the pip extra), `extra_modules` (modules that extra provides), `extra_optional` (the
toolkit works without it, some functions do not), `key_env` (API key variable), `key_optional`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import import_module
from typing import Any

# CLI name -> class name (exported by agentica_cli.toolkits); one line per toolkit.
TOOLKITS = {
    "baidu": "BaiduSearchTool",
    "duckduckgo": "DuckDuckGoTool",
    "serper": "SearchSerperTool",
    "exa": "SearchExaTool",
    "crawler": "UrlCrawlerTool",
    "jina": "JinaTool",
    "browser": "BrowserTool",
    "arxiv": "ArxivTool",
    "wikipedia": "WikipediaTool",
    "yfinance": "YFinanceTool",
    "weather": "WeatherTool",
    "shell": "ShellTool",
    "code": "CodeTool",
    "sql": "SqlTool",
    "dalle": "DalleTool",
    "cogview": "CogViewTool",
    "image_analysis": "ImageAnalysisTool",
    "ocr": "OcrTool",
}
ALIASES = {"ddg": "duckduckgo", "url_crawler": "crawler", "url-crawler": "crawler", "finance": "yfinance",
           "wiki": "wikipedia", "python": "code", "image-analysis": "image_analysis", "vision": "image_analysis"}


class UnknownToolkitError(ValueError):
    """A toolkit name the catalog does not know; the message lists the known ones."""


@dataclass(frozen=True)
class ToolkitStatus:
    name: str
    class_name: str
    problem: str = ""  # empty when ready; else what is missing and how to fix it
    note: str = ""  # ready, with a remark (an optional key or extra not present)

    @property
    def ready(self) -> bool:
        return not self.problem

    def describe(self) -> str:
        return self.problem or self.note or "ready"


def canonical_name(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key in TOOLKITS:
        return key
    for short, class_name in TOOLKITS.items():  # the class name works too: ArxivTool
        if class_name.lower() == key:
            return short
    raise UnknownToolkitError(f"unknown toolkit {name.strip()!r}; known: {', '.join(TOOLKITS)}")


def toolkit_class(name: str) -> type:
    from agentica_cli import toolkits

    return getattr(toolkits, TOOLKITS[canonical_name(name)])


def status(name: str) -> ToolkitStatus:
    from agentica_cli.toolkits._http import module_available

    short = canonical_name(name)
    cls = toolkit_class(short)
    extra = getattr(cls, "extra", None)
    missing = [m for m in getattr(cls, "extra_modules", ()) if not module_available(m)]
    install = f'pip install "agentica-cli[{extra}]"' if extra else f"pip install {' '.join(missing)}"
    notes = []
    if missing and not getattr(cls, "extra_optional", False):
        return ToolkitStatus(short, cls.__name__, problem=f"missing extra: {install}")
    if missing:
        notes.append(f"some functions need: {install}")
    key_env = getattr(cls, "key_env", None)
    if key_env and not os.environ.get(key_env, "").strip():
        if not getattr(cls, "key_optional", False):
            return ToolkitStatus(short, cls.__name__, problem=f"missing key: set {key_env}")
        notes.append(f"{key_env} not set (optional)")
    return ToolkitStatus(short, cls.__name__, note="ready; " + "; ".join(notes) if notes else "")


def build_toolkits(names: list[str], **shared: Any) -> tuple[list[Any], list[ToolkitStatus]]:
    """Instances of the ready toolkits among `names`, and the status of every one asked for.

    Unknown names raise UnknownToolkitError; toolkits that are not ready are left out.
    """
    tools, statuses, seen = [], [], set()
    for name in names:
        short = canonical_name(name)
        if short in seen:
            continue
        seen.add(short)
        state = status(short)
        statuses.append(state)
        if state.ready:
            tools.append(toolkit_class(short)(**shared.get(short, {})))
    return tools, statuses


def import_all() -> list[type]:
    """Every toolkit class (tests and the schema-size benchmark use it)."""
    return [getattr(import_module("agentica_cli.toolkits"), class_name) for class_name in TOOLKITS.values()]
