"""One session `agentica mcp serve` runs for its clients: an ordinary agentica session, the same
AppSession (app/session.py) as the REPL's, -p's and ACP's (saved, so `agentica --resume ID`
continues it in a terminal too), whose permission questions go to the client.
A turn runs in a task of its own, outside the MCP request that started it, so it can wait on an
approval while the client answers (mid-request on handshake connections, across the retried
request on 2026-07-28 ones).
"""

from __future__ import annotations

import asyncio
import os
from contextlib import aclosing
from pathlib import Path
from typing import Any

from agentica_cli.app.permissions.approvals import Answer, edit_path
from agentica_cli.app.permissions.approvals import Question as PolicyQuestion
from agentica_cli.app.permissions.tool_kinds import EDIT_TOOLS
from agentica_cli.app.session import HeadlessFrontEnd
from agentica_cli.mcp_serve.errors import ServeError, log
from agentica_cli.mcp_serve.questions import Question, question_text
from agentica_cli.mcp_serve.turn import Turn

QUESTION_TIMEOUT = 600.0  # seconds an approval waits for a client that went away: then refused


class ServeSession(HeadlessFrontEnd):
    """The front end of one AppSession (app/session.py) served to MCP clients: the policy's
    questions go to the client that runs the turn; MCP forms and sampling are declined as -p
    declines them (the client is another agent, not a person at this session's servers);
    notices go to stderr."""

    can_ask = True  # a turn started by a client without elicitation refuses at once (start())

    def __init__(self) -> None:
        super().__init__("agentica mcp serve")
        self.app: Any = None  # the AppSession, set by attach()
        self.turn: Turn | None = None
        self._started_paths: dict[str, str] = {}  # edit call id -> the file it edits

    def attach(self, app: Any) -> None:
        self.app = app

    @property
    def id(self) -> str:
        return str(self.app.id)

    @property
    def work_dir(self) -> Path:
        return Path(self.app.work_dir)

    # -- FrontEnd --------------------------------------------------------------------------

    async def ask_permission(self, call: Any, question: PolicyQuestion) -> Answer:
        """The policy's question: queued for the client; the turn waits for its answer."""
        turn = self.turn
        if turn is None or turn.done:
            return Answer("no", "No client request is waiting for this session's questions.")
        pending = Question(str(getattr(call, "name", "") or "tool"), question_text(call, question, self.work_dir),
                           asyncio.get_running_loop().create_future())
        turn.add_question(pending)
        try:
            return await asyncio.wait_for(asyncio.shield(pending.future), QUESTION_TIMEOUT)
        except asyncio.TimeoutError:
            pending.answer(None)
            return Answer("no", "Nobody answered the approval request in time.")

    def report(self, text: str) -> None:
        log(text)

    def refused(self, name: str, mode: str, why: Any) -> None:
        return None  # the turn's result lists the calls refused for want of an answer

    async def granted(self, granted: str, mode_changed: bool) -> None:
        log(f"session {self.id}: {granted} allowed for the rest of this session")

    def start(self, prompt: str, *, can_ask: bool) -> Turn:
        if self.turn is not None and not self.turn.done:
            raise ServeError(f"session {self.id} is still running a prompt; wait for its result")
        # A client that cannot answer elicitation requests: every call needing approval is refused
        # at once (the policy's "cannot ask" path), and the result says why.
        self.app.set_can_ask(can_ask)
        turn = self.turn = Turn(self.id)
        turn.task = asyncio.create_task(self._run(prompt, turn))
        return turn

    async def _run(self, prompt: str, turn: Turn) -> None:
        outcome = turn.outcome
        started: dict[str, tuple[str, dict[str, Any]]] = {}  # call id -> (name, args), for the refusals
        changed: dict[str, None] = {}  # the edit tools' files, in order
        checkpoint_turn = 0
        try:
            async with aclosing(self.app.turn(prompt)) as stream:
                async for event in stream:
                    if event.source:
                        continue  # a sub-agent's steps: its task call's result is what counts
                    if event.type == "model_request_started":
                        turn.progress.put_nowait(f"model request {event.step}")
                    elif event.type == "tool_call_started":
                        turn.progress.put_nowait(f"running {event.name}")
                        started[event.call_id] = (event.name, event.args if isinstance(event.args, dict) else {})
                    elif (event.type == "tool_call_finished" and event.status == "denied"
                          and self.app.policy.ask is None
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

        call = SimpleNamespace(name=name, args=args, function=self.app.agent.functions.get(name))
        try:
            return self.app.policy.evaluate(call).kind == "ask"
        except Exception:
            return False

    def _turn_files(self, number: int) -> list[str]:
        """What the turn changed by any means (a command's writes too), from its checkpoint."""
        turns = getattr(self.app.checkpoints, "turns", None)
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
        """The AppSession's close: the turn cancelled, SessionEnd hooks, the MCP servers stopped,
        old checkpoints pruned, the saved file closed."""
        if self.turn is not None:
            self.turn.cancel()
        await self.app.close()
