"""The sessions `agentica mcp serve` runs for its clients, and the turn running in each.

A session is an ordinary agentica session (saved, so `agentica --resume ID` continues it in a
terminal too): settings for its folder, a permission policy, a DeepAgent. A turn runs in a task of
its own, outside the MCP request that started it, so it can wait on an approval while the
client answers (mid-request on handshake connections, across the retried request on
2026-07-28 ones).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections import deque
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.app.permissions.approvals import Answer, edit_path
from agentica_cli.app.permissions.tool_kinds import EDIT_TOOLS
from agentica_cli.app.safe_text import safe_text
from agentica_cli.mcp_serve.questions import Question, question_text

MODES = ("default", "accept-edits", "plan", "auto")
QUESTION_TIMEOUT = 600.0  # seconds an approval waits for a client that went away: then refused
MAX_LIVE_SESSIONS = 32  # idle sessions kept open beyond this are closed (agentica_reply reopens a saved one)


class ServeError(Exception):
    """A request the server cannot serve (bad folder, config, unknown session): its message is
    the tool result the client reads."""


def log(text: str) -> None:
    sys.stderr.write(f"agentica mcp serve: {safe_text(text)}\n")
    sys.stderr.flush()


@dataclass
class ServeOptions:
    """The server's own settings (`agentica mcp serve` flags) over the config files."""

    flags: dict[str, object] = field(default_factory=dict)  # dotted keys, the command-line layer
    default_mode: str = "default"  # a session's mode when the client names none
    allow_auto: bool = False  # clients may ask for `auto` only when the server was started with it
    save_sessions: bool = True


@dataclass
class TurnOutcome:
    answer: str = ""
    stop_reason: str = "completed"
    error: str = ""
    files_changed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # calls refused because nobody could be asked


class Turn:
    """One prompt running to its end; its approval questions wait in `pending`."""

    def __init__(self, session: ServeSession) -> None:
        self.session = session
        self.token = uuid.uuid4().hex  # the request_state a 2026-07-28 client echoes back
        self.pending: deque[Question] = deque()
        self.asked: Question | None = None  # sent to the client, its answer not yet in
        self.changed = asyncio.Event()
        self.outcome = TurnOutcome()
        self.task: asyncio.Task[None] | None = None
        self.progress: asyncio.Queue[str] = asyncio.Queue()  # steps, for the client's progress notifications
        self.steps = 0

    def add_question(self, question: Question) -> None:
        self.pending.append(question)
        self.changed.set()

    async def next_question(self) -> Question | None:
        """The next approval to ask, or None once the turn has ended."""
        while True:
            if self.pending:
                return self.pending.popleft()
            if self.task is None or self.task.done():
                return None
            self.changed.clear()
            waiter = asyncio.ensure_future(self.changed.wait())
            try:
                await asyncio.wait({waiter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
        for question in [*self.pending, *([self.asked] if self.asked else [])]:
            question.answer(None)
        self.pending.clear()

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()


class ServeSession:
    def __init__(self, session_id: str, work_dir: Path, settings: Any, model: Any, *, stored: Any,
                 messages: list[dict[str, Any]] | None, mcp: Any = None) -> None:
        from agentica_cli.app.permissions.approvals import policy_from_settings
        from agentica_cli.app.runtime import build_agent

        self.id = session_id
        self.work_dir = work_dir
        self.stored = stored
        self.mcp = mcp  # the folder's configured MCP servers (McpServerSet), closed with the session
        self.policy = policy_from_settings(settings, work_dir, ask=self.ask)
        self.agent = build_agent(
            settings, work_dir, model=model, allowed_dirs=[], approve=self.policy, messages=messages,
            extra_tools=mcp.ready_tools() if mcp is not None else None,
            on_message=stored.append if stored is not None else None,
            on_history_replaced=stored.replace_history if stored is not None else None,
            report=log,
        )
        self.agent.session_id = session_id
        self.agent.transcript_path = str(stored.path) if stored is not None else ""
        from agentica_cli.app.checkpoint_setup import attach_checkpoints, checkpoints_from_settings
        from agentica_cli.app.runtime import PermissionModePrompt
        from agentica_cli.app.settings.config import ConfigError

        PermissionModePrompt(self.agent).apply(self.policy.mode)  # plan mode: the model is told up front
        try:  # as -p: each turn is a checkpoint (`agentica --undo`), and its changed files are known
            self.checkpoints = attach_checkpoints(self.agent, checkpoints_from_settings(settings, work_dir, session_id))
        except ConfigError as err:
            raise ServeError(f"config error: {err}") from None
        self.turn: Turn | None = None
        self._started_paths: dict[str, str] = {}  # edit call id -> the file it edits

    async def ask(self, call: Any, verdict: Any = None) -> Answer:
        """The policy's question: queued for the client; the turn waits for its answer."""
        turn = self.turn
        if turn is None or turn.done:
            return Answer("no", "No client request is waiting for this session's questions.")
        question = Question(str(getattr(call, "name", "") or "tool"), question_text(call, verdict, self.work_dir),
                            asyncio.get_running_loop().create_future())
        turn.add_question(question)
        try:
            return await asyncio.wait_for(asyncio.shield(question.future), QUESTION_TIMEOUT)
        except asyncio.TimeoutError:
            question.answer(None)
            return Answer("no", "Nobody answered the approval request in time.")

    def start(self, prompt: str, *, can_ask: bool) -> Turn:
        if self.turn is not None and not self.turn.done:
            raise ServeError(f"session {self.id} is still running a prompt; wait for its result")
        # A client that cannot answer elicitation requests: every call needing approval is refused
        # at once (the policy's "cannot ask" path), and the result says why.
        self.policy.ask = self.ask if can_ask else None
        turn = self.turn = Turn(self)
        turn.task = asyncio.create_task(self._run(prompt, turn))
        return turn

    async def _run(self, prompt: str, turn: Turn) -> None:
        outcome = turn.outcome
        started: dict[str, tuple[str, dict[str, Any]]] = {}  # call id -> (name, args), for the refusals
        changed: dict[str, None] = {}  # the edit tools' files, in order
        checkpoint_turn = 0
        try:
            async with aclosing(self.agent.run_stream(prompt)) as stream:
                async for event in stream:
                    if event.source:
                        continue  # a sub-agent's steps: its task call's result is what counts
                    if event.type == "model_request_started":
                        turn.progress.put_nowait(f"model request {event.step}")
                    elif event.type == "tool_call_started":
                        turn.progress.put_nowait(f"running {event.name}")
                        started[event.call_id] = (event.name, event.args if isinstance(event.args, dict) else {})
                    elif (event.type == "tool_call_finished" and event.status == "denied" and self.policy.ask is None
                          and self._needed_asking(*started.get(event.call_id, (event.name, {})))):
                        outcome.refused.append(event.name)
                    if event.type == "tool_call_finished" and event.status == "ok" and event.name in EDIT_TOOLS:
                        path = self._started_paths.pop(event.call_id, None)
                        if path:
                            changed[path] = None
                    elif event.type == "tool_call_started" and event.name in EDIT_TOOLS:
                        path = edit_path(event.name, event.args if isinstance(event.args, dict) else {})
                        if path:
                            self._started_paths[event.call_id] = self._shown_path(path)
                    elif event.type == "checkpoint":
                        checkpoint_turn = event.turn
                    elif event.type == "error":
                        outcome.error = event.message
                    elif event.type == "turn_finished":
                        outcome.answer, outcome.stop_reason = event.content, event.stop_reason
        except asyncio.CancelledError:
            outcome.stop_reason = "cancelled"
            raise
        except Exception as exc:  # a bug must reach the client as a result, not hang it
            outcome.stop_reason, outcome.error = "error", f"{type(exc).__name__}: {exc}"
            log(f"session {self.id}: {outcome.error}")
        finally:
            outcome.files_changed = list(dict.fromkeys([*self._turn_files(checkpoint_turn), *changed]))
            turn.changed.set()

    def _needed_asking(self, name: str, args: dict[str, Any]) -> bool:
        """A denied call was refused for want of someone to ask (not by a deny rule or plan mode)."""
        from types import SimpleNamespace

        call = SimpleNamespace(name=name, args=args, function=self.agent.functions.get(name))
        try:
            return self.policy.evaluate(call).kind == "ask"
        except Exception:
            return False

    def _turn_files(self, number: int) -> list[str]:
        """What the turn changed by any means (a command's writes too), from its checkpoint."""
        turns = getattr(self.checkpoints, "turns", None)
        if not number or turns is None:
            return []
        try:
            found = next((t for t in turns() if t.number == number), None)
        except Exception:  # the checkpoints' own trouble is reported by them; the edit tools' list remains
            return []
        return list(found.files) if found is not None else []

    def _shown_path(self, path: str) -> str:
        full = Path(os.path.realpath(self.work_dir / path))
        try:
            return str(full.relative_to(os.path.realpath(self.work_dir)))
        except ValueError:
            return str(full)

    async def close(self) -> None:
        if self.turn is not None:
            self.turn.cancel()
        try:
            await self.agent.end_session("other")
        except Exception as exc:
            log(f"SessionEnd hooks failed: {type(exc).__name__}: {exc}")
        if self.mcp is not None:
            try:
                await self.mcp.close()
            except Exception as exc:
                log(f"closing the MCP servers failed: {type(exc).__name__}: {exc}")
        if self.stored is not None:
            self.stored.close()


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
