"""Plain terminal lines for the REPL, before rich is imported (or when it is not needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentica_cli.app.safe_text import safe_text

RESET = "\x1b[0m"
COLOR = not os.environ.get("NO_COLOR")


def plain(text: str, code: str = "", *, hang: int | None = None) -> None:
    """Print a line, coloured with an SGR code (e.g. "31" red, "2" dim) unless NO_COLOR is set.
    The text often quotes a server or a file (an MCP server's error, a session's first
    prompt): its control characters are shown, never obeyed (`safe_text`). On a terminal it
    is wrapped between words at the terminal's width, continuation rows indented by `hang`
    (default: the line's own indent) instead of cut mid-word by the terminal at column 0."""
    from agentica_cli.tui.wrapping import terminal_columns, wrap_text

    text = wrap_text(safe_text(text), terminal_columns(), hang)
    sys.stdout.write(f"\x1b[{code}m{text}{RESET}\n" if code and COLOR else text + "\n")
    sys.stdout.flush()


def home_relative(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + os.sep) else text
