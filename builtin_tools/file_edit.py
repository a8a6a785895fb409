"""Exact-string edits on text in memory, with error messages that help the model retry."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentica_cli.tools.local.text_format import TextFormat

MAX_DIFF_LINES = 60
MAX_OCCURRENCES_LISTED = 10
# Fuzzy search for "closest candidate" lines is limited to this many lines of the file.
MAX_CANDIDATE_SCAN_LINES = 50_000


class FileEditError(ValueError):
    """An edit cannot be applied; the file was not changed."""


@dataclass(frozen=True)
class Edit:
    old_string: str
    new_string: str
    replace_all: bool = False


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrence_lines(text: str, needle: str) -> list[int]:
    lines: list[int] = []
    start = 0
    while len(lines) < MAX_OCCURRENCES_LISTED:
        index = text.find(needle, start)
        if index == -1:
            break
        lines.append(_line_of(text, index))
        start = index + len(needle)
    return lines


def _closest_candidates(text: str, old: str) -> str:
    """Where the model probably meant: the file's lines most like old_string's first line."""
    if " ".join(old.split()) and " ".join(old.split()) in " ".join(text.split()):
        hint = "old_string matches only if whitespace is ignored: copy indentation and line breaks exactly"
    else:
        hint = ""
    needle = next((line.strip() for line in old.splitlines() if line.strip()), "")
    lines = text.splitlines()[:MAX_CANDIDATE_SCAN_LINES]
    stripped = [line.strip() for line in lines]
    best = difflib.get_close_matches(needle, stripped, n=3, cutoff=0.5) if needle else []
    shown: list[str] = []
    old_line_count = max(1, min(len(old.splitlines()), 8))
    for rank, match in enumerate(best):
        number = stripped.index(match)
        span = old_line_count if rank == 0 else 1
        for offset in range(span):
            if number + offset < len(lines):
                shown.append(f"{number + offset + 1:6d}\t{lines[number + offset].rstrip(chr(13))}")
        if rank == 0 and len(best) > 1:
            shown.append("   ...")
    parts = [hint] if hint else []
    if shown:
        parts.append("Closest lines in the file:\n" + "\n".join(shown))
    else:
        parts.append("No similar lines found; read_file the file to see its current content.")
    return "\n".join(parts)


def apply_edit(text: str, fmt: TextFormat, edit: Edit) -> tuple[str, int]:
    """Apply one edit to `text`; returns (new text, replacements) or raises FileEditError."""
    old, new = edit.old_string, edit.new_string
    if old == "":
        raise FileEditError(
            "old_string is empty. To create or overwrite a whole file use write_file; to insert "
            "text, put an existing neighbouring line in old_string and repeat it in new_string."
        )
    if old == new:
        raise FileEditError("old_string and new_string are identical; there is nothing to change.")
    # The model writes "\n"; in a CRLF file both the match and the inserted text use "\r\n".
    variants = [fmt.adapt_newlines(old)]
    if variants[0] != old:
        variants.append(old)  # a file with mixed line endings
    for variant in variants:
        count = text.count(variant)
        if count == 0:
            continue
        if count > 1 and not edit.replace_all:
            where = ", ".join(str(n) for n in _occurrence_lines(text, variant))
            more = ", ..." if count > MAX_OCCURRENCES_LISTED else ""
            raise FileEditError(
                f"old_string occurs {count} times (at lines {where}{more}). Include more surrounding "
                "lines to make it unique, or set replace_all=true to change every occurrence."
            )
        replacement = fmt.adapt_newlines(new)
        if edit.replace_all:
            return text.replace(variant, replacement), count
        return text.replace(variant, replacement, 1), 1
    raise FileEditError("old_string was not found in the file (it must match exactly, including "
                        "whitespace).\n" + _closest_candidates(text, old))


def apply_edits(text: str, fmt: TextFormat, edits: Sequence[Edit]) -> tuple[str, int]:
    """All edits in order, in memory; the first failure aborts the whole batch."""
    total = 0
    for number, edit in enumerate(edits, start=1):
        try:
            text, count = apply_edit(text, fmt, edit)
        except FileEditError as err:
            prefix = f"edit {number} of {len(edits)} failed; no edits were applied, the file is unchanged. "
            raise FileEditError(prefix + str(err)) from None
        total += count
    return text, total


def short_diff(before: str, after: str, shown: str) -> str:
    """A unified diff of the change, capped; the unchanged head and tail are skipped cheaply."""
    old_lines = before.replace("\r\n", "\n").split("\n")
    new_lines = after.replace("\r\n", "\n").split("\n")
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(old_lines), len(new_lines)) - head
        and old_lines[-1 - tail] == new_lines[-1 - tail]
    ):
        tail += 1
    lo = max(0, head - 3)
    old_mid = old_lines[lo : len(old_lines) - max(0, tail - 3)]
    new_mid = new_lines[lo : len(new_lines) - max(0, tail - 3)]
    diff = list(difflib.unified_diff(old_mid, new_mid, f"a/{shown}", f"b/{shown}", n=3, lineterm=""))
    diff = [_shift_hunk(line, lo) for line in diff]
    if len(diff) > MAX_DIFF_LINES:
        omitted = len(diff) - MAX_DIFF_LINES
        diff = [*diff[:MAX_DIFF_LINES], f"[... {omitted} more diff lines ...]"]
    return "\n".join(diff)


def _shift_hunk(line: str, offset: int) -> str:
    """Hunk headers from a diff of a slice, renumbered to the file's real line numbers."""
    if not line.startswith("@@") or offset == 0:
        return line

    def shift(match: re.Match[str]) -> str:
        return f"{match.group(1)}{int(match.group(2)) + offset}"

    return re.sub(r"([-+])(\d+)", shift, line, count=2)
