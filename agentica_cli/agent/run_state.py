"""RunState: one run's event queue and counters, shared by the loop (agent.py) and the tool
executor (executor.py) without either importing the other for it."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any

from agentica_cli.agent.events import Event
from agentica_cli.models.base import TokenUsage


class RunState:
    """One run's event queue and counters. `emit` is safe from tool worker threads."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.usage = TokenUsage()
        self.tool_calls_used = 0
        self.limit_noted = False
        self.system_prompt = ""
        self.error = ""  # why the last model request failed for good
        self.compaction_failed = False  # not asked again this run: each try costs a request
        self.stop_hook_active = False  # a Stop hook already kept this run going
        self.overflow_compacted = False  # a context-length refusal was answered by compacting once
        self.turn_start: Future[Any] | None = None  # the turn's first snapshot, while it is being taken
        self.answer_so_far = ""  # the text of the model request being streamed (kept if the user interrupts)

    def emit(self, event: Event) -> None:
        if threading.get_ident() == self.thread:
            self.queue.put_nowait(event)
            return
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)
        except RuntimeError:
            pass  # a worker thread outlived its run (the loop is closed): nobody is listening

    async def flush(self) -> None:
        """Wait until the consumer has taken every event emitted so far."""
        await self.queue.join()
