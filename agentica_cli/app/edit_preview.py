"""What an edit call would do to its file, as a unified diff: the approval question and the
finished call show it (tui/diff_preview.py draws it), ACP sends the edited text as a diff.

Every terminal control in the paths and lines is made visible (`safe_text`): the model wrote
them, and an escape sequence could otherwise hide an added line.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from agentica_cli.app.permissions.approvals import edit_path, resolve_edit_path
from agentica_cli.app.safe_text import safe_text


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
