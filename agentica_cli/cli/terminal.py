"""Plain terminal lines for the REPL, before rich is imported (or when it is not needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

RESET = "\x1b[0m"
COLOR = not os.environ.get("NO_COLOR")


def plain(text: str, code: str = "") -> None:
    """Print a line, coloured with an SGR code (e.g. "31" red, "2" dim) unless NO_COLOR is set."""
    sys.stdout.write(f"\x1b[{code}m{text}{RESET}\n" if code and COLOR else text + "\n")
    sys.stdout.flush()


def home_relative(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + os.sep) else text
