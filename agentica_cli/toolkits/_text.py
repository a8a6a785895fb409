"""Compact, token-lean result text shared by the toolkits."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def squash(text: Any, limit: int = 0) -> str:
    """One line: whitespace runs collapsed, cut at `limit` characters with an ellipsis (0: no cut)."""
    line = " ".join(str(text or "").split())
    if limit and len(line) > limit:
        return line[: limit - 1].rstrip() + "…"
    return line


def clip(text: str, limit: int, hint: str = "") -> str:
    """Cut a long text at `limit` characters and say how much was left out."""
    if len(text) <= limit:
        return text
    note = f"\n\n[truncated: {limit:,} of {len(text):,} characters shown{'; ' + hint if hint else ''}]"
    return text[:limit].rstrip() + note


def numbered_results(items: Iterable[dict[str, Any]], snippet_chars: int = 300) -> str:
    """`1. Title\\n   url\\n   snippet` per item (keys: title, url, snippet, extra)."""
    lines = []
    for number, item in enumerate(items, start=1):
        title = squash(item.get("title"), 200) or "(no title)"
        extra = squash(item.get("extra"), 120)
        block = f"{number}. {title}" + (f" ({extra})" if extra else "")
        if item.get("url"):
            block += f"\n   {item['url']}"
        snippet = squash(item.get("snippet"), snippet_chars)
        if snippet:
            block += f"\n   {snippet}"
        lines.append(block)
    return "\n".join(lines)


def clamp(value: int | None, default: int, cap: int) -> int:
    """A count asked for by the model, within 1..cap (default when not given)."""
    if value is None:
        return max(1, min(default, cap))
    return max(1, min(int(value), cap))
