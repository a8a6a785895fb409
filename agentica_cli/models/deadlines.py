"""How long a model request may take, and the clock that holds one attempt to it.

Three limits, in seconds (None or 0: no limit):

- `request`: the whole model request: every attempt and the waits between them;
- `attempt`: one attempt, from sending it to the last byte of its answer;
- `stall`: no content progress within an attempt, from sending it (connecting and waiting for
  the response headers count) and then between tokens. Progress is a piece of text,
  reasoning or a tool call; SSE keep-alive comments and empty deltas are not, or a server
  that sends only those would hold the request open forever (the HTTP client's read timeout
  never fires while bytes arrive).
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from agentica_cli.models.base import seconds_text

T = TypeVar("T")

# Why these defaults: a thinking model (o-series and GPT-5 on chat completions) streams nothing
# while it reasons, often for minutes, and Ollama sends no headers until it has loaded the
# model and read the prompt; 300 s of silence is what Codex allows a stream too. Ten minutes
# for one answer is the OpenAI SDK's own default; the request limit leaves room for one full
# attempt plus a retry, and ends a server that never answers in 15 minutes, never hours.
DEFAULT_STALL_TIMEOUT = 300.0
DEFAULT_ATTEMPT_TIMEOUT = 600.0
DEFAULT_REQUEST_TIMEOUT = 900.0

SETTINGS = {"request": "request_timeout", "attempt": "attempt_timeout", "stall": "stall_timeout"}


def _limit(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise ValueError(f"{SETTINGS[name]} must be a number of seconds >= 0 (0: no limit), got {value!r}")
    return float(value) if value else None


@dataclass(frozen=True)
class Deadlines:
    """The three limits of a model request (see the module docstring); 0 becomes None."""

    request: float | None = DEFAULT_REQUEST_TIMEOUT
    attempt: float | None = DEFAULT_ATTEMPT_TIMEOUT
    stall: float | None = DEFAULT_STALL_TIMEOUT

    def __post_init__(self) -> None:
        for name in SETTINGS:
            object.__setattr__(self, name, _limit(name, getattr(self, name)))


class DeadlineExceeded(Exception):
    """A limit passed during an attempt. `setting` names it; `reason` says what was happening.

    The attempt and stall limits fail one attempt (it may be retried); the request limit
    ends the request (`final`).
    """

    def __init__(self, reason: str, setting: str):
        super().__init__(reason)
        self.reason = reason
        self.setting = setting

    @property
    def final(self) -> bool:
        return self.setting == SETTINGS["request"]


class AttemptClock:
    """The deadlines of one attempt. Await the network through `wait()`, call `responded()`
    when the response headers arrive and `progress()` on each piece of content."""

    def __init__(self, limits: Deadlines, request_deadline: float, *, stall: bool = True):
        loop = asyncio.get_running_loop()
        self._time = loop.time
        now = loop.time()
        self.limits = limits
        self.request_deadline = request_deadline
        self.attempt_deadline = now + limits.attempt if limits.attempt else math.inf
        self.stall = limits.stall if stall else None  # a non-streamed answer has no progress until its end
        self.last_progress = now
        self.has_response = False
        self.has_content = False

    def responded(self) -> None:
        self.has_response = True

    def progress(self) -> None:
        self.has_content = True
        self.last_progress = self._time()

    def _next_deadline(self) -> tuple[float, str]:
        candidates = [(self.request_deadline, "request"), (self.attempt_deadline, "attempt")]
        if self.stall:
            candidates.append((self.last_progress + self.stall, "stall"))
        return min(candidates, key=lambda c: c[0])  # a tie goes to the request: it is final

    async def wait(self, awaitable: Awaitable[T]) -> T:
        """`await awaitable`, or raise DeadlineExceeded when the nearest deadline passes first."""
        deadline, which = self._next_deadline()
        if deadline == math.inf:
            return await awaitable
        if sys.version_info >= (3, 11):
            # A timer handle, not a task per awaited chunk as wait_for would make.
            scope = asyncio.timeout_at(deadline)
            try:
                async with scope:
                    return await awaitable
            except TimeoutError:
                if scope.expired():
                    raise self._exceeded(which) from None
                raise
        try:  # pragma: no cover - Python 3.10
            return await asyncio.wait_for(awaitable, max(0.0, deadline - self._time()))
        except asyncio.TimeoutError:  # pragma: no cover - Python 3.10
            raise self._exceeded(which) from None

    def _state(self) -> str:
        """What the attempt was doing when the request's time ran out."""
        if not self.has_response:
            return "no response from the server yet"
        if not self.has_content:
            return "the stream had sent no content yet"
        return f"part of the answer had come, the last of it {seconds_text(self._time() - self.last_progress)} before"

    def _exceeded(self, which: str) -> DeadlineExceeded:
        setting = SETTINGS[which]
        if which == "stall":
            quiet = seconds_text(self.stall or 0)
            if not self.has_response:
                reason = f"no response from the server for {quiet}"
            else:
                reason = f"the stream stalled: no content for {quiet}"
            return DeadlineExceeded(f"{reason} ({setting})", setting)
        if which == "attempt":
            return DeadlineExceeded(f"the answer took longer than {seconds_text(self.limits.attempt or 0)} "
                                    f"({setting})", setting)
        return DeadlineExceeded(self._state(), setting)
