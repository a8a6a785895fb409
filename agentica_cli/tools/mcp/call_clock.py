"""A call's timeout measures the server, so its clock stops while agentica waits on the user.

A server may ask the user for input in the middle of a tool call (an elicitation form, a
sampling request to approve): on the 2025 protocol as a request of its own, on 2026 as an
`InputRequiredResult` the client answers by calling again, for a task while the client waits
for the task's result. However it arrives, the time the user takes is not the server's: the
call's budget of seconds is spent only while its clock runs. `McpConnection.waiting_on_user()`
stops the clocks of the calls in flight on that server while a handler asks the user.

The clock drives every bound on a call: the anyio cancel scope around serving it (which
cancels the request, so the SDK sends the server a courtesy `notifications/cancelled`, and a
task gets `tasks/cancel`) and the caller's wait for the answer. The SDK's own per-request read
timeout cannot be paused from here, so requests that may wait on the user are sent without
one and are bounded by this clock instead.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class CallClock:
    """`budget` seconds of running time, on the event loop's clock (anyio's on asyncio)."""

    def __init__(self, budget: float):
        self._loop = asyncio.get_running_loop()
        self._budget = budget
        self._since = self._loop.time()  # when the clock last started running
        self._pauses = 0
        self._scopes: dict[Any, float] = {}  # anyio CancelScope -> margin past the budget
        self._changed: asyncio.Future[None] = self._loop.create_future()

    @property
    def paused(self) -> bool:
        return self._pauses > 0

    def remaining(self) -> float:
        """Seconds of budget left (infinite while paused)."""
        if self._pauses:
            return math.inf
        return self._budget - (self._loop.time() - self._since)

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def pause(self) -> None:
        if not self._pauses:
            self._budget = self.remaining()
        self._pauses += 1
        if self._pauses == 1:
            self._moved()

    def resume(self) -> None:
        self._pauses -= 1
        if not self._pauses:
            self._since = self._loop.time()
            self._moved()

    def _deadline(self, margin: float) -> float:
        return math.inf if self._pauses else self._loop.time() + self.remaining() + margin

    def _moved(self) -> None:
        for scope, margin in self._scopes.items():
            scope.deadline = self._deadline(margin)
        changed, self._changed = self._changed, self._loop.create_future()
        changed.set_result(None)

    @contextmanager
    def fail_after(self, margin: float = 0.0) -> Iterator[None]:
        """Like anyio.fail_after(remaining + margin), with a deadline that follows the pauses:
        raises TimeoutError when the budget (plus `margin`) ran out inside the block."""
        import anyio

        scope = anyio.CancelScope(deadline=self._deadline(margin))
        self._scopes[scope] = margin
        try:
            with scope:
                yield
        finally:
            self._scopes.pop(scope, None)
        # Only the deadline cancels this scope (nobody else holds it). Not anyio.fail_after:
        # it compares the deadline with the time on the way out, and a pause may have moved it.
        if scope.cancelled_caught:
            raise TimeoutError

    async def wait(self, future: asyncio.Future[Any], margin: float = 0.0) -> Any:
        """`future`'s result, or TimeoutError once the budget (plus `margin`) ran out first.
        Never cancels `future` (a timeout or the caller's cancellation leaves it be)."""
        while not future.done():
            timeout = None if self._pauses else self.remaining() + margin
            if timeout is not None and timeout <= 0:
                raise TimeoutError
            await asyncio.wait({future, self._changed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        return future.result()
