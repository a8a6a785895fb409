"""A back-off shared by every agentica process of one batch: when one of them gets a 429, none
of them sends a model request until the Retry-After it was given has passed.

`agentica batch` names a file in AGENTICA_SHARED_BACKOFF for the sessions it starts; the file
holds the wall-clock time before which no request may start. Writers take a lock and only move
the time later; they replace the file whole, so readers need no lock. Without the variable
(every session outside a batch) both calls return at once. Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import time

ENV = "AGENTICA_SHARED_BACKOFF"
_LONGEST_WAIT = 300.0  # a damaged file cannot stop the batch for longer


def _read(path: str) -> float:
    try:
        with open(path) as handle:
            return float(handle.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def paused_until(path: str | None = None) -> float:
    """The wall-clock time before which no request may start (0: none)."""
    path = path or os.environ.get(ENV)
    return _read(path) if path else 0.0


async def wait_turn() -> float:
    """Wait while the batch is backing off; the seconds waited."""
    path = os.environ.get(ENV)
    if not path:
        return 0.0
    import asyncio  # here: the batch itself reads this module and needs no event loop

    started = time.time()
    while True:
        delay = min(_read(path), started + _LONGEST_WAIT) - time.time()
        if delay <= 0:
            return time.time() - started
        await asyncio.sleep(min(delay, 1.0))  # read again: another 429 may have moved it later


def hold(seconds: float, path: str | None = None) -> None:
    """Tell every process of the batch not to send a request for `seconds`."""
    path = path or os.environ.get(ENV)
    if not path or seconds <= 0:
        return
    try:
        with open(path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            until = time.time() + seconds
            if until > _read(path):
                temporary = f"{path}.{os.getpid()}"
                with open(temporary, "w") as handle:
                    handle.write(f"{until:.3f}\n")
                os.replace(temporary, path)
    except OSError:  # the batch's folder is gone: this process still backs off by itself
        pass
