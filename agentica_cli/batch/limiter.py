"""What the workers of one batch share: the rate-limit back-off and the batch's budget.

The back-off: every task is an `agentica -p` process; their model clients read and write one
file (agentica_cli.shared_backoff), so a 429 with Retry-After seen by one session stops
every session's next request until it has passed. A file rather than a server of our own: the
sessions are separate processes (isolation, a crash loses one task), the check is one small
read per request, and on Ray each node's tasks share their node's file (tasks on other nodes
back off on their own 429s).

The budget: --max-tokens and --max-cost count what every attempt used, running ones included
(their stream of usage events), and stop the batch when either is reached.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agentica_cli import shared_backoff


def backoff_file(batch_id: str) -> Path:
    """The back-off file of batch `batch_id` on this machine (made on first use)."""
    folder = Path(tempfile.gettempdir()) / f"agentica-batch-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"{batch_id}.backoff"


def paused_for(path: Path) -> float:
    """Seconds until the workers may send requests again (0: not backing off)."""
    return max(0.0, shared_backoff.paused_until(str(path)) - time.time())


@dataclass
class Prices:
    """USD per million tokens, for a cost where the provider reports none."""

    input: float | None = None
    output: float | None = None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.input is None and self.output is None:
            return None
        return (input_tokens * (self.input or 0.0) + output_tokens * (self.output or 0.0)) / 1_000_000


class Budget:
    """Tokens and cost of the whole batch; `exceeded()` says which limit is reached, if any."""

    def __init__(self, max_tokens: int | None = None, max_cost: float | None = None):
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self._lock = threading.Lock()
        self._finished_tokens = 0
        self._finished_cost = 0.0
        self._running: dict[str, tuple[int, float]] = {}

    def running(self, key: str, tokens: int, cost: float | None) -> None:
        with self._lock:
            self._running[key] = (tokens, cost or 0.0)

    def finished(self, key: str, tokens: int, cost: float | None) -> None:
        with self._lock:
            self._running.pop(key, None)
            self._finished_tokens += tokens
            self._finished_cost += cost or 0.0

    @property
    def tokens(self) -> int:
        with self._lock:
            return self._finished_tokens + sum(t for t, _ in self._running.values())

    @property
    def cost(self) -> float:
        with self._lock:
            return self._finished_cost + sum(c for _, c in self._running.values())

    def exceeded(self) -> str | None:
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"--max-tokens {self.max_tokens} reached ({self.tokens} tokens)"
        if self.max_cost is not None and self.cost >= self.max_cost:
            return f"--max-cost {self.max_cost:g} reached (${self.cost:.4f})"
        return None
