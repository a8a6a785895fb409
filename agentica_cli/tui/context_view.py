"""`/context` on the terminal: the parts of the context window (session_views.context_usage) as
one bar across the window and a table of tokens, then what `/compact` would free.

Each part has its own mark in the bar (and its colour, unless NO_COLOR), so the bar reads in
a terminal without colour too; `·` is the room left.
"""

from __future__ import annotations

import sys

from agentica_cli.app.session_views.context_usage import ContextUsage
from agentica_cli.tui.terminal import COLOR, RESET, plain
from agentica_cli.tui.wrapping import terminal_columns

MARKS = [("█", "36"), ("▓", "35"), ("▒", "34"), ("▚", "33"), ("▞", "32"), ("▤", "31"), ("▥", "96"), ("▦", "95")]
FREE = "·"


def bar(usage: ContextUsage, width: int) -> str:
    """The window as `width` cells: each part's share in its mark, the rest free. A part too
    small for a whole cell still gets one, so nothing present is invisible."""
    window = max(usage.window, 1)
    cells: list[str] = []
    for index, part in enumerate(usage.parts):
        if part.tokens <= 0:
            continue
        count = max(1, round(part.tokens * width / window))
        mark, code = MARKS[index % len(MARKS)]
        cells.append(f"\x1b[{code}m{mark * count}{RESET}" if COLOR else mark * count)
    used = sum(max(1, round(p.tokens * width / window)) for p in usage.parts if p.tokens > 0)
    return "".join(cells) + FREE * max(width - used, 0)


def show_context(usage: ContextUsage) -> None:
    columns = terminal_columns(80) or 80
    percent = 100 * usage.used / max(usage.window, 1)
    plain(f"context: about {usage.used:,} of {usage.window:,} tokens ({percent:.0f}%), {usage.free:,} free", "1",
          hang=9)
    if usage.reported_tokens:
        plain(f"  the last request: {usage.reported_tokens:,} tokens, as the provider counted them", "2", hang=4)
    # The bar is written as is (plain would show its colour codes as text): its width fits by construction.
    sys.stdout.write("  " + bar(usage, max(10, min(60, columns - 4))) + "\n")
    sys.stdout.flush()
    label_width = max(len(part.label) for part in usage.parts) if usage.parts else 10
    for index, part in enumerate(usage.parts):
        share = 100 * part.tokens / max(usage.window, 1)
        mark = MARKS[index % len(MARKS)][0] if part.tokens > 0 else " "
        detail = f"  {part.detail}" if part.detail else ""
        plain(f"  {mark} {part.label:<{label_width}} {part.tokens:>9,} {share:5.1f}%{detail}",
              hang=label_width + 24)
    plain(f"  {FREE} {'free':<{label_width}} {usage.free:>9,} {100 * usage.free / max(usage.window, 1):5.1f}%")
    if usage.compact_frees:
        plain(f"/compact would free about {usage.compact_frees:,} tokens (a summary replaces all but the last "
              f"{usage.compact_keeps} messages).", "2")
    else:
        plain("/compact would free nothing yet: the conversation is short.", "2")
