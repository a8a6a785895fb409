"""The REPL's SIGINT wakes its event loop even when the kernel gives the signal to another
thread (agentica_cli/tui/sigint_wakeup.py)."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time

import pytest

from agentica_cli.tui.sigint_wakeup import SigintWakeup

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not hasattr(signal, "pthread_kill"),
                                reason="POSIX signals delivered to a chosen thread")

NOTHING_DUE_S = 8.0  # the loop has nothing else to wake it for this long


def test_a_sigint_taken_by_another_thread_runs_the_handler_while_the_loop_sleeps() -> None:
    """A worker thread takes the signal while the main thread sleeps in the loop's poll with
    nothing due: Python's C handler only marks it for the main thread, so without the wakeup
    fd the handler would run when the loop next woke (here: its time-out, seconds later)."""
    previous = signal.getsignal(signal.SIGINT)
    sent: list[float] = []
    handled: list[float] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        wakeup = SigintWakeup(loop)
        wakeup.arm()
        done = loop.create_future()

        def handler(signum: int, frame: object) -> None:
            handled.append(time.monotonic())
            if not done.done():
                done.set_result(None)

        signal.signal(signal.SIGINT, handler)

        def worker() -> None:
            time.sleep(0.3)  # the main thread is asleep in the poll by then
            sent.append(time.monotonic())
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # to this thread, not the main one

        thread = threading.Thread(target=worker)
        thread.start()
        try:
            await asyncio.wait({done}, timeout=NOTHING_DUE_S)
        finally:
            thread.join()
            wakeup.close()

    try:
        asyncio.run(scenario())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent and handled
    # The latency of the handler itself: milliseconds with the wakeup fd, the whole
    # NOTHING_DUE_S without it.
    assert handled[0] - sent[0] < NOTHING_DUE_S / 2
