"""`@path` mentions in a message: the mentioned files' content (or a folder's listing) attached to
it, as Claude Code attaches them. Shared by the REPL's input and custom commands' bodies."""

from __future__ import annotations

import re
from pathlib import Path

from agentica_cli.images import is_image_path

MENTION = re.compile(r"(?:^|(?<=\s))@([^\s@]+)")
MAX_MENTION_BYTES = 200_000
MAX_LISTED_ENTRIES = 500  # of a mentioned folder
IGNORED_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".ruff_cache"}


def folder_listing(path: Path, limit: int = MAX_LISTED_ENTRIES) -> str | None:
    """A folder's entries, sorted, one a line (`name/` for a folder), without IGNORED_DIRS; None
    if it cannot be read."""
    try:
        entries = sorted((e for e in path.iterdir() if e.name not in IGNORED_DIRS), key=lambda e: e.name)
    except OSError:
        return None
    lines = [f"{e.name}/" if e.is_dir() else e.name for e in entries[:limit]]
    if len(entries) > limit:
        lines.append(f"... {len(entries) - limit} more")
    return "\n".join(lines) if lines else "(empty)"


def attach_mentions(text: str, work_dir: Path) -> tuple[str, list[str]]:
    """`explain @calc.py`: the message plus the mentioned files' content; `@src/`: a listing of
    the folder (its entries, folders marked with `/`), as Claude Code attaches one."""
    attached: list[str] = []
    blocks: list[str] = []
    for match in MENTION.finditer(text):
        name = match.group(1).rstrip(".,;:!?)")
        path = Path(name).expanduser()
        path = path if path.is_absolute() else work_dir / path
        if path.is_dir() and name not in attached:
            listing = folder_listing(path)
            if listing is not None:
                attached.append(name)
                blocks.append(f'<directory path="{name}">\n{listing}\n</directory>')
            continue
        if not path.is_file() or name in attached or is_image_path(name):  # images: tui/image_input.py
            continue
        try:
            data = path.read_bytes()[:MAX_MENTION_BYTES].decode("utf-8", errors="replace")
        except OSError:
            continue
        attached.append(name)
        blocks.append(f'<file path="{name}">\n{data}\n</file>')
    if not blocks:
        return text, []
    return text + "\n\n" + "\n\n".join(blocks), attached
