"""How the loop's tool calls look to an editor: ACP kind, title, locations and content.

Pure functions over names and arguments (no connection), so the live stream and the replay
of a saved session present a call the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from acp.schema import ToolCallLocation, ToolKind

from agentica_cli.app.permissions.approvals import COMMAND_KEYS, EDIT_TOOLS, PATH_KEYS

KINDS: dict[str, ToolKind] = {
    "ls": "read",
    "read_file": "read",
    "read_background_output": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "multi_edit_file": "edit",
    "glob": "search",
    "grep": "search",
    "web_search": "search",
    "execute": "execute",
    "stop_background": "execute",
    "fetch_url": "fetch",
    "write_todos": "think",
    "task": "think",
}
TITLE_VERBS = {"read": "Read", "edit": "Edit", "search": "Search", "fetch": "Fetch"}
RESULT_CHARS = 20_000  # of a tool's result shown in the editor (the model gets it all)


def tool_kind(name: str) -> ToolKind:
    return KINDS.get(name, "other")


def _path_arg(args: dict[str, Any]) -> str | None:
    for key in PATH_KEYS:
        if isinstance(args.get(key), str) and args[key]:
            return args[key]
    return None


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tool_title(name: str, args: dict[str, Any]) -> str:
    """A short human title: "Read src/app.py", "Run `pytest -q`", "grep TODO in src"."""
    path = _path_arg(args)
    if name == "execute":
        command = next((args[k] for k in COMMAND_KEYS if isinstance(args.get(k), str)), "")
        return f"Run `{_one_line(command)}`" + (" (outside the sandbox)" if args.get("sandbox") is False else "")
    if name in ("grep", "glob"):
        where = f" in {args['path']}" if isinstance(args.get("path"), str) and args["path"] not in ("", ".") else ""
        return f"{name} {_one_line(str(args.get('pattern', '')), 60)}{where}"
    if name == "write_file":
        return f"Write {path}" if path else "Write file"
    if name == "ls":
        return f"List {args.get('path') or '.'}"
    if name == "fetch_url" and isinstance(args.get("url"), str):
        return f"Fetch {_one_line(args['url'])}"
    if name == "web_search" and isinstance(args.get("query"), str):
        return f"Web search: {_one_line(args['query'])}"
    if name == "write_todos":
        return "Update the plan"
    if name == "task":
        return f"Sub-agent: {_one_line(str(args.get('description') or args.get('prompt') or ''), 60)}"
    verb = TITLE_VERBS.get(tool_kind(name))
    if verb and path:
        return f"{verb} {path}"
    return name


def absolute(path: str, work_dir: Path) -> str:
    """ACP paths are absolute; the model's may be relative to the work folder or use ~."""
    expanded = os.path.expanduser(path)
    return os.path.normpath(expanded if os.path.isabs(expanded) else os.path.join(work_dir, expanded))


def tool_locations(name: str, args: dict[str, Any], work_dir: Path) -> list[ToolCallLocation] | None:
    """The files a call touches, for "follow the agent" in the editor."""
    path = _path_arg(args)
    if path is None:
        return None
    line = args.get("offset") if name == "read_file" and isinstance(args.get("offset"), int) else None
    return [ToolCallLocation(path=absolute(path, work_dir), line=line)]


def is_edit(name: str) -> bool:
    return name in EDIT_TOOLS


def plan_entries(args: dict[str, Any]) -> list[Any] | None:
    """write_todos' list as ACP plan entries (None when the arguments are not a list)."""
    from acp import plan_entry

    todos = args.get("todos")
    if not isinstance(todos, list):
        return None
    entries = []
    for todo in todos:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            status = todo.get("status") if todo.get("status") in ("pending", "in_progress", "completed") else "pending"
            entries.append(plan_entry(todo["content"], status=status))
    return entries


def result_text(result: str) -> str:
    if len(result) <= RESULT_CHARS:
        return result
    return result[:RESULT_CHARS] + f"\n… [{len(result) - RESULT_CHARS:,} more characters]"


def fenced(text: str) -> str:
    """Text in a Markdown code fence long enough that the text cannot close it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"


def raw_arguments(args: Any) -> Any:
    """Arguments as JSON-able data (they came from JSON, but a repaired string may be left)."""
    try:
        json.dumps(args)
        return args
    except (TypeError, ValueError):
        return str(args)
