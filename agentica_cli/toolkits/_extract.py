"""Main-content extraction: an HTML page without its navigation, ads and boilerplate, as Markdown.

Readability-style, with BeautifulSoup (installed with markdownify): drop elements that are never
content (scripts, nav, header/footer, asides, forms) and elements whose id or class names them
as ads, banners, cookie notices, share bars, sidebars or comments; then keep <article>, <main> or
role=main, else the block holding the most paragraph text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urldefrag, urljoin

NEVER_CONTENT = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "form", "button", "input",
                 "select", "textarea", "nav", "header", "footer", "aside", "dialog")
NEVER_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alert")
BOILERPLATE_WORDS = frozenset({
    "ad", "ads", "advert", "adverts", "advertisement", "advertising", "sponsor", "sponsored", "promo", "promoted",
    "banner", "cookie", "cookies", "consent", "gdpr", "sidebar", "share", "sharing", "social", "newsletter",
    "subscribe", "popup", "modal", "related", "recommended", "comments", "comment", "breadcrumb", "breadcrumbs",
    "nav", "navbar", "navigation", "menu", "footer", "header", "masthead", "toolbar", "skip", "outbrain", "taboola",
})
_SPLIT = re.compile(r"[\s_-]+")


@dataclass
class Extracted:
    title: str
    markdown: str
    links: list[str] = field(default_factory=list)  # absolute http(s) links: main content's first, then the rest


def _is_boilerplate(tag: Any) -> bool:
    if tag.get("aria-hidden") == "true" or tag.get("hidden") is not None:
        return True
    if str(tag.get("role", "")).lower() in NEVER_ROLES:
        return True
    names = " ".join([str(tag.get("id") or ""), *(tag.get("class") or [])]).lower()
    return bool(names) and any(word in BOILERPLATE_WORDS for word in _SPLIT.split(names))


def _text_len(tag: Any) -> int:
    return sum(len(p.get_text(" ", strip=True)) for p in tag.find_all(["p", "pre", "li", "blockquote"]))


def extract(html: str, url: str) -> Extracted:
    from bs4 import BeautifulSoup

    from agentica_cli.tools.web_access import html_to_markdown

    soup = BeautifulSoup(html, "html.parser")
    title = " ".join((soup.title.get_text() if soup.title else "").split())
    links: list[str] = []
    for anchor in soup.find_all("a", href=True):
        # bs4 types attribute values as str | list: only multi-valued ones (class, rel...) are lists, never href
        target = urldefrag(urljoin(url, cast(str, anchor["href"])))[0]
        anchor["href"] = target  # absolute in the Markdown too
        if target.startswith(("http://", "https://")) and target not in links:
            links.append(target)
    for image in soup.find_all("img"):
        image.decompose()
    for tag in soup.find_all(NEVER_CONTENT):
        tag.decompose()
    for tag in soup.find_all(True):
        if tag.parent is not None and tag.name not in ("html", "body") and _is_boilerplate(tag):
            tag.decompose()
    root = _main_node(soup)
    markdown = html_to_markdown(str(root)) if root is not None else ""
    # Links in the main content first: a crawl follows what the article points to before the menus.
    in_content = [a["href"] for a in root.find_all("a", href=True)] if root is not None else []
    ordered = [link for link in in_content if link in links]
    ordered += [link for link in links if link not in ordered]
    return Extracted(title=title, markdown=markdown, links=list(dict.fromkeys(ordered)))


def _main_node(soup: Any) -> Any:
    articles = soup.find_all("article")
    if articles:
        best = max(articles, key=_text_len)
        if _text_len(best) > 0:
            return best
    for candidate in (soup.find("main"), soup.find(attrs={"role": "main"})):
        if candidate is not None and candidate.get_text(strip=True):
            return candidate
    body = soup.body or soup
    blocks = body.find_all(["div", "section"])
    if blocks:
        # The block whose own paragraphs hold the most text; a page-wide wrapper scores the same as
        # its content block, so prefer the deepest of the best-scoring ones.
        scores = [(sum(len(p.get_text(" ", strip=True)) for p in b.find_all("p", recursive=False)), b)
                  for b in blocks]
        top = max(score for score, _ in scores)
        if top >= 200:
            return next(b for score, b in scores if score == top)
    return body
