"""Every session this server runs, by id: created for `agentica`, found (or reopened from the
saved sessions) for `agentica_reply`, the oldest idle ones closed past a limit."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.mcp_serve.session import ServeError, ServeSession, log
from agentica_cli.mcp_serve.turn import Turn

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
        from agentica_cli.app.runtime import check_model_options, check_model_timeouts
        from agentica_cli.app.settings.config import ConfigError, check_mcp_servers, load_settings
        from agentica_cli.app.settings.trust import is_trusted

        flags = {**self.options.flags, "permissions.mode": mode}
        if model:
            flags["model.name"] = model
        try:
            settings = load_settings(work_dir, flags, trusted=is_trusted(work_dir))
            check_mcp_servers(settings)
            check_model_timeouts(settings)
            check_model_options(settings)
        except ConfigError as err:
            raise ServeError(f"config error: {err}") from None
        for key in settings.held_back:
            log(f"ignoring '{key}' from untrusted {settings.project_file} (run `agentica --trust` there to use it)")
        return settings

    @staticmethod
    def model_for(settings: Any) -> Any:
        from agentica_cli.app.runtime import MissingKey, build_model

        try:
            return build_model(settings)
        except MissingKey as err:
            raise ServeError(str(err)) from None

    @staticmethod
    def folder(cwd: str | None) -> Path:
        path = Path(os.path.realpath(os.path.expanduser(cwd or os.getcwd())))
        if not path.is_dir():
            raise ServeError(f"cwd {cwd}: no such folder")
        return path

    @staticmethod
    async def start_mcp(settings: Any, work_dir: Path) -> Any:
        """The folder's MCP servers, as -p starts them: waited for (bounded by their connect
        timeouts), a failed one reported on stderr and left out; their requests for input are
        declined (nobody is there to answer them)."""
        tables = {k: v for k, v in settings.mcp_servers.items() if v.get("enabled", True)}
        if not tables:
            return None
        from agentica_cli.app.mcp_client import print_mode_handlers
        from agentica_cli.private_files import agentica_home
        from agentica_cli.tools.mcp.servers import McpConfigError, McpServerSet

        try:
            servers = McpServerSet.from_tables(tables, base_dir=work_dir, log_dir=agentica_home() / "logs" / "mcp",
                                               handlers=print_mode_handlers(work_dir, []))
        except McpConfigError as err:
            raise ServeError(f"MCP server config: {err}") from None
        servers.start()
        await servers.wait_ready()
        for failed in servers.new_failures():
            log(failed.failure_message())
        return servers

    async def create(self, cwd: str | None, mode: str | None, model: str | None) -> ServeSession:
        from agentica_cli.app.runtime import model_label
        from agentica_cli.app.sessions import SessionStore, new_session_id

        work_dir = self.folder(cwd)
        settings = self.settings_for(work_dir, self.mode_for(mode), model)
        built = self.model_for(settings)
        mcp = await self.start_mcp(settings, work_dir)
        stored = SessionStore().create(work_dir, model_label(built)) if self.options.save_sessions else None
        session_id = stored.id if stored is not None else new_session_id()
        return self._add(await self._open(session_id, work_dir, settings, built, stored, None, mcp))

    async def get(self, session_id: str) -> ServeSession:
        """A live session, or a saved one reopened (in the folder it was started in)."""
        live = self.sessions.pop(session_id, None)
        if live is not None:
            self.sessions[session_id] = live  # the most recently used now
            return live
        from agentica_cli.app.sessions import SessionStore

        store = SessionStore()
        try:
            stored = store.open(session_id)
        except (FileNotFoundError, OSError):
            raise ServeError(f"unknown session {session_id!r}") from None
        if stored.id in self.sessions:  # a prefix of a live id
            stored.close()
            return self.sessions[stored.id]
        info = next((i for i in store.list(None) if i.id == stored.id), None)
        work_dir = self.folder(info.cwd if info is not None else None)
        try:
            settings = self.settings_for(work_dir, self.mode_for(None), None)
            built = self.model_for(settings)
            mcp = await self.start_mcp(settings, work_dir)
        except ServeError:
            stored.close()
            raise
        return self._add(await self._open(stored.id, work_dir, settings, built, stored, list(stored.messages), mcp))

    @staticmethod
    async def _open(session_id: str, work_dir: Path, settings: Any, model: Any, stored: Any,
                    messages: list[dict[str, Any]] | None, mcp: Any) -> ServeSession:
        """The session, or nothing left open (its saved file, its MCP servers) when it cannot start."""
        try:
            return ServeSession(session_id, work_dir, settings, model, stored=stored, messages=messages, mcp=mcp)
        except BaseException:
            if mcp is not None:
                await mcp.close()
            if stored is not None:
                stored.close()
            raise

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
