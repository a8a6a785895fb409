"""One-line descriptions of tool calls and their results, shared by the REPL and -p output.

`read_file calc.py`, `execute pytest -q`, then `12 lines`, `exit code 1`, `3 matches`.
Pure string work: no rich, no agent imports.
"""

from __future__ import annotations

import re
from typing import Any

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


def shorten(text: str, width: int = 80) -> str:
    text = " ".join(str(text).split())
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
        return f"{name} ({len(args['todos'])} items)"
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
            body = [line for line in text.splitlines()[1:]
                    if line.strip() and line.strip() != "(no output)" and not _STREAM_LABEL.match(line)]
            return f"exit code {match.group(1)}, " + (plural(len(body), "line") + " of output" if body else "no output")
    content = [line for line in text.splitlines() if line.strip() and not _FOOTER.match(line)]
    if lowered in ("grep", "search", "search_code"):
        if not content or text.strip().lower().startswith(("no match", "(no match")):
            return "no matches"
        return plural(len(content), "line") + " of matches"
    if lowered in ("glob", "ls", "list_dir", "list_files"):
        return plural(len(content), "entry", "entries")
    if lowered in ("read_file", "read"):
        numbered = sum(1 for line in text.splitlines() if _NUMBERED.match(line))
        return plural(numbered or _count_lines(text), "line") + " read"
    if lowered in ("edit_file", "multi_edit_file", "write_file"):
        return _edit_summary(text)
    if not text.strip():
        return "done"
    first = text.strip().splitlines()[0]
    lines = _count_lines(text.strip())
    return shorten(first, 80) + (f" (+{lines - 1} lines)" if lines > 1 else "")


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
