"""`@path` imports in CLAUDE.md-style instruction files: where they are and what they name.

Claude Code expands `@path/to/file` inside its memory files (relative to the importing file,
`~/` for the home folder, absolute paths too), up to five hops deep, and not inside Markdown
code spans or fenced code blocks. A token that names no file (`@octocat`, `@types/node`) is
just text. Standard library only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MAX_DEPTH = 5  # hops from a file found in its place, as Claude Code
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_TRAILING = ".,;:!?)]}'\""


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans blanked."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append(_CODE_SPAN.sub(" ", line))
    return lines


def import_tokens(text: str) -> list[str]:
    """The `@...` tokens of `text` in order, once each (without the `@`)."""
    found: list[str] = []
    for line in _prose_lines(text):
        for match in _IMPORT.finditer(line):
            token = match.group(1).replace("\\ ", " ")
            if token not in found:
                found.append(token)
    return found


def candidate_paths(token: str, folder: Path) -> list[Path]:
    """Where `@token` may point, most literal first: as written, then without trailing
    punctuation (`see @README.md.`)."""
    spellings = [token]
    stripped = token.rstrip(_TRAILING)
    if stripped and stripped != token:
        spellings.append(stripped)
    paths = []
    for spelling in spellings:
        expanded = os.path.expanduser(spelling) if spelling.startswith("~/") else spelling
        paths.append(Path(expanded) if os.path.isabs(expanded) else folder / expanded)
    return paths
