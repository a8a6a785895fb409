"""Conversations saved as they happen: one JSON-lines file per session.

    ~/.agentica/sessions/<id>.jsonl
    {"type": "session", "id": ..., "cwd": ..., "created": ..., "model": ...}   first line
    {"type": "message", "message": {...}}                                       one per message
    {"type": "history", "messages": [...]}      the whole history after a compaction replaced it

A line is appended (and flushed) after every message, so a killed process loses at most
the message in flight. Loading repairs what a kill can leave behind: a torn last line, and
tool calls that never got a result (the API rejects those).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentica_cli.cli.config import agentica_home

INTERRUPTED_TOOL_RESULT = "Error: interrupted: the session ended before this tool call finished."


@dataclass
class SessionInfo:
    id: str
    path: Path
    cwd: str
    created: float
    updated: float
    title: str  # the first user message, shortened
    messages: int


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class Session:
    """An open session file that messages are appended to."""

    def __init__(self, store: SessionStore, session_id: str, path: Path, messages: list[dict[str, Any]]):
        self.store = store
        self.id = session_id
        self.path = path
        self.messages = messages  # what was loaded (for a resumed session)
        self._fh: Any = None

    def append(self, message: dict[str, Any]) -> None:
        self._write({"type": "message", "message": message})

    def _write(self, entry: dict[str, Any]) -> None:
        if self._fh is None:
            self._fh = self.path.open("a", encoding="utf-8")
        self._fh.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def replace_history(self, messages: list[dict[str, Any]]) -> None:
        """Record that the history is now `messages` (after a compaction); loading starts from here."""
        self._write({"type": "history", "messages": messages})

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class SessionStore:
    def __init__(self, root: Path | None = None):
        self.root = root or agentica_home() / "sessions"

    def path_for(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"

    def create(self, cwd: Path, model: str = "") -> Session:
        self.root.mkdir(parents=True, exist_ok=True)
        session_id = new_session_id()
        path = self.path_for(session_id)
        header = {"type": "session", "id": session_id, "cwd": str(cwd), "created": time.time(), "model": model}
        with path.open("x", encoding="utf-8") as fh:
            fh.write(json.dumps(header) + "\n")
        try:
            path.chmod(0o600)
        except OSError:
            pass
        return Session(self, session_id, path, [])

    def open(self, session_id: str) -> Session:
        """Reopen a saved session to continue it; raises FileNotFoundError for an unknown id."""
        path = self.path_for(session_id)
        if not path.is_file():
            matches = sorted(self.root.glob(f"{session_id}*.jsonl")) if self.root.is_dir() else []
            if len(matches) != 1:
                raise FileNotFoundError(session_id)
            path = matches[0]
            session_id = path.stem
        return Session(self, session_id, path, self.load_messages(path))

    # -- reading -----------------------------------------------------------------------

    @staticmethod
    def _lines(path: Path) -> Iterator[dict[str, Any]]:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # a line torn by a kill
                if isinstance(entry, dict):
                    yield entry

    @classmethod
    def load_messages(cls, path: Path) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for entry in cls._lines(path):
            if entry.get("type") == "message" and "message" in entry:
                messages.append(entry["message"])
            elif entry.get("type") == "history" and isinstance(entry.get("messages"), list):
                messages = list(entry["messages"])
        return repair_history(messages)

    def list(self, cwd: Path | None = None) -> list[SessionInfo]:
        """Sessions, newest first; only those started in `cwd` when given."""
        if not self.root.is_dir():
            return []
        found: list[SessionInfo] = []
        for path in self.root.glob("*.jsonl"):
            info = self._info(path)
            if info is not None and (cwd is None or info.cwd == str(cwd)):
                found.append(info)
        found.sort(key=lambda s: s.updated, reverse=True)
        return found

    def latest(self, cwd: Path) -> SessionInfo | None:
        sessions = self.list(cwd)
        return sessions[0] if sessions else None

    def _info(self, path: Path) -> SessionInfo | None:
        try:
            stat = path.stat()
            header: dict[str, Any] | None = None
            title = ""
            count = 0
            for entry in self._lines(path):
                if header is None:
                    if entry.get("type") != "session":
                        return None
                    header = entry
                    continue
                count += 1
                message = entry.get("message") or {}
                if not title and message.get("role") == "user" and isinstance(message.get("content"), str):
                    title = " ".join(message["content"].split())[:70]
        except OSError:
            return None
        if header is None:
            return None
        return SessionInfo(
            id=str(header.get("id", path.stem)),
            path=path,
            cwd=str(header.get("cwd", "")),
            created=float(header.get("created", stat.st_mtime)),
            updated=stat.st_mtime_ns / 1e9,
            title=title,
            messages=count,
        )


def repair_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every assistant tool call a result, as the API requires.

    A process killed while tools ran leaves calls without results; they are recorded as
    interrupted so the model knows they may not have happened.
    """
    out: list[dict[str, Any]] = []
    pending: list[str] = []

    def close_pending() -> None:
        for call_id in pending:
            out.append({"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED_TOOL_RESULT})
        pending.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
                out.append(message)
            continue  # a result without its call would be rejected
        close_pending()
        if role == "system":
            continue  # the system prompt is rebuilt for each run
        out.append(message)
        if role == "assistant":
            pending.extend(c.get("id", "") for c in message.get("tool_calls") or [] if isinstance(c, dict))
    close_pending()
    return out


def format_age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def describe(info: SessionInfo) -> str:
    age = format_age(time.time() - info.updated)
    return f"{info.id}  {age:>8}  {info.messages:>3} msgs  {info.title or '(empty)'}"
