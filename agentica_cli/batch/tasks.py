"""The tasks file of `agentica batch`: one JSON object a line,
`{"id", "prompt", "cwd"?, "repo"?, "setup"?, "check"?, "model"?, "permission_mode"?}`.

Read whole and checked before anything runs: a typo in line 200 must not surface after 199
sessions have spent their tokens. Blank lines and lines starting with `#` are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PERMISSION_MODES = ("default", "accept-edits", "auto", "plan")
FIELDS = ("id", "prompt", "cwd", "repo", "setup", "check", "model", "permission_mode")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class TaskFileError(Exception):
    """The tasks file cannot be used; the message names the line."""


@dataclass(frozen=True)
class Task:
    id: str
    prompt: str
    cwd: str | None = None
    repo: str | None = None
    setup: str | None = None
    check: str | None = None
    model: str | None = None
    permission_mode: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(**{name: data.get(name) for name in FIELDS})  # type: ignore[arg-type]


def _task(line_number: int, data: Any) -> Task:
    where = f"line {line_number}"
    if not isinstance(data, dict):
        raise TaskFileError(f"{where}: expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise TaskFileError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))} (known: {', '.join(FIELDS)})")
    for name in FIELDS:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise TaskFileError(f"{where}: {name!r} must be a string, got {type(value).__name__}")
    task_id, prompt = data.get("id"), data.get("prompt")
    if not task_id or not _ID.fullmatch(task_id):
        raise TaskFileError(f"{where}: 'id' must be 1-64 letters, digits, '.', '_' or '-' "
                            f"(it names the task's worktree and branch), got {task_id!r}")
    if not prompt or not prompt.strip():
        raise TaskFileError(f"{where}: task {task_id!r} has no 'prompt'")
    mode = data.get("permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise TaskFileError(f"{where}: 'permission_mode' {mode!r} is not one of {', '.join(PERMISSION_MODES)}")
    return Task.from_dict(data)


def parse_tasks(text: str) -> list[Task]:
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise TaskFileError(f"line {number}: not JSON ({err.msg} at column {err.colno})") from None
        task = _task(number, data)
        if task.id in seen:
            raise TaskFileError(f"line {number}: id {task.id!r} is used again (first on line {seen[task.id]})")
        seen[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TaskFileError("no tasks in the file")
    return tasks


def load_tasks(path: Path) -> list[Task]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TaskFileError(f"cannot read {path}: {err}") from None
    try:
        return parse_tasks(text)
    except TaskFileError as err:
        raise TaskFileError(f"{path}: {err}") from None
