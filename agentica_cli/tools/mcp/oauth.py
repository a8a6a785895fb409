"""OAuth for remote (SSE / streamable HTTP) MCP servers, on the SDK's OAuth client.

The SDK's `OAuthClientProvider` does the protocol: discovery (protected resource and
authorization server metadata), dynamic client registration, PKCE, the code exchange and
refreshing an expired access token. This module supplies what the SDK leaves to the host:

- `FileTokenStorage`: tokens and the registered client in one private file (0600) under
  ~/.agentica/mcp-auth/, one per server name and URL;
- `RedirectListener`: a one-shot HTTP listener on 127.0.0.1 (a free port) that receives the
  authorization server's redirect with the code;
- opening the authorization URL: the browser when there is one, else the URL is printed
  (over SSH: open it anywhere that can reach the listener, e.g. with port forwarding).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

LOGIN_TIMEOUT = 300.0  # seconds the user has to finish logging in

UrlOpener = Callable[[str], Awaitable[None] | None]


def auth_dir() -> Path:
    from agentica_cli.private_files import agentica_home

    return agentica_home() / "mcp-auth"


def token_path(server_name: str, url: str) -> Path:
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return auth_dir() / f"{server_name}-{digest}.json"


class FileTokenStorage:
    """The SDK's TokenStorage in one private JSON file."""

    def __init__(self, path: Path, *, client_id: str | None = None, client_secret: str | None = None,
                 scope: str | None = None):
        self.path = path
        # The registration is used only while it names our current redirect URI (the
        # listener's port changes between logins): else the client registers again.
        self.redirect_uri: str | None = None
        # A client registered in advance (e.g. a provider without dynamic registration):
        # always this one, never a registration of our own.
        self.client_id, self.client_secret, self.scope = client_id, client_secret, scope

    def _read(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def _write(self, data: dict[str, Any]) -> None:
        from agentica_cli.private_files import open_private

        with open_private(self.path, "w", encoding="utf-8") as f:
            json.dump(data, f)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: Any) -> None:
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self._write(data)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        if self.client_id is not None:
            return OAuthClientInformationFull(
                client_id=self.client_id, client_secret=self.client_secret,
                token_endpoint_auth_method="client_secret_post" if self.client_secret else "none",
                redirect_uris=[self.redirect_uri] if self.redirect_uri else None,  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"], response_types=["code"], scope=self.scope)
        raw = self._read().get("client")
        if not raw:
            return None
        info = OAuthClientInformationFull.model_validate(raw)
        if self.redirect_uri is not None and self.redirect_uri not in [str(u) for u in info.redirect_uris or ()]:
            return None
        return info

    async def set_client_info(self, client_info: Any) -> None:
        if self.client_id is not None:
            return  # the configured client is not ours to replace
        data = self._read()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)

    def logged_in(self) -> bool:
        return bool(self._read().get("tokens"))

    def logout(self) -> bool:
        """Forget the tokens and the registration; True if there was something to forget."""
        try:
            self.path.unlink()
            return True
        except FileNotFoundError:
            return False


class RedirectListener:
    """Receives one OAuth redirect on http://127.0.0.1:<port>/callback."""

    def __init__(self, port: int = 0) -> None:
        self._result: dict[str, str] | None = None
        self._done = threading.Event()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                query = parse_qs(urlparse(self.path).query)
                params = {k: v[0] for k, v in query.items()}
                ok = "code" in params
                body = ("Logged in: you can close this page and go back to agentica." if ok
                        else f"Login failed: {params.get('error_description') or params.get('error') or 'no code'}")
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.end_headers()
                self.wfile.write(body.encode())
                if listener._result is None:
                    listener._result = params
                    listener._done.set()

        try:
            self._server = HTTPServer(("127.0.0.1", port), Handler)
        except OSError as err:  # a fixed port (oauth_callback_port) that is taken
            raise RuntimeError(f"cannot listen for the OAuth redirect on 127.0.0.1:{port}: {err.strerror}") from None
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def wait(self, timeout: float = LOGIN_TIMEOUT) -> dict[str, str]:
        if not await asyncio.to_thread(self._done.wait, timeout):
            raise TimeoutError(f"no login within {timeout:g} s")
        assert self._result is not None
        return self._result

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def default_opener(report: Callable[[str], None]) -> UrlOpener:
    """Open the URL in a browser when there is a display (and not over SSH); always print it."""

    def open_url(url: str) -> None:
        report(f"Log in to the MCP server in your browser: {url}")
        has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                           or sys.platform in ("darwin", "win32"))
        if os.environ.get("SSH_CONNECTION") or not has_display:
            return  # nobody could see a browser here: the printed URL is the way
        try:
            import webbrowser

            webbrowser.open(url)
        except Exception:
            pass

    return open_url


_PINNED: Any = None


def _pinned_scope_metadata() -> Any:
    """OAuthClientMetadata whose scope stays what was configured: the SDK otherwise replaces it
    with the scopes the server's 401 challenge or metadata names."""
    global _PINNED
    if _PINNED is None:
        from mcp.shared.auth import OAuthClientMetadata

        class PinnedScopeMetadata(OAuthClientMetadata):
            def __setattr__(self, name: str, value: Any) -> None:
                if name == "scope" and getattr(self, "scope", None):
                    return
                super().__setattr__(name, value)

        _PINNED = PinnedScopeMetadata
    return _PINNED


class McpOAuth:
    """OAuth settings of one remote server: where its tokens live and how a login is shown."""

    def __init__(self, server_name: str, url: str, *, open_url: UrlOpener | None = None,
                 scope: str | None = None, storage_path: Path | None = None, client_id: str | None = None,
                 client_secret: str | None = None, callback_port: int | None = None):
        """scope: the scopes to ask for, space-separated (default: what the server's metadata
        says). client_id / client_secret: a client registered in advance with the redirect URI
        http://127.0.0.1:<callback_port>/callback (default: dynamic registration, any free port)."""
        self.server_name = server_name
        self.url = url
        self.scope = scope
        self.callback_port = callback_port
        self.storage = FileTokenStorage(storage_path or token_path(server_name, url), client_id=client_id,
                                        client_secret=client_secret, scope=scope)
        self.open_url = open_url or default_opener(lambda text: print(text, flush=True))
        self._listener: RedirectListener | None = None

    @property
    def state(self) -> str:
        return "logged in" if self.storage.logged_in() else "not logged in"

    def logout(self) -> bool:
        return self.storage.logout()

    def provider(self) -> Any:
        """The SDK's httpx2 Auth for this server (built when connecting)."""
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

        listener_holder = self

        async def redirect(url: str) -> None:
            result = listener_holder.open_url(url)
            if asyncio.iscoroutine(result):
                await result

        async def callback() -> Any:
            listener = listener_holder._ensure_listener()
            try:
                params = await listener.wait()
            finally:
                listener.close()
                listener_holder._listener = None
            if "code" not in params:
                raise RuntimeError(f"login failed: {params.get('error_description') or params.get('error')}")
            return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

        listener = self._ensure_listener()
        self.storage.redirect_uri = listener.redirect_uri
        metadata = (_pinned_scope_metadata() if self.scope else OAuthClientMetadata)(
            client_name="agentica",
            redirect_uris=[listener.redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=self.scope,
        )
        return OAuthClientProvider(server_url=self.url, client_metadata=metadata, storage=self.storage,
                                   redirect_handler=redirect, callback_handler=callback)

    def _ensure_listener(self) -> RedirectListener:
        if self._listener is None:
            self._listener = RedirectListener(self.callback_port or 0)
        return self._listener

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
