"""Every session this server runs, by id: created for `agentica`, found (or reopened from the
saved sessions) for `agentica_reply`, the oldest idle ones closed past a limit."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.mcp_serve.errors import ServeError
from agentica_cli.mcp_serve.turn import Turn

if TYPE_CHECKING:
    from agentica_cli.app.settings.config import Settings
    from agentica_cli.mcp_serve.session import ServeSession

MODES = ("default", "accept-edits", "plan", "auto")
MAX_LIVE_SESSIONS = 32  # idle sessions kept open beyond this are closed (agentica_reply reopens a saved one)


@dataclass
class ServeOptions:
    """The server's own settings (`agentica mcp serve` flags) over the config files."""

    flags: dict[str, object] = field(default_factory=dict)  # dotted keys, the command-line layer
    default_mode: str = "default"  # a session's mode when the client names none
    allow_auto: bool = False  # clients may ask for `auto` only when the server was started with it
    save_sessions: bool = True


class SessionHub:
    """Every session this server runs, by id, and the turns waiting on a client's retry."""

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.sessions: dict[str, ServeSession] = {}  # oldest use first
        self.turns: dict[str, Turn] = {}  # token -> a turn that asked the client (2026-07-28 retries)
        self.closing: set[asyncio.Task[None]] = set()

    def mode_for(self, requested: str | None) -> str:
        mode = requested or self.options.default_mode
        if mode not in MODES:
            raise ServeError(f"unknown permission mode {mode!r}; one of {', '.join(MODES)}")
        if mode == "auto" and not self.options.allow_auto:
            raise ServeError("permission mode 'auto' was refused: this server asks its client before any change "
                             "(start it with `agentica mcp serve --permission-mode auto` to allow auto)")
        return mode

    def settings_for(self, work_dir: Path, mode: str, model: str | None) -> Any:
        """The folder's settings under the server's flags; AppSession.open checks them."""
        from agentica_cli.app.settings.config import ConfigError, load_settings
        from agentica_cli.app.settings.trust import is_trusted

        flags = {**self.options.flags, "permissions.mode": mode}
        if model:
            flags["model.name"] = model
        try:
            return load_settings(work_dir, flags, trusted=is_trusted(work_dir))
        except ConfigError as err:
            raise ServeError(f"config error: {err}") from None

    @staticmethod
    def folder(cwd: str | None) -> Path:
        path = Path(os.path.realpath(os.path.expanduser(cwd or os.getcwd())))
        if not path.is_dir():
            raise ServeError(f"cwd {cwd}: no such folder")
        return path

    async def create(self, cwd: str | None, mode: str | None, model: str | None) -> ServeSession:
        work_dir = self.folder(cwd)
        return self._add(await self._open(work_dir, self.settings_for(work_dir, self.mode_for(mode), model)))

    async def get(self, session_id: str) -> ServeSession:
        """A live session, or a saved one reopened (in the folder it was started in)."""
        live = self.sessions.pop(session_id, None)
        if live is not None:
            self.sessions[session_id] = live  # the most recently used now
            return live
        from agentica_cli.app.sessions import SessionStore

        store = SessionStore()
        try:
            found = store.find(session_id)
        except (FileNotFoundError, OSError):
            raise ServeError(f"unknown session {session_id!r}") from None
        full_id = found.stem
        if full_id in self.sessions:  # a prefix of a live id
            return self.sessions[full_id]
        info = next((i for i in store.list(None) if i.id == full_id), None)
        work_dir = self.folder(info.cwd if info is not None else None)
        return self._add(await self._open(work_dir, self.settings_for(work_dir, self.mode_for(None), None),
                                          resume=full_id))

    async def _open(self, work_dir: Path, settings: Settings, resume: str | None = None) -> ServeSession:
        """An AppSession with a ServeSession as its front end, started as -p starts one (the
        folder's MCP servers waited for, a failed one reported and left out); nothing is left
        open when it cannot start. A start-up problem is the client's tool result."""
        from agentica_cli.app.session import AppSession, SessionOptions, StartupError
        from agentica_cli.app.sessions import new_session_id

        save = self.options.save_sessions
        options = SessionOptions(work_dir, settings, resume=resume, save=save, lazy_file=False,
                                 session_id=None if save else new_session_id(),
                                 how_to_trust="run `agentica --trust` there")
        from agentica_cli.mcp_serve.session import ServeSession  # the runtime: loaded at the first call

        front = ServeSession()
        try:
            app = AppSession.open(options, front)
        except StartupError as err:
            raise ServeError(err.problem.message) from None
        front.attach(app)
        try:
            await app.start()
        except BaseException:
            await app.close()
            raise
        return front

    def _add(self, session: ServeSession) -> ServeSession:
        self.sessions[session.id] = session
        # A long-running server must not hold every session it ever ran open (each holds its
        # saved file and its agent): the oldest idle ones are closed; saved ones can be reopened.
        idle = [s for s in self.sessions.values() if s is not session and (s.turn is None or s.turn.done)]
        for old in idle[:max(0, len(self.sessions) - MAX_LIVE_SESSIONS)]:
            del self.sessions[old.id]
            task = asyncio.create_task(old.close())
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)
        return session

    async def close(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()
        if self.closing:
            await asyncio.wait(set(self.closing))
