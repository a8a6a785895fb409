"""Shared reading of Markdown extension files: front matter + body, problems collected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentica_cli.extensions.frontmatter import read
from agentica_cli.extensions.places import UnreadableFile, read_text

Problems = list[str]


def read_markdown(path: Path, root: Path | None, problems: Problems) -> tuple[dict[str, Any], str] | None:
    """(front matter, body), or None after noting in `problems` why the file is left out.
    Front matter that cannot be read is noted too, and the file loads with what could be read
    of it (perhaps nothing), as Claude Code loads it."""
    try:
        text = read_text(path, root)
    except UnreadableFile as why:
        problems.append(f"{path} skipped: {why}")
        return None
    found = read(text)
    if found.problem:
        problems.append(f"{path}: {found.problem}")
    return found.meta, found.body


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



def slug(text: str) -> str:
    """A name usable as an identifier: `Agent Development` -> `agent-development`."""
    import re

    return re.sub(r"[^a-z0-9._-]+", "-", text.strip().lower()).strip("-._")


def say_which_wins(kind: str, name: str, loser: Path, winner: Path, problems: Problems) -> None:
    """Two files define the same name: the later place wins (see Places); say so once."""
    problems.append(f"{loser}: the {kind} '{name}' is also defined by {winner}, which wins")
