"""Plain terminal lines for the REPL, before rich is imported (or when it is not needed)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def keys_not_echoed() -> Iterator[None]:
    """While a turn renders its live area, the terminal must not echo what is typed (a `^C`
    at the end of a full line scrolls the screen and leaves part of the live area behind).
    Signals still work, and type-ahead stays queued for the next prompt."""
    try:
        import termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):  # not a terminal (or not POSIX): nothing to do
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ECHOCTL)
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except termios.error:
            pass
