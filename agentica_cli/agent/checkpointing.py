"""The agent's checkpoints (blocking git work), run off the event loop and in order.

One worker thread per agent runs `begin_turn`, `snapshot` and `end_turn` one after another,
so they happen in the order the loop asked for them even when the loop does not wait for
one. That lets the snapshot at a turn's start (a `git ls-files` scan, 5-15 ms) run while the
turn's first model request is in flight: the loop waits for it once the answer is in, before
any tool of the turn can touch a file. The journal write queued after it is not waited for:
the next snapshot (before a tool that may change files) runs after it.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class CheckpointRunner:
    """Runs the methods of one checkpoints object on a single worker thread, in order."""

    def __init__(self, checkpoints: Any):
        self.checkpoints = checkpoints
        self._worker: ThreadPoolExecutor | None = None

    def submit(self, method: str, *args: Any, **kwargs: Any) -> Future[Any]:
        """Queue `checkpoints.<method>(*args, **kwargs)`; it runs after everything queued before."""
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentica-checkpoints")
        return self._worker.submit(getattr(self.checkpoints, method), *args, **kwargs)

    @staticmethod
    async def result(pending: Future[Any]) -> Any:
        """Wait for a queued call without blocking the loop. A cancelled wait leaves the call
        running (a snapshot stopped halfway would leave the shadow index locked)."""
        return await asyncio.shield(asyncio.wrap_future(pending))
