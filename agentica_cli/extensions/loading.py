"""Shared reading of Markdown extension files: front matter + body, problems collected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentica_cli.extensions.frontmatter import FrontMatterError, split
from agentica_cli.extensions.places import UnreadableFile, read_text

Problems = list[str]


def read_markdown(path: Path, root: Path | None, problems: Problems) -> tuple[dict[str, Any], str] | None:
    """(front matter, body), or None after noting in `problems` why the file is left out."""
    try:
        return split(read_text(path, root))
    except (UnreadableFile, FrontMatterError) as why:
        problems.append(f"{path} skipped: {why}")
        return None


def text_field(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return "" if value is None else str(value).strip()


def first_line(body: str, limit: int = 80) -> str:
    """A default description: the body's first non-empty line, without heading marks."""
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""

