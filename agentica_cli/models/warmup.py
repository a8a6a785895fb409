"""Prepare the model transport on a thread while a headless session starts.

`agentica -p` spends its first ~200 ms importing its modules and reading its settings before it
can send the first model request. The transport's own start (importing httpx2 and its connection
pool, and loading the CA certificates into a TLS context: 20 ms idle, 100 ms on a busy 2-core
machine, with the GIL released while OpenSSL reads the files) can run beside that, on a thread.
Nothing waits for the thread: the first request takes what it finished (imports and
`chat_http.tls_context()` are each done once, under their own locks) and does the rest itself.
"""

from __future__ import annotations

import sys
import threading

_started = False
_lock = threading.Lock()


def warm_transport() -> None:
    """Start the warm-up thread (once a process, and only when the transport is not loaded yet)."""
    global _started
    with _lock:
        if _started or "agentica_cli.models.chat_http" in sys.modules:
            return
        _started = True
    threading.Thread(target=_warm, name="agentica-warm-transport", daemon=True).start()


def _warm() -> None:
    try:
        from agentica_cli.models import chat_http

        chat_http.tls_context()
        # What the first connection imports (httpx2's transport runs on anyio's streams).
        import anyio._core._sockets
        import anyio._core._streams  # noqa: F401
    except Exception:
        pass  # the first request meets the same failure and reports it
