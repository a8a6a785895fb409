"""Prepare the model transport on a thread while a headless session starts.

`agentica -p` spends its first ~200 ms importing its modules and reading its settings before it
can send the first model request. The transport's own start (importing httpx2 and its connection
pool, and loading the CA certificates into a TLS context: 20 ms idle, 100 ms on a busy 2-core
machine) can run beside that, on a thread. Nothing waits for the thread: the first request takes
what it finished (imports and `chat_http.tls_context()` are each done once, under their own locks)
and does the rest itself.

The certificates are loaded only when the endpoint may be https: not when the command line named
a plain `http://` base URL (a local server: Ollama, vLLM, llama.cpp, a test server), whose
requests never use them. That is only a head start either way: the client itself loads them
before any request that reaches an https URL (a redirect too, chat_http's request hook), and an
https proxy's own TLS is httpcore2's.
"""

from __future__ import annotations

import sys
import threading

_started = False
_lock = threading.Lock()


def warm_transport(base_url: str | None = None) -> None:
    """Start the warm-up thread (once a process, and only when the transport is not loaded yet).
    `base_url`: the endpoint named on the command line, if any (None: not known yet, maybe https)."""
    global _started
    with _lock:
        if _started or "agentica_cli.models.chat_http" in sys.modules:
            return
        _started = True
    threading.Thread(target=_warm, args=(may_use_tls(base_url),), name="agentica-warm-transport", daemon=True).start()


def may_use_tls(base_url: str | None) -> bool:
    """False only for a base URL that is plain http (the scheme compared as URLs compare it)."""
    return base_url is None or not base_url.strip().lower().startswith("http://")


def _warm(load_certificates: bool) -> None:
    try:
        from agentica_cli.models import chat_http

        if load_certificates:
            chat_http.tls_context()
        # What the first connection imports (httpx2's transport runs on anyio's streams).
        import anyio._core._sockets
        import anyio._core._streams  # noqa: F401
    except Exception:
        pass  # the first request meets the same failure and reports it
