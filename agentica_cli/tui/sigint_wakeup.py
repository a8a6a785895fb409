"""Waking the REPL's event loop when SIGINT arrives, whichever thread the kernel gave it to.

The kernel hands a signal sent to the process to any thread that does not block it. Python's
C handler then only marks it for the main thread, which runs the Python-level handler at its
next bytecode. When the signal lands on another thread (the preload, the checkpoint worker,
asyncio's child watcher) while the event loop sleeps in epoll with nothing due (a `!sleep 30`
that prints nothing), Ctrl-C did nothing until the next output or timer. With a wakeup fd
(`signal.set_wakeup_fd`) the C handler also writes a byte to a socket the loop watches, so the
loop wakes and the main thread runs the handler at once.

prompt_toolkit handles SIGINT itself while a prompt runs (asyncio's `add_signal_handler`, which
sets the loop's own wakeup fd) and clears the wakeup fd when the prompt ends, so `arm()` is
called again whenever the REPL sets what Ctrl-C should do.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket


class SigintWakeup:
    def __init__(self, loop: asyncio.AbstractEventLoop):
        self._loop = loop
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        loop.add_reader(self._reader.fileno(), self._drain)

    def arm(self) -> None:
        """Make the signal handler write to our socket (main thread only, as the signal module requires)."""
        with contextlib.suppress(ValueError):  # not the main thread, or the socket is closed: nothing to wake
            signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)

    def _drain(self) -> None:
        # The bytes only wake the loop: the Python-level handler does the work.
        with contextlib.suppress(OSError):
            while self._reader.recv(512):
                pass

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(-1)
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._reader.fileno())
        self._reader.close()
        self._writer.close()
