"""What an edit call would do to its file, as a unified diff: shown in the approval question
and under the finished call.

`preview_edit` gives the diff as text, a plain unified diff (`--- /dev/null` for a new file)
with every terminal control in the paths and lines made visible (`safe_text`): the model
wrote them, and an escape sequence could otherwise hide an added line. `render_diff` draws it
for the terminal with old/new line numbers in a gutter and red/green lines.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentica_cli.app.edit_preview import edited_text, preview_edit
from agentica_cli.app.safe_text import safe_text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

__all__ = ["edited_text", "preview_edit", "render_diff"]  # the diff itself is app/edit_preview.py's

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def render_diff(text: str, *, max_lines: int | None = None) -> RenderableType:
    """`text` from `preview_edit` for the terminal: each line with its old and new line
    numbers in a gutter, removals red, additions green, hunk headers cyan. A line wider than
    the terminal continues on the next row inside its column. Past `max_lines`, a
    `… N more diff lines` line."""
    lines = safe_text(text).rstrip("\n").split("\n")  # safe already when it comes from preview_edit
    extra = 0
    if max_lines is not None and len(lines) > max_lines:
        lines, extra = lines[:max_lines], len(lines) - max_lines
    return _DiffView(_numbered(lines), extra)


def _numbered(lines: list[str]) -> list[tuple[str, str, str, str]]:
    """(old number, new number, line, style) for each diff line."""
    rows = []
    old = new = 0
    for line in lines:
        hunk = _HUNK.match(line)
        if line.startswith(("--- ", "+++ ")) and not hunk and old == new == 0:
            rows.append(("", "", line, "bold"))
        elif hunk:
            old, new = int(hunk.group(1)), int(hunk.group(2))
            rows.append(("", "", line, "cyan"))
        elif line.startswith("-"):
            rows.append((str(old), "", line, "red"))
            old += 1
        elif line.startswith("+"):
            rows.append(("", str(new), line, "green"))
            new += 1
        elif line.startswith("\\"):  # "\ No newline at end of file"
            rows.append(("", "", line, "dim"))
        else:
            rows.append((str(old) if old else "", str(new) if new else "", line, ""))
            old, new = old + 1, new + 1
    return rows


class _DiffView:
    """The numbered diff, laid out by hand: a rich Table takes ~0.4 ms a row, too slow for
    the whole diff of a new 2,000-line file in an approval question."""

    def __init__(self, rows: list[tuple[str, str, str, str]], extra: int):
        self.rows = rows
        self.extra = extra

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.cells import chop_cells
        from rich.text import Text

        new_file = bool(self.rows) and self.rows[0][2] == "--- /dev/null"  # no old lines: one number column
        width = max((len(n) for old, new, _, _ in self.rows for n in (old, new)), default=1)
        columns = 1 if new_file else 2
        gutter = columns * (width + 1)
        room = max(10, options.max_width - gutter)
        blank = " " * gutter
        for old, new, line, style in self.rows:
            numbers = f"{new:>{width}} " if new_file else f"{old:>{width}} {new:>{width}} "
            for index, piece in enumerate(chop_cells(line, room) or [""]):
                row = Text(numbers if index == 0 else blank, style="dim")
                row.append(piece, style=style)
                row.no_wrap = True
                yield row
        if self.extra:
            yield Text(f"… {self.extra} more diff lines", style="dim")
