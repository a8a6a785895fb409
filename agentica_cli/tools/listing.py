"""A listing of named choices (sub-agents, skills) held to a share of the context window.

Hundreds of installed agents or skills would otherwise go with every request (409 agents made
the task tool's schema 513 KiB). As in Claude Code, each description is cut to a length, the
listing stops at a budget that is a small share of the model's context window, and what does
not fit stays usable by name: the tool accepts any name, and the listing says how many more
there are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DESCRIPTION_CHARS = 250  # one entry's description at most (Claude Code cuts skills' there too)
LISTING_SHARE = 0.02  # of the context window, for one listing
CHARS_PER_TOKEN = 4  # a rough figure for English text and code
MIN_LISTING_CHARS = 4_000  # a small window still lists a few
MAX_LISTING_CHARS = 16_000  # a million-token window does not make every request heavy


def listing_budget(context_window: int | None) -> int:
    """Characters one listing may take for a model with this context window (tokens)."""
    chars = int((context_window or 128_000) * LISTING_SHARE * CHARS_PER_TOKEN)
    return max(MIN_LISTING_CHARS, min(MAX_LISTING_CHARS, chars))


def short_description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """One line, at most `limit` characters (cut with an ellipsis)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


@dataclass
class Listing:
    lines: list[str]  # "name: description", in the order given
    left_out: list[str]  # the names that did not fit

    @property
    def complete(self) -> bool:
        return not self.left_out


def listing_order(items: Iterable[Any]) -> list[Any]:
    """Agents or skills in the order they are listed: a project's own first (the most specific
    to the work at hand), then the user's, each by name."""
    return sorted(items, key=lambda item: (getattr(item, "scope", "") != "project", item.name))


def fit_listing(entries: Iterable[tuple[str, str]], budget: int) -> Listing:
    """The entries (name, description) that fit in `budget` characters, in order; the rest by name."""
    lines: list[str] = []
    left_out: list[str] = []
    used = 0
    for name, description in entries:
        line = f"{name}: {short_description(description)}" if description.strip() else name
        if left_out or used + len(line) + 3 > budget:
            left_out.append(name)
            continue
        lines.append(line)
        used += len(line) + 3  # "- " and the newline
    return Listing(lines, left_out)


def matching_names(query: str, entries: Iterable[tuple[str, str]], limit: int = 10) -> list[str]:
    """Names whose name or description has every word of `query` (for a name that is not
    known): how the model finds one the listing left out."""
    import difflib

    pairs = list(entries)
    words = [w for w in query.lower().replace("-", " ").replace("_", " ").split() if w]
    found = [name for name, description in pairs
             if words and all(w in f"{name} {description}".lower() for w in words)]
    close = difflib.get_close_matches(query, [name for name, _ in pairs], n=limit, cutoff=0.6)
    return list(dict.fromkeys([*close, *found]))[:limit]
