"""YAML front matter of Markdown files (commands, agents, skills): the small subset they use.

    ---
    description: Review the staged diff
    allowed-tools: Bash(git diff:*), Read
    tools: [read_file, grep]
    argument-hint: [file] [focus]
    ---
    body...

Supported: `key: value` scalars (quoted or not; true/false become booleans), flow lists
`[a, b]`, block lists (`key:` then `- item` lines), block scalars (`key: |` / `key: >`), and
`#` comment lines. Anything else is a FrontMatterError naming the line: PyYAML is not a
dependency, and these files never need more.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$")


class FrontMatterError(ValueError):
    """Front matter that cannot be read; str() names the line."""


def split(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body). A file without a leading `---` line has none."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            return parse(lines[1:end], first_line=2), "\n".join(lines[end + 1:]).strip()
    raise FrontMatterError("the front matter opened with '---' is never closed")


def parse(lines: list[str], first_line: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        number = first_line + i
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line.rstrip())
        if match is None or line[0].isspace():
            raise FrontMatterError(f"line {number}: expected 'key: value', got {line.strip()!r}")
        key, raw = match.group(1), (match.group(2) or "").strip()
        if raw in ("|", ">", "|-", ">-", "|+", ">+"):
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0].isspace()):
                block.append(lines[i].strip())
                i += 1
            data[key] = ("\n" if raw.startswith("|") else " ").join(block).strip()
        elif raw == "":
            items: list[Any] = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(_scalar(lines[i].strip()[2:].strip()))
                i += 1
            data[key] = items if items else ""
        else:
            data[key] = _value(raw)
    return data


def _value(raw: str) -> Any:
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        return [_scalar(part.strip()) for part in _split_commas(inner)] if inner else []
    return _scalar(raw)


def _split_commas(text: str) -> list[str]:
    """Split on commas outside quotes and parentheses (`Bash(git add:*), Read`)."""
    parts, depth, quote, current = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return [p for p in (p.strip() for p in parts) if p]


def _scalar(raw: str) -> Any:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if " #" in raw:  # a trailing comment
        raw = raw.split(" #", 1)[0].rstrip()
    lowered = raw.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if lowered in ("null", "~"):
        return None
    return raw


def as_list(value: Any) -> list[str] | None:
    """A list field written either way: `tools: Read, Grep` or `tools: [Read, Grep]`; None if absent."""
    if value is None or value == "":
        return None
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return _split_commas(str(value))
