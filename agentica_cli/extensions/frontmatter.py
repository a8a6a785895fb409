"""YAML front matter of Markdown files (commands, agents, skills).

    ---
    description: Review the staged diff
    allowed-tools: Bash(git diff:*), Read
    metadata:
      version: "1.0"
    ---
    body...

Parsed with PyYAML's `safe_load` (imported on first use: the REPL reads these files before its
first paint), as the rest of the ecosystem parses them. Real files are often not valid YAML: a
description with `: ` in it (`Use this agent when: ...`), `<example>` blocks pasted in. Such
front matter is read again as plain `key: value` lines (the subset below); front matter that is
neither gives empty metadata. Either way `FrontMatter.problem` says so, and the body is kept, as
Claude Code keeps it.

The subset: `key: value` scalars (quoted or not; true/false become booleans; indented lines
after one continue it), flow lists `[a, b]`, block lists (`key:` then `- item` lines), block
scalars (`key: |` / `key: >`), and `#` comment lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$")


class FrontMatterError(ValueError):
    """Front matter that cannot be read; str() names the line."""


@dataclass
class FrontMatter:
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    problem: str = ""  # why the metadata is not (all) what the file says; "" when it is


def read(text: str) -> FrontMatter:
    """Front matter and body, never raising: unreadable front matter is a `problem`."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return FrontMatter(body=text.strip())
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return FrontMatter(body=text.strip(), problem="the front matter opened with '---' is never closed; "
                                                        "the whole file is the body")
    block, body = lines[1:end], "\n".join(lines[end + 1:]).strip()
    try:
        return FrontMatter(_yaml(block), body)
    except FrontMatterError as yaml_error:
        for reader in (lambda: parse(block, first_line=2), lambda: loose(block)):
            try:
                meta = reader()
            except FrontMatterError:
                continue
            return FrontMatter(meta, body, f"the front matter is not valid YAML ({yaml_error}); "
                                           "read as plain 'key: value' lines")
        return FrontMatter({}, body, f"the front matter is not valid YAML ({yaml_error}); loaded with no metadata")


def split(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body), strictly: FrontMatterError if the front matter is not valid YAML
    or never closed (the loaders use `read`, which loads such a file anyway). A file without
    a leading `---` line has none."""
    found = read(text)
    if found.problem:
        raise FrontMatterError(found.problem)
    return found.meta, found.body


def _yaml(lines: list[str]) -> dict[str, Any]:
    import yaml  # lazily: see the module's docstring

    text = "\n".join(lines)
    try:
        # safe_load's loader, in C where libyaml is there (hundreds of agent files at start-up);
        # on an error the Python one again, whose error names the line at fault
        try:
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark is not None else ""  # + the opening '---' line
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise FrontMatterError(f"{where}{problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError(f"expected 'key: value' lines, got a {type(data).__name__}")
    # keys as strings (`1: x` or `true: y` are YAML ints and booleans); strings without the
    # newline a folded or literal block ends with
    return {str(k): v.strip() if isinstance(v, str) else v for k, v in data.items()}


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
            # indented lines after a plain value continue it (a multi-line plain scalar)
            more = []
            while i < len(lines) and lines[i].strip() and lines[i][0].isspace():
                more.append(lines[i].strip())
                i += 1
            data[key] = _value(" ".join([raw, *more])) if more else _value(raw)
    return data


# The keys Claude Code's commands, agents and skills use: in `loose` reading only these start a
# new entry, so a pasted `user: "..."` line inside a description stays in the description.
KNOWN_KEYS = frozenset({
    "name", "description", "tools", "disallowed-tools", "disallowedTools", "model", "color", "allowed-tools",
    "argument-hint", "disable-model-invocation", "user-invocable", "license", "metadata", "version", "author",
    "hooks", "skills", "permissionMode", "context", "agent", "mcpServers", "memory", "when_to_use", "category",
    "tags", "effort", "maxTurns", "arguments", "compatibility", "keywords",
})
_RAW_KEYS = ("argument-hint",)  # `[file] [focus]` is a hint, not a list


def loose(lines: list[str]) -> dict[str, Any]:
    """The last resort for front matter that is neither YAML nor the subset: each line that
    starts with a KNOWN_KEYS key (or the first `key:` line) starts an entry, and every other
    line belongs to the entry before it (the multi-line descriptions with `<example>` blocks
    that agent files carry). A one-line value is read as in the subset; a longer one is text."""
    data: dict[str, Any] = {}
    key: str | None = None
    values: list[str] = []

    def flush() -> None:
        if key is None:
            return
        text = "\n".join(values).strip()
        data[key] = _value(text) if "\n" not in text and key not in _RAW_KEYS else text

    for line in lines:
        match = _KEY.match(line.rstrip())
        if match and not line[:1].isspace() and (match.group(1) in KNOWN_KEYS or key is None):
            flush()
            key, values = match.group(1), [(match.group(2) or "").strip()]
        elif key is not None:
            values.append(line.rstrip())
    flush()
    if not data:
        raise FrontMatterError("no 'key: value' line")
    return data


def _value(raw: str) -> Any:
    if raw.startswith("[") and raw.endswith("]"):
        inner = raw[1:-1].strip()
        return [_scalar(part.strip()) for part in _split_commas(inner)] if inner else []
    return _scalar(raw)


def _split_commas(text: str) -> list[str]:
    """Split on commas outside quotes and parentheses (`Bash(git add:*), Read`)."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
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
