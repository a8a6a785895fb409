"""Prepare the model transport on a thread while a headless session starts.

`agentica -p` spends its first ~200 ms importing its modules and reading its settings before it
can send the first model request. The transport's own start (importing its HTTP client: httpx2 and
its connection pool where a proxy is set, else models/http1.py; and loading the CA certificates
into a TLS context: 20 ms idle, 100 ms on a busy 2-core machine) can run beside that, on a
thread. Nothing waits for the thread: the first request takes what it finished (imports and
`chat_http.tls_context()` are each done once, under their own locks) and does the rest itself.

The certificates are loaded only when the endpoint may be https: not for a plain `http://` base
URL (a local server: Ollama, vLLM, llama.cpp, a test server), whose requests never use them.
The command line may name it (then the thread knows at once); else the thread does the imports
first and then waits, briefly, for `endpoint_known(url)`, called once the settings are read (a
base URL set in a config file). That is only a head start either way: the client itself loads them
before any connection to an https URL (a redirect too), and an https proxy's own TLS is httpcore2's.
"""

from __future__ import annotations

import sys
import threading

_started = False
_lock = threading.Lock()
_endpoint: list[str | None] = []  # the base URL the settings resolved, once known (endpoint_known)
_endpoint_known = threading.Event()
ENDPOINT_WAIT = 2.0  # seconds the thread waits for the settings; past that it loads the certificates


def warm_transport(base_url: str | None = None) -> None:
    """Start the warm-up thread (once a process, and only when the transport is not loaded yet).
    `base_url`: the endpoint named on the command line, if any (None: not known yet, maybe https)."""
    global _started
    with _lock:
        if _started or "agentica_cli.models.chat_http" in sys.modules:
            return
        _started = True
    threading.Thread(target=_warm, args=(base_url,), name="agentica-warm-transport", daemon=True).start()


def endpoint_known(base_url: str | None) -> None:
    """The settings are read: `base_url` is where requests go (None: the provider's, https)."""
    if not _endpoint_known.is_set():
        _endpoint.append(base_url)
        _endpoint_known.set()


def may_use_tls(base_url: str | None) -> bool:
    """False only for a base URL that is plain http (the scheme compared as URLs compare it)."""
    return base_url is None or not base_url.strip().lower().startswith("http://")


def _warm(base_url: str | None) -> None:
    try:
        import importlib

        from agentica_cli.models import chat_http, http1  # noqa: F401 (the direct client, imported ahead)

        if base_url is None and _endpoint_known.wait(ENDPOINT_WAIT) and _endpoint:
            base_url = _endpoint[0]  # the command line named none: the settings' (maybe a config file's)
        for name in chat_http.transport_modules(base_url):  # httpx2's stack, where it will send
            importlib.import_module(name)
        if may_use_tls(base_url):
            chat_http.tls_context()
    except Exception:
        pass  # the first request meets the same failure and reports it
