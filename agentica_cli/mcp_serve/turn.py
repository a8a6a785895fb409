"""One prompt of a served session, running in a task of its own: what it ends with, and the
approval questions it waits on until the client answers them."""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from dataclasses import dataclass, field

from agentica_cli.mcp_serve.questions import Question


@dataclass
class TurnOutcome:
    answer: str = ""
    stop_reason: str = "completed"
    error: str = ""
    files_changed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # calls refused because nobody could be asked


class Turn:
    """One prompt running to its end; its approval questions wait in `pending`."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
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
