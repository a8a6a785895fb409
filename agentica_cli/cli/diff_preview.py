"""What an edit call would do to its file, as a unified diff: shown in the approval question
and under the finished call."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from agentica_cli.cli.approvals import edit_path, resolve_edit_path


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
    diff = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
    return text or "(no change)"
