"""Conversations saved as they happen: one JSON-lines file per session.

    ~/.agentica/sessions/<id>.jsonl
    {"type": "session", "id": ..., "cwd": ..., "created": ..., "model": ...}   first line
    {"type": "message", "message": {...}}                                       one per message
    {"type": "history", "messages": [...]}      the whole history after a compaction replaced it
                                                (or, in a fork, the history it started from)

A line is appended (and flushed) after every message, so a killed process loses at most
the message in flight. Loading repairs what a kill can leave behind: a torn last line, and
tool calls that never got a result (the API rejects those).

One process at a time writes a session: it holds an exclusive lock (flock) on the file for
as long as it has it open, and notes its pid in `<id>.pid` beside it; `<id>.usage.json` beside
it keeps the tokens its model requests used (app/usage.py: /cost after --continue counts them). Another agentica that
wants the same session (`--continue` in a second terminal) does not interleave its messages
with the first one's: it forks, continuing in a new session that starts with a copy of the
history up to its last finished answer (the first line names the session it was forked
from), and says so. Session files are private (0600, in a 0700 folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentica_cli.private_files import agentica_home, open_private, private_dir

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locking
    fcntl = None  # type: ignore[assignment]

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
    model: str = ""


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class SessionInUse(Exception):
    """Another process holds the session's lock; `pid` is its process id when known."""

    def __init__(self, pid: int | None):
        super().__init__(f"in use by pid {pid}")
        self.pid = pid


class Session:
    """An open session file that messages are appended to, locked while it is open."""

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        path: Path,
        messages: list[dict[str, Any]],
        fh: Any = None,
        notice: str | None = None,
        header: dict[str, Any] | None = None,
    ):
        self.store = store
        self.id = session_id
        self.path = path
        self.messages = messages  # what was loaded (for a resumed session)
        self._fh: Any = fh  # open for appending, holding the lock
        self._header = header  # a new session's first line, until the first message creates its file
        self.notice = notice  # what the user should hear about how it was opened (a fork)
        self._image_refs: dict[str, dict[str, str]] = {}  # data URL -> its file (session_images)
        self._header_written: dict[str, Any] | None = None  # the first line, while only it is in the file
        self.save_error = ""  # why this session stopped being saved ("" while it is saved)
        self.usage: dict[str, int] = {}  # the tokens earlier processes used in it (app/usage.py)
        self._usage_unsaved = False  # record_usage counted more than <id>.usage.json holds

    @property
    def saved(self) -> bool:
        """False for a new session nothing was written to yet: it has no file."""
        return self._header is None


    def append(self, message: dict[str, Any]) -> None:
        self._write({"type": "message", "message": message})

    def record_usage(self, usage: dict[str, int]) -> None:
        """Add one model request's tokens (or money) to the session's total, kept in
        `<id>.usage.json`. The file is replaced whole with the next message line and at close,
        not at each call: a request's tokens and its cost are one write, and a step pays one
        (a killed process loses at most the request whose message was not written either).
        Nothing is written before the session has a file, nor once saving failed."""
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value
        self._usage_unsaved = True

    def _save_usage(self) -> None:
        if not self._usage_unsaved or self._header is not None or self.save_error:
            return
        self._usage_unsaved = False
        path = usage_path(self.path)
        temporary = path.with_name(path.name + ".tmp")
        with contextlib.suppress(OSError):  # the conversation matters; a lost count does not stop it
            with open_private(temporary, "w", encoding="utf-8", folder_made=True) as fh:
                fh.write(json.dumps(self.usage))
            os.replace(temporary, path)

    def _write(self, entry: dict[str, Any]) -> None:
        if self.save_error:
            return  # a failed write stopped the saving: no later line after a missing one
        created = False
        try:
            if self._header is not None:  # the first message: now the session has a file
                self._fh = _open_locked(self.path, new=True)
                created = True
                _append_line(self._fh, json.dumps(self._header) + "\n")
                self._header_written = self._header
                self._header = None
            elif self._fh is None:  # reopened after close(): take the lock again
                self._fh = _open_locked(self.path)
            from agentica_cli.app.session_images import externalize, images_dir

            entry = externalize(entry, images_dir(self.path), self._image_refs)  # image bytes go to files
            _append_line(self._fh, json.dumps(entry, ensure_ascii=False, default=str) + "\n")
            self._save_usage()  # the request this message answers, counted beside it
        except SessionInUse:
            raise
        except OSError as err:
            self._stop_saving(err, created)

    def _stop_saving(self, err: OSError, created: bool) -> None:
        why = err.strerror or str(err)
        self.save_error = f"could not save this conversation to {self.path}: {why}"
        if self._fh is not None and (created or self._header_written is not None):
            try:
                empty = os.fstat(self._fh.fileno()).st_size <= _header_size(self._header_written)
            except (OSError, ValueError):
                empty = False
            if empty:  # nothing but (part of) the first line: no session worth keeping
                with contextlib.suppress(OSError):
                    self.path.unlink()
                self._header = self._header_written or self._header
                self._header_written = None
                self.save_error += " (no session file was kept)"
            else:
                self.save_error += "; what was saved before is kept"
        elif self.path.exists():
            self.save_error += "; what was saved before is kept"
        self.close()

    def replace_history(self, messages: list[dict[str, Any]]) -> None:
        """Record that the history is now `messages` (after a compaction); loading starts from here."""
        self._write({"type": "history", "messages": messages})

    def close(self) -> None:
        self._save_usage()
        if self._fh is not None:
            try:
                _pid_path(self.path).unlink()  # before the lock goes: the next holder writes its own
            except OSError:
                pass
            with contextlib.suppress(OSError):  # unbuffered: nothing is left to write at close
                self._fh.close()  # releases the lock
            self._fh = None


def _append_line(fh: Any, line: str) -> None:
    """Append `line` whole, or raise OSError with the file as it was (a partial line taken
    back off the end: truncating needs no free space)."""
    data = memoryview(line.encode("utf-8", "surrogateescape"))
    fd = fh.fileno()
    start = os.fstat(fd).st_size
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _header_size(header: dict[str, Any] | None) -> int:
    return len((json.dumps(header) + "\n").encode()) if header is not None else 0


def usage_path(path: Path) -> Path:
    """`<id>.usage.json` beside the session file `<id>.jsonl`."""
    return path.with_suffix(".usage.json")


def _pid_path(path: Path) -> Path:
    return path.with_suffix(".pid")


def _holder_pid(path: Path) -> int | None:
    try:
        return int(_pid_path(path).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def _open_locked(path: Path, *, new: bool = False) -> Any:
    """The session file opened for appending (created when `new`), exclusively locked;
    SessionInUse when another process holds it."""
    fh = open_private(path, "ab", exclusive=new, buffering=0)  # unbuffered: each line is one write
    if fcntl is not None:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise SessionInUse(_holder_pid(path)) from None
        except OSError:
            pass  # a filesystem without locks: carry on as before
    try:
        with open_private(_pid_path(path), "w", encoding="ascii") as pid_file:
            pid_file.write(f"{os.getpid()}\n")
    except OSError:
        pass  # only used to name the holder in a message
    return fh


def _header(session_id: str, cwd: Path, model: str) -> dict[str, Any]:
    """A session file's first line."""
    return {"type": "session", "id": session_id, "cwd": str(cwd), "created": time.time(), "model": model}


class SessionStore:
    def __init__(self, root: Path | None = None):
        self.root = root or agentica_home() / "sessions"

    def path_for(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"

    def create(self, cwd: Path, model: str = "", *, forked_from: str | None = None, lazy: bool = False) -> Session:
        """A new session. `lazy`: its file is only created by its first message, so a session
        left before any turn (the REPL quit at once, a prompt a hook blocked) leaves nothing
        behind for `sessions list`, `--continue` or `--resume` to find."""
        private_dir(self.root)
        session_id = new_session_id()
        path = self.path_for(session_id)
        header = _header(session_id, cwd, model)
        if forked_from:
            header["forked_from"] = forked_from
        if lazy:
            return Session(self, session_id, path, [], header=header)
        fh = _open_locked(path, new=True)
        try:
            _append_line(fh, json.dumps(header) + "\n")
        except OSError as err:
            session = Session(self, session_id, path, [], fh)
            session._header_written = header
            session._stop_saving(err, True)
            return session
        return Session(self, session_id, path, [], fh)

    def fork(self, old: Session, cwd: Path, model: str = "") -> Session:
        """A new session going on from a copy of `old`'s history (the SDK's --fork-session); `old`
        is closed, and stays as it was."""
        fork = self.create(cwd, model, forked_from=old.id)
        messages = list(old.messages)
        if messages:
            fork.replace_history(messages)
        fork.messages = messages
        old.close()
        return fork

    def named(self, session_id: str, cwd: Path, model: str = "") -> Session:
        """A new, empty session with the id given (the SDK's --session-id), made by its first
        message; FileExistsError when a session of that id exists."""
        path = self.path_for(session_id)
        if path.exists():
            raise FileExistsError(session_id)
        private_dir(self.root)
        return Session(self, session_id, path, [], header=_header(session_id, cwd, model))

    def find(self, session_id: str) -> Path:
        """The file of the saved session `session_id` (or of the one session it is a prefix of);
        FileNotFoundError when there is none, or more than one."""
        path = self.path_for(session_id)
        if path.is_file():
            return path
        matches = sorted(self.root.glob(f"{session_id}*.jsonl")) if self.root.is_dir() else []
        if len(matches) != 1:
            raise FileNotFoundError(session_id)
        return matches[0]

    def open(self, session_id: str) -> Session:
        """Reopen a saved session to continue it; raises FileNotFoundError for an unknown id.

        When another process has it open, the result is a new session forked from it (with
        a copy of its history), and `notice` says so."""
        path = self.find(session_id)
        session_id = path.stem
        private_dir(self.root)  # folders made by an older version were 0755
        try:
            fh = _open_locked(path)
        except SessionInUse as busy:
            return self._fork(session_id, path, busy.pid)
        session = Session(self, session_id, path, self.load_messages(path), fh)
        session.usage = self.load_usage(path)
        return session

    def _fork(self, session_id: str, path: Path, holder: int | None) -> Session:
        # What is on disk now, up to its last finished answer: the holder may be mid-turn,
        # and its prompt in flight is not this process's to answer.
        messages = settled_history(self.load_messages(path))
        info = self._info(path)
        fork = self.create(Path(info.cwd) if info else Path.cwd(), info.model if info else "", forked_from=session_id)
        if messages:
            fork.replace_history(messages)
        fork.messages = messages
        by = f"another agentica (pid {holder})" if holder else "another agentica"
        fork.notice = f"session {session_id} is in use by {by}; continuing in a new session {fork.id} forked from it"
        return fork

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

    @staticmethod
    def load_usage(path: Path) -> dict[str, int]:
        """The tokens the session's model requests used so far (none recorded: {})."""
        try:
            saved = json.loads(usage_path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in saved.items() if isinstance(v, int)} if isinstance(saved, dict) else {}

    @classmethod
    def load_messages(cls, path: Path) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for entry in cls._lines(path):
            if entry.get("type") == "message" and "message" in entry:
                messages.append(entry["message"])
            elif entry.get("type") == "history" and isinstance(entry.get("messages"), list):
                messages = list(entry["messages"])
        from agentica_cli.app.session_images import images_dir, resolve

        return resolve(repair_history(messages), images_dir(path))

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
        """The newest session of `cwd` with a message in it (one without is nothing to continue:
        an older agentica left such files when quit before the first prompt)."""
        return next((info for info in self.list(cwd) if info.messages), None)

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
                if entry.get("type") == "history" and isinstance(entry.get("messages"), list):
                    replaced = [m for m in entry["messages"] if isinstance(m, dict)]  # a compaction or a fork
                    count = len(replaced)
                else:
                    count += 1
                    replaced = [entry.get("message") or {}]
                for message in replaced:
                    if not title and message.get("role") == "user" and isinstance(message.get("content"), str):
                        from agentica_cli.prompt_parts import typed_part

                        title = " ".join(typed_part(message["content"]).split())[:70]  # as typed
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
            model=str(header.get("model", "")),
        )


def settled_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` up to the last final answer (an assistant message without tool calls)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            return messages[: index + 1]
    return []


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
