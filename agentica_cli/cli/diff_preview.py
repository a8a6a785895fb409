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
    from rich.console import RenderableType

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


def preview_edit(name: str, args: dict[str, Any], work_dir: Path) -> str | None:
    """A unified diff of what an edit call would do to the file, or None if not an edit."""
    path = edit_path(name, args)
    if path is None:
        return None
    full = resolve_edit_path(path, work_dir)
    before = _read_text(full) if full.exists() else ""
    if before is None:
        return None
    content = _first(args, "content", "file_text", "text")
    after: str | None = None
    if isinstance(content, str):
        after = content
    else:
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
        if pairs:
            after = before
            for old, new, replace_all in pairs:
                if not old or old not in after:
                    return None  # the edit will fail: show the arguments as given, not an empty diff
                after = after.replace(old, new) if replace_all else after.replace(old, new, 1)
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
    numbers in a gutter, removals red, additions green, hunk headers cyan. Lines wider than
    the terminal wrap inside their column. Past `max_lines`, a `… N more diff lines` line."""
    from rich.table import Table
    from rich.text import Text

    lines = safe_text(text).rstrip("\n").split("\n")  # safe already when it comes from preview_edit
    extra = 0
    if max_lines is not None and len(lines) > max_lines:
        lines, extra = lines[:max_lines], len(lines) - max_lines
    starts = [max(int(m.group(1)), int(m.group(2))) for m in map(_HUNK.match, lines) if m]
    width = len(str(max(starts, default=1) + len(lines)))  # the gutter fits the largest number
    new_file = lines[0] == "--- /dev/null"  # no old lines: one number column is enough
    table = Table.grid(padding=(0, 1))
    if not new_file:
        table.add_column(justify="right", style="dim", no_wrap=True, min_width=width)
    table.add_column(justify="right", style="dim", no_wrap=True, min_width=width)
    table.add_column(overflow="fold")

    def add(old_number: str, new_number: str, line: Text) -> None:
        table.add_row(*([new_number, line] if new_file else [old_number, new_number, line]))

    old = new = 0
    for line in lines:
        hunk = _HUNK.match(line)
        if line.startswith(("--- ", "+++ ")) and not hunk and old == new == 0:
            add("", "", Text(line, style="bold"))
        elif hunk:
            old, new = int(hunk.group(1)), int(hunk.group(2))
            add("", "", Text(line, style="cyan"))
        elif line.startswith("-"):
            add(str(old), "", Text(line, style="red"))
            old += 1
        elif line.startswith("+"):
            add("", str(new), Text(line, style="green"))
            new += 1
        elif line.startswith("\\"):  # "\ No newline at end of file"
            add("", "", Text(line, style="dim"))
        else:
            add(str(old) if old else "", str(new) if new else "", Text(line))
            old, new = old + 1, new + 1
    if not extra:
        return table
    from rich.console import Group

    return Group(table, Text(f"… {extra} more diff lines", style="dim"))

