"""Shared parts of the worktree and batch tests: a git repository, and a scripted model that
plays one small task per session, told apart by the `[task ID]` tag in the session's prompt.

Each task's session: the first request answers with a read_file call, the second with a
write_file call (`shared.txt`, the same file for every task: only worktrees keep them apart),
the third with text. Requests are
recorded by the real HTTP server (ScriptedModelServer) with their arrival times.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.testing.server import RecordedRequest

TAG = re.compile(r"\[task ([A-Za-z0-9_-]+)\]")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repository(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.invalid")
    git(path, "config", "user.name", "dev")
    (path / "shared.txt").write_text("original\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path


def task_of(body: dict[str, Any]) -> str:
    if "_unparsed" in body:  # cut short (its session stopped while sending it): the tag is in what came
        found = TAG.search(body["_unparsed"])
        return found.group(1) if found else "?"
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            content = message["content"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            found = TAG.search(text)
            if found:
                return found.group(1)
    return "?"


def tasks_of(log: list[RecordedRequest]) -> list[str]:
    """The task of each recorded request. A request cut short before its tag (its session was
    stopped while sending it, even before the body) is its connection's: a session sends its
    requests over one kept-alive connection, and no two sessions (processes) share one."""
    tags = [task_of(r.body) for r in log]
    by_connection: dict[str, set[str]] = {}
    for record, tag in zip(log, tags, strict=True):
        if tag != "?":
            by_connection.setdefault(record.connection, set()).add(tag)
    for i, record in enumerate(log):
        known = by_connection.get(record.connection, set())
        if tags[i] == "?" and "_unparsed" in record.body and len(known) == 1:
            tags[i] = next(iter(known))
    return tags


def stage_of(body: dict[str, Any]) -> int:
    """How many tool results the request carries: 0 for a session's first request."""
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")


Special = Callable[[str, int, dict[str, Any]], "dict[str, Any] | None"]


class TaskModel:
    """The router behind the scripted server: `special(task, stage, body)` may return a turn of
    its own (a 429, a delay, a hang) before the ordinary one."""

    def __init__(self, special: Special | None = None):
        self.special = special
        self.lock = threading.Lock()
        self.seen: dict[str, int] = {}

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        task, stage = task_of(body), stage_of(body)
        with self.lock:
            self.seen[task] = self.seen.get(task, 0) + 1
        if self.special is not None:
            turn = self.special(task, stage, body)
            if turn is not None:
                return turn
        if stage == 0:  # the file tools refuse to overwrite a file the session has not read
            return turns.tool_calls(turns.call("read_file", {"file_path": "shared.txt"}),
                                    usage={"prompt_tokens": 100, "completion_tokens": 10})
        if stage == 1:
            return turns.tool_calls(turns.call("write_file", {"file_path": "shared.txt",
                                                              "content": f"from {task}\n"}),
                                    usage={"prompt_tokens": 110, "completion_tokens": 10})
        return turns.text(f"wrote shared.txt for {task}", usage={"prompt_tokens": 120, "completion_tokens": 5})


def task_server(model: TaskModel, requests: int = 200) -> ScriptedModelServer:
    return ScriptedModelServer([model] * requests).start()


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in records}
