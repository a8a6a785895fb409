"""What an edit call would do to its file, as a unified diff: shown in the approval question
and under the finished call.

`preview_edit` gives the diff as text, a plain unified diff (`--- /dev/null` for a new file)
with every terminal control in the paths and lines made visible (`safe_text`): the model
wrote them, and an escape sequence could otherwise hide an added line. `render_diff` draws it
for the terminal with old/new line numbers in a gutter and red/green lines.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.cli.approvals import edit_path, resolve_edit_path
from agentica_cli.cli.safe_text import safe_text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _first(args: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in args:
            return args[key]
    return None


def edited_text(args: dict[str, Any], before: str) -> str | None:
    """The file's text after an edit call with `args` (write: its content; edits: the
    replacements in order), or None when the edit would fail or is not an edit."""
    content = _first(args, "content", "file_text", "text")
    if isinstance(content, str):
        return content
    edits = args.get("edits")
    pairs: list[tuple[str, str, bool]] = []
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                old = _first(edit, "old_string", "old_str", "old_text", "old")
                new = _first(edit, "new_string", "new_str", "new_text", "new")
                if isinstance(old, str) and isinstance(new, str):
                    pairs.append((old, new, bool(edit.get("replace_all"))))
    else:
        old = _first(args, "old_string", "old_str", "old_text", "old")
        new = _first(args, "new_string", "new_str", "new_text", "new")
        if isinstance(old, str) and isinstance(new, str):
            pairs.append((old, new, bool(args.get("replace_all"))))
    if not pairs:
        return None
    after = before
    for old, new, replace_all in pairs:
        if not old or old not in after:
            return None  # the edit will fail: show the arguments as given, not an empty diff
        after = after.replace(old, new) if replace_all else after.replace(old, new, 1)
    return after


def preview_edit(name: str, args: dict[str, Any], work_dir: Path) -> str | None:
    """A unified diff of what an edit call would do to the file, or None if not an edit."""
    path = edit_path(name, args)
    if path is None:
        return None
    full = resolve_edit_path(path, work_dir)
    before = _read_text(full) if full.exists() else ""
    if before is None:
        return None
    after = edited_text(args, before)
    if after is None:
        return None
    shown = safe_text(path, keep_newlines=False)
    old_name = f"a/{shown}" if full.exists() else "/dev/null"
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), old_name, f"b/{shown}"
    )
    text = "".join(_display_line(line) for line in diff)
    return text or "(no change)"


def _display_line(line: str) -> str:
    """One diff line, safe to print: its own line ending (LF or CRLF) becomes one newline,
    any other control character is shown."""
    body = line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith("\n") else line
    return safe_text(body, keep_newlines=False) + "\n"


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
