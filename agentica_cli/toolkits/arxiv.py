"""ArxivTool: search arXiv, read a paper's metadata, download its PDF and extract the text.

Uses the arXiv Atom API directly (no extra for search); PDF text needs `pypdf`
(`pip install "agentica-cli[pdf]"`).
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Literal

from agentica_cli.toolkits._http import HttpClient, ToolkitError, require_module
from agentica_cli.toolkits._text import clamp, clip, squash
from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext

MAX_RESULTS_CAP = 30
MAX_PDF_BYTES = 50 * 1024 * 1024
_NS = {"a": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}
# New-style (2301.12345v2) and old-style (hep-th/9901001) identifiers.
_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")


def paper_id(text: str) -> str:
    """A bare arXiv id from an id, an abs/pdf URL or 'arXiv:...'."""
    value = text.strip()
    value = re.sub(r"^(?:https?://[^/]+/(?:abs|pdf)/|arxiv:)", "", value, flags=re.IGNORECASE)
    value = value.removesuffix(".pdf")
    if not _ID.match(value):
        raise ValueError(f"{text!r} is not an arXiv id (like 2301.12345 or hep-th/9901001).")
    return value


class ArxivTool(Tool):
    """arXiv paper search, metadata and full text."""

    extra = "pdf"
    extra_modules = ("pypdf",)
    extra_optional = True  # search works without it; only arxiv_read needs pypdf

    def __init__(
        self,
        max_results: int = 5,
        *,
        download_dir: str | Path | None = None,
        max_chars: int = 30_000,
        base_url: str = "https://export.arxiv.org/api/query",
        pdf_base_url: str = "https://arxiv.org/pdf",
        timeout: float = 30.0,
    ):
        super().__init__(name="arxiv")
        self.max_results = clamp(max_results, 5, MAX_RESULTS_CAP)
        self.download_dir = Path(download_dir) if download_dir else None
        self.max_chars = max(1000, int(max_chars))
        self.api = HttpClient(service="arXiv", base_url=base_url, timeout=timeout)
        self.pdfs = HttpClient(service="arXiv PDF", base_url=pdf_base_url, timeout=max(timeout, 60.0),
                               max_bytes=MAX_PDF_BYTES)
        self.register(self.arxiv_search, is_read_only=True, concurrency_safe=True)
        self.register(self.arxiv_paper, is_read_only=True, concurrency_safe=True)
        self.register(self.arxiv_read, concurrency_safe=True)  # writes the PDF to the download folder

    async def arxiv_search(self, query: str, sort: Literal["relevance", "date"] = "relevance") -> str:
        """Search arXiv papers; returns id, title, authors, date and a short abstract each.

        Args:
            query: Words, or arXiv syntax like 'ti:transformer AND au:vaswani'.
            sort: "relevance" or "date" (newest first).
        """
        if not query.strip():
            raise ValueError("query is empty.")
        search = query if re.search(r"\b(?:ti|au|abs|cat|all|co|jr|rn|id):", query) else f"all:{query}"
        xml = await self.api.get(params={
            "search_query": search, "start": 0, "max_results": self.max_results,
            "sortBy": "submittedDate" if sort == "date" else "relevance", "sortOrder": "descending",
        })
        papers = parse_feed(xml.text)
        if not papers:
            return f"No arXiv papers match {query!r}."
        return "\n".join(_summary(number, p) for number, p in enumerate(papers, start=1))

    async def arxiv_paper(self, paper: str) -> str:
        """One paper's metadata and full abstract.

        Args:
            paper: arXiv id (e.g. 2301.12345) or its abs/pdf URL.
        """
        found = await self._lookup(paper_id(paper))
        lines = [f"{found['title']}", f"id: {found['id']}  published: {found['published']}"
                 + (f"  updated: {found['updated']}" if found["updated"] != found["published"] else ""),
                 "authors: " + ", ".join(found["authors"]),
                 "categories: " + ", ".join(found["categories"])]
        for key in ("doi", "journal", "comment"):
            if found.get(key):
                lines.append(f"{key}: {found[key]}")
        lines += [f"pdf: {found['pdf']}", "", found["summary"]]
        return "\n".join(lines)

    async def arxiv_read(self, paper: str, tool_context: ToolContext) -> str:
        """Download a paper's PDF to the work folder and return its text.

        Args:
            paper: arXiv id (e.g. 2301.12345) or its abs/pdf URL.
        """
        ident = paper_id(paper)
        pypdf = require_module("pypdf", extra="pdf", toolkit="ArxivTool.arxiv_read")
        response = await self.pdfs.get("/" + ident)
        if response.truncated:
            raise ToolkitError(f"the PDF of {ident} is larger than {MAX_PDF_BYTES // (1024 * 1024)} MB; not read.")
        if not response.content.startswith(b"%PDF"):
            raise ToolkitError(f"arXiv did not send a PDF for {ident} (got {response.content_type or 'no type'}).")
        folder = self._folder(tool_context)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (ident.replace("/", "_") + ".pdf")
        target.write_bytes(response.content)
        try:
            reader = pypdf.PdfReader(io.BytesIO(response.content))
            pages = [(page.extract_text() or "").strip() for page in reader.pages]
        except Exception as err:  # pypdf raises many types for damaged files
            raise ToolkitError(f"could not read the text of {target.name}: {type(err).__name__}: {err}") from None
        text = "\n\n".join(p for p in pages if p)
        header = f"Saved {target} ({len(pages)} pages).\n\n"
        return header + clip(text, self.max_chars, f"the whole text is in {target}") if text else \
            header + "The PDF has no extractable text (scanned images?)."

    def _folder(self, ctx: ToolContext | None) -> Path:
        if self.download_dir is not None:
            return self.download_dir
        work_dir = getattr(getattr(ctx, "agent", None), "work_dir", None)
        return Path(work_dir or ".") / "arxiv"

    async def _lookup(self, ident: str) -> dict[str, Any]:
        xml = await self.api.get(params={"id_list": ident, "max_results": 1})
        papers = parse_feed(xml.text)
        if not papers:
            raise LookupError(f"no arXiv paper with id {ident}.")
        return papers[0]


def parse_feed(xml: str) -> list[dict[str, Any]]:
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as err:
        raise ToolkitError(f"arXiv sent a malformed response (not Atom XML): {err}") from None
    if root.tag != "{http://www.w3.org/2005/Atom}feed":
        raise ToolkitError("arXiv sent a malformed response (no Atom feed).")
    papers = []
    for entry in root.findall("a:entry", _NS):
        raw_id = entry.findtext("a:id", "", _NS)
        title = squash(entry.findtext("a:title", "", _NS))
        if "/api/errors" in raw_id or title == "Error":  # arXiv reports bad queries as an entry
            raise ValueError("arXiv rejected the query: " + squash(entry.findtext("a:summary", "", _NS)))
        pdf = next((link.get("href", "") for link in entry.findall("a:link", _NS)
                    if link.get("title") == "pdf" or link.get("type") == "application/pdf"), "")
        papers.append({
            "id": re.sub(r"^https?://[^/]+/abs/", "", raw_id),
            "title": title,
            "summary": squash(entry.findtext("a:summary", "", _NS)),
            "published": entry.findtext("a:published", "", _NS)[:10],
            "updated": entry.findtext("a:updated", "", _NS)[:10],
            "authors": [squash(a.findtext("a:name", "", _NS)) for a in entry.findall("a:author", _NS)],
            "categories": [c.get("term", "") for c in entry.findall("a:category", _NS)],
            "doi": entry.findtext("arxiv:doi", "", _NS),
            "journal": squash(entry.findtext("arxiv:journal_ref", "", _NS)),
            "comment": squash(entry.findtext("arxiv:comment", "", _NS)),
            "pdf": pdf,
        })
    return papers


def _summary(number: int, paper: dict[str, Any]) -> str:
    authors = paper["authors"]
    who = ", ".join(authors[:3]) + (f" +{len(authors) - 3}" if len(authors) > 3 else "")
    return (f"{number}. [{paper['id']}] {paper['title']} ({who}; {paper['published']})\n"
            f"   {squash(paper['summary'], 240)}")
