"""Plain terminal lines for the REPL, before rich is imported (or when it is not needed)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def quiet_attributes(saved: list[Any], *, keep_enter: bool = False) -> list[Any]:
    """`saved` (termios.tcgetattr) with no echo and no line editing, reading key by key;
    `keep_enter`: Enter stays a carriage return (ICRNL off) instead of becoming Ctrl-J."""
    import termios

    quiet = list(saved)
    if keep_enter:
        quiet[0] &= ~termios.ICRNL
    quiet[3] &= ~(termios.ECHO | termios.ECHOCTL | termios.ICANON)
    quiet[6] = list(quiet[6])
    quiet[6][termios.VMIN] = 1
    quiet[6][termios.VTIME] = 0
    return quiet


@contextmanager
def typeahead_kept() -> Iterator[None]:
    """Keys typed while the input line is not reading wait for the next prompt as typed.

    Outside prompt_toolkit's raw mode (a command running between two prompts, start-up, a
    hook's output printed above the prompt) the terminal is in its ordinary (cooked) mode: it
    would echo the keys into the output, and its ICRNL turns Enter into a newline (Ctrl-J),
    which the input line takes as "new line", not "send" (`/undo`, then `is add fixed?` and
    Enter typed before it is done, left a two-line draft). So, for the whole session: no echo,
    no line editing by the terminal, Enter kept as Enter; prompt_toolkit returns to these
    settings between prompts, and the next prompt reads the keys as if typed there. A turn's
    own reader (turn_input.TurnInput) starts from them and puts them back.
    """
    try:
        import termios
    except ImportError:  # Windows
        yield
        return
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):  # not a terminal
        yield
        return
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet_attributes(saved, keep_enter=True))
    except termios.error:
        yield
        return
    _ORDINARY.append(saved)
    try:
        yield
    finally:
        _ORDINARY.pop()
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except termios.error:
            pass


_ORDINARY: list[Any] = []  # the terminal's own settings, while typeahead_kept holds it


@contextmanager
def ordinary_terminal() -> Iterator[None]:
    """The terminal's own settings back for a program that reads it (the Ctrl-G editor: a
    line-oriented one needs the terminal's echo and line editing), then held again."""
    if not _ORDINARY:
        yield
        return
    import termios

    fd = sys.stdin.fileno()
    try:
        held = termios.tcgetattr(fd)
        termios.tcsetattr(fd, termios.TCSANOW, _ORDINARY[-1])
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, held)
        except termios.error:
            pass
