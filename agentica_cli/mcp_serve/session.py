"""One session `agentica mcp serve` runs for its clients: an ordinary agentica session (saved, so
`agentica --resume ID` continues it in a terminal too) with settings for its folder, a permission
policy whose questions go to the client, a DeepAgent, checkpoints, the folder's MCP servers.
A turn runs in a task of its own, outside the MCP request that started it, so it can wait on an
approval while the client answers (mid-request on handshake connections, across the retried
request on 2026-07-28 ones).
"""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

from agentica_cli.app.permissions.approvals import Answer, edit_path
from agentica_cli.app.permissions.tool_kinds import EDIT_TOOLS
from agentica_cli.app.safe_text import safe_text
from agentica_cli.mcp_serve.questions import Question, question_text
from agentica_cli.mcp_serve.turn import Turn

QUESTION_TIMEOUT = 600.0  # seconds an approval waits for a client that went away: then refused


class ServeError(Exception):
    """A request the server cannot serve (bad folder, config, unknown session): its message is
    the tool result the client reads."""


def log(text: str) -> None:
    sys.stderr.write(f"agentica mcp serve: {safe_text(text)}\n")
    sys.stderr.flush()


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
        turn = self.turn = Turn(self.id)
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
