"""Lines of text fitted to the terminal by display width, without rich.

Two ways, each for one kind of text:
- `wrap_line`: prose (a question, a help table, a notice, a replayed answer) breaks between
  words, and continuation rows start under the text, not at column 0 (`hang`). CJK text has
  no spaces: it may break between any two wide characters, as a browser does.
- `fit_line`: a line of a program's output, shown on one row under an indent. pytest pads its
  lines to the terminal's 80 columns (`tests/test_x.py ....   [100%]`); with our indent the
  row would overflow and the terminal would put `[100%]` alone on the next row. The padding
  (runs of spaces) is squeezed first; only a line still too wide is cut, ending in `…`.

Widths are terminal cells (`wcwidth`): a CJK character takes two.
"""

from __future__ import annotations

import os
import re
import sys

from wcwidth import wcswidth, wcwidth

_SPACE_RUN = re.compile(r" {2,}")
ELLIPSIS = "…"


def cell_width(text: str) -> int:
    width = wcswidth(text)
    if width >= 0:
        return width
    return sum(max(wcwidth(char), 0) for char in text)  # a character wcswidth cannot size counts as 0


def terminal_columns(default: int = 0) -> int:
    """The terminal's width now (asked of the terminal, never COLUMNS: a shell exports COLUMNS
    once and the window changes after); `default` when stdout is not a terminal."""
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return default


def _is_wide(char: str) -> bool:
    return wcwidth(char) == 2


def _pieces(text: str) -> list[str]:
    """`text` cut where a line may break: words with the spaces after them, and each wide
    (CJK) character on its own, since CJK text breaks between characters."""
    pieces: list[str] = []
    current = ""
    for char in text:
        if _is_wide(char):
            if current:
                pieces.append(current)
                current = ""
            pieces.append(char)
        elif char == " " and current and not current.endswith(" "):
            current += char
        elif current.endswith(" ") and char != " ":
            pieces.append(current)
            current = char
        else:
            current += char
    if current:
        pieces.append(current)
    return pieces


def _hard_split(word: str, room: int) -> list[str]:
    """A word wider than a whole row (a long path, a URL): cut into row-sized parts."""
    parts: list[str] = []
    current, width = "", 0
    for char in word:
        w = max(wcwidth(char), 0)
        if current and width + w > room:
            parts.append(current)
            current, width = "", 0
        current += char
        width += w
    if current:
        parts.append(current)
    return parts


def wrap_line(line: str, width: int, hang: int | None = None) -> list[str]:
    """`line` broken between words into rows of at most `width` cells. Continuation rows are
    indented by `hang` (default: the line's own leading spaces). width <= 0: not wrapped."""
    if width <= 0 or cell_width(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip(" "))
    if hang is None:
        hang = lead
    if hang > width // 2:  # a deep indent on a narrow terminal: keep room for the words
        hang = min(lead, width // 4)
    rows: list[str] = []
    row, row_width = line[:lead], lead
    for piece in _pieces(line[lead:]):
        piece_width = cell_width(piece.rstrip(" "))
        if row_width + piece_width > width and row.strip():
            rows.append(row.rstrip(" "))
            row, row_width = " " * hang, hang
        room = width - row_width
        if piece_width > room:  # wider than what is left of an empty row
            *whole, rest = _hard_split(piece.rstrip(" "), max(room, 1))
            for part in whole:
                rows.append(row + part)
                row, row_width = " " * hang, hang
            piece = rest + (" " if piece.endswith(" ") else "")
        row += piece
        row_width += cell_width(piece)
    if row.strip():
        rows.append(row.rstrip(" "))
    return rows


def wrap_text(text: str, width: int, hang: int | None = None) -> str:
    """Every line of `text` wrapped by `wrap_line` (`hang` for the first line; the others
    hang under their own indent)."""
    out: list[str] = []
    for number, line in enumerate(text.split("\n")):
        out += wrap_line(line.expandtabs(), width, hang if number == 0 else None)
    return "\n".join(out)


def fit_line(line: str, room: int) -> str:
    """One row of a program's output in `room` cells: padding squeezed, then cut with `…`."""
    if room <= 0 or cell_width(line) <= room:
        return line
    line = line.rstrip()
    excess = cell_width(line) - room
    while excess > 0:
        runs = list(_SPACE_RUN.finditer(line))
        if not runs:
            break
        longest = max(runs, key=lambda m: len(m.group()))
        cut = min(excess, len(longest.group()) - 1)
        line = line[: longest.start()] + " " * (len(longest.group()) - cut) + line[longest.end():]
        excess -= cut
    if cell_width(line) <= room:
        return line
    kept, width = "", 0
    for char in line:
        w = max(wcwidth(char), 0)
        if width + w > room - 1:
            break
        kept += char
        width += w
    return kept + ELLIPSIS


def pack_fields(fields: list[str], width: int, separator: str = "  ·  ") -> list[str]:
    """Fields (`agentica 1.0`, `gpt-4o`, `~/src/app`, `mode default`) joined on rows of at
    most `width` cells, a row breaking only between fields; a field wider than a row wraps
    on its own. width <= 0: one row."""
    if width <= 0:
        return [separator.join(fields)]
    rows: list[str] = []
    row = ""
    for field in fields:
        joined = f"{row}{separator}{field}" if row else field
        if cell_width(joined) <= width:
            row = joined
            continue
        if row:
            rows.append(row)
        parts = wrap_line(field, width)
        rows += parts[:-1]
        row = parts[-1]
    if row:
        rows.append(row)
    return rows
