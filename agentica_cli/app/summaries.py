"""One-line descriptions of tool calls and their results, shared by the REPL and -p output.

`read_file calc.py`, `execute pytest -q`, then `12 lines read`, `read lines 1–2,000 of 5,000`,
`exit code 1, 37 lines of output`, `3 lines of matches`. Everything returned here is safe to
print (`safe_text`): the model controls the arguments, a tool or server the results.
Pure string work: no rich, no agent imports.
"""

from __future__ import annotations

import re
from typing import Any

from agentica_cli.app.safe_text import safe_text

# Which argument best says what a call does, in order of preference.
_MAIN_ARGS = (
    "command",
    "file_path",
    "pattern",
    "path",
    "query",
    "url",
    "description",
    "prompt",
    "name",
)
_NUMBERED = re.compile(r"^\s*\d+\t")  # read_file's "   12<TAB>text" lines
_FOOTER = re.compile(r"^[\[(].*[\])]$")  # "[3 entries in .]", "(end of file: ...)"
_EXIT_CODE = re.compile(r"exit(?:ed with)?(?: code|_code|\s+status)?[:= ]\s*(-?\d+)", re.IGNORECASE)
_STREAM_LABEL = re.compile(r"^--- (stdout|stderr)(?: \(.*\))? ---$")  # execute's section headers
_OMITTED = re.compile(r"^\[\.\.\. (\d+) lines omitted \.\.\.\]$")  # output_capture's cut marker
_EXECUTE_NOTE = re.compile(r"^\[background processes ")  # execute's own notes after the output
# read_file's footer for a part of a file: "(lines 1-2,000 of 5,000 shown; ...)",
# "(end of file: lines 4,001-5,000 of 5,000 shown)", "of about 5,000" when estimated.
_READ_PAGE = re.compile(r"^\((?:end of file: )?lines ([\d,]+)-([\d,]+) of ((?:about )?[\d,]+) shown")


def shorten(text: str, width: int = 80) -> str:
    """One line of at most `width` characters, with every terminal control made visible."""
    text = safe_text(" ".join(str(text).split()), keep_newlines=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def summarize_call(name: str, args: dict[str, Any] | None, width: int = 80) -> str:
    """`read_file calc.py`: the tool and its most telling argument."""
    args = args or {}
    for key in _MAIN_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value:
            extra = ""
            if key == "pattern" and isinstance(args.get("path"), str) and args["path"] not in ("", "."):
                extra = f" in {args['path']}"
            return shorten(f"{name} {value}{extra}", width)
    if "todos" in args and isinstance(args["todos"], list):
        return shorten(f"{name} ({len(args['todos'])} items)", width)
    parts = [f"{k}={v!r}" if not isinstance(v, str) else f"{k}={shorten(v, 30)}" for k, v in args.items()]
    return shorten(f"{name} {' '.join(parts)}".strip(), width)


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _count_lines(text: str) -> int:
    return 0 if not text else text.count("\n") + (0 if text.endswith("\n") else 1)


def summarize_result(name: str, result: str, status: str = "ok", error: str | None = None) -> str:
    """`12 lines`, `exit code 1`, `denied: ...`: what came back, in a few words."""
    if status == "denied":
        return "denied" + (f": {shorten(result, 70)}" if result else "")
    if status == "cancelled":
        return "cancelled"
    if status in ("error", "malformed", "unknown_tool", "blocked", "limit") or error:
        return shorten(error or result or status, 100)
    text = result or ""
    lowered = name.lower()
    if lowered in ("execute", "bash", "shell", "run_command") or "exit code" in text[:200].lower():
        match = _EXIT_CODE.search(text[:200])
        if match:
            return f"exit code {match.group(1)}, " + _output_summary(text)
    content = [line for line in text.splitlines() if line.strip() and not _FOOTER.match(line)]
    if lowered in ("grep", "search", "search_code"):
        if not content or text.strip().lower().startswith(("no match", "(no match")):
            return "no matches"
        return plural(len(content), "line") + " of matches"
    if lowered in ("glob", "ls", "list_dir", "list_files"):
        return plural(len(content), "entry", "entries")
    if lowered in ("read_file", "read"):
        page = _READ_PAGE.match(text.rstrip().rsplit("\n", 1)[-1])
        if page:  # a part of the file: say which part, not just how many lines
            first, last, total = page.groups()
            return f"read lines {first}–{last} of {total}"
        numbered = sum(1 for line in text.splitlines() if _NUMBERED.match(line))
        return plural(numbered or _count_lines(text), "line") + " read"
    if lowered in ("edit_file", "multi_edit_file", "write_file"):
        return _edit_summary(text)
    if not text.strip():
        return "done"
    first = text.strip().splitlines()[0]
    lines = _count_lines(text.strip())
    return shorten(first, 80) + (f" (+{lines - 1} lines)" if lines > 1 else "")


class CommandOutput:
    """What a command printed, read back from execute's result: its lines (both streams, the
    labels left out), how many lines it printed in all, and how much of it the model got when
    the output was cut (`[... N lines omitted ...]` between a head and a tail)."""

    def __init__(self, result: str):
        self.lines: list[str] = []
        self.omitted_lines = 0
        self.kept_chars: list[tuple[int, int]] = []  # (head, tail) characters of each cut stream
        head: int | None = None
        section: list[str] = []
        for line in (result or "").splitlines()[1:]:  # after the "[exit code N; 0.4 s]" line
            if _STREAM_LABEL.match(line) or _EXECUTE_NOTE.match(line) or line == "(no output)":
                self._end_section(head, section)
                head, section = None, []
                continue
            omitted = _OMITTED.match(line)
            if omitted:
                self.omitted_lines += int(omitted.group(1))
                head, section = _chars(section), []
                continue
            section.append(line)
            self.lines.append(line)
        self._end_section(head, section)

    def _end_section(self, head: int | None, section: list[str]) -> None:
        if head is not None:
            self.kept_chars.append((head, _chars(section)))

    @property
    def printed_lines(self) -> int:
        return len(self.lines) + self.omitted_lines

    @property
    def cut(self) -> bool:
        return bool(self.kept_chars)


def _chars(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _output_summary(result: str) -> str:
    """`37 lines of output`, or for a cut output what was printed and what the model got:
    `printed 20,000 lines; the model got the first and last 15,000 characters`."""
    output = CommandOutput(result)
    if not output.cut:
        return plural(len(output.lines), "line") + " of output" if output.lines else "no output"
    head = sum(h for h, _ in output.kept_chars)
    tail = sum(t for _, t in output.kept_chars)
    got = (f"the first and last {_round(head)} characters" if _round(head) == _round(tail)
           else f"the first {_round(head)} and last {_round(tail)} characters")
    return f"printed {output.printed_lines:,} lines; the model got {got}"


def _round(chars: int) -> str:
    """15,000 rather than 14,987: the cut lands on a line boundary near the budget."""
    return f"{round(chars, -3):,}" if chars >= 10_000 else f"{chars:,}"


def _edit_summary(text: str) -> str:
    """`Edited x.py: 1 replacement. (+1 -1)`: the first line and the size of the diff below it."""
    lines = text.strip().splitlines()
    if not lines:
        return "done"
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    size = f" (+{added} -{removed})" if added or removed else ""
    return shorten(lines[0], 80) + size


def format_elapsed(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
