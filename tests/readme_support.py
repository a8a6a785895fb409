"""Reading the code examples of the README and the docs/ pages, for the tests that run them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def doc_pages() -> list[Path]:
    """Every Markdown page a reader is pointed to: the READMEs and docs/ (translations included)."""
    return sorted([*ROOT.glob("README*.md"), *DOCS.rglob("*.md"), ROOT / "bench" / "README.md"])


def section(path: Path, title: str | None = None) -> str:
    """The text of `path`, or of its section headed `title` (at any level) up to the next
    heading of the same or a higher level. Lines inside code fences are never headings."""
    text = path.read_text(encoding="utf-8")
    if title is None:
        return text
    lines, fence, start, level = text.split("\n"), False, None, 0
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
            continue
        heading = None if fence else re.match(r"(#+) (.*)", line)
        if heading is None:
            continue
        if start is None and heading.group(2) == title:
            start, level = i, len(heading.group(1))
        elif start is not None and len(heading.group(1)) <= level:
            return "\n".join(lines[start:i])
    if start is None:
        raise LookupError(f"{path.name} has no section headed {title!r}")
    return "\n".join(lines[start:])


def fenced_blocks(text: str, lang: str) -> list[str]:
    """The ```lang blocks of `text`, in order (a `#` inside a block is not a heading)."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def python_blocks(section_title: str | None = None, path: Path = README) -> list[str]:
    """The ```python blocks of a page, or of one of its sections, in order."""
    return fenced_blocks(section(path, section_title), "python")
