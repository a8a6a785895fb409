"""An MCP server behind OAuth on 127.0.0.1, built from the SDK's server auth pieces: it is
its own authorization server (metadata discovery, dynamic client registration, PKCE
authorization codes, refresh tokens) and serves streamable HTTP at /mcp to bearer tokens.

The authorization endpoint approves at once (no login page) and redirects with a code.
Access tokens live `--ttl` seconds (default 2), so a client must refresh. Prints
`PORT <n>` once listening. Tool `whoami` says which access token generation called it,
`granted` the scopes of its token. `--client ID:SECRET:PORT` registers a client in advance
(redirect URI http://127.0.0.1:PORT/callback, scopes "read write"), as providers without
dynamic registration do.
"""

from __future__ import annotations

import secrets
import socket
import sys
import time
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.provider import AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl

# The server takes an access token a while past the `expires_in` it advertises. The client
# refreshes on its own clock (the test checks the new token generation); an exact expiry here
# raced the client's on a busy machine (int() rounding, a slow reply) and a 401 sends the
# client back to a browser login.
SERVER_GRACE_S = 10


class MemoryProvider:
    def __init__(self, ttl: int):
        self.ttl = ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}
        self.generation: dict[str, int] = {}  # access token -> how many were issued before it
        self.issued = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        state = f"&state={params.state}" if params.state else ""
        return f"{params.redirect_uri}?code={code}{state}"

    async def load_authorization_code(self, client: Any, authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        self.issued += 1
        access, refresh = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.ttl + SERVER_GRACE_S, resource=resource)
        self.generation[access] = self.issued
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.ttl, refresh_token=refresh,
                          scope=" ".join(scopes) or None)

    async def exchange_authorization_code(self, client: Any, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client: Any, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: Any, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


async def serve(argv: list[str]) -> None:
    ttl = int(argv[argv.index("--ttl") + 1]) if "--ttl" in argv else 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = MemoryProvider(ttl)
    if "--client" in argv:
        client_id, secret, redirect_port = argv[argv.index("--client") + 1].split(":")
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, client_secret=secret, token_endpoint_auth_method="client_secret_post",
            redirect_uris=[f"http://127.0.0.1:{redirect_port}/callback"], scope="read write",  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    server = MCPServer("oauth-demo", auth_server_provider=provider, auth=AuthSettings(
        issuer_url=AnyHttpUrl(base), resource_server_url=AnyHttpUrl(f"{base}/mcp"),
        client_registration_options=ClientRegistrationOptions(enabled=True), validate_token_resource=True))

    @server.tool()
    def whoami() -> str:
        """Which token generation is calling."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"token #{provider.generation.get(token.token, 0) if token else 0}"

    @server.tool()
    def granted() -> str:
        """The scopes and client of the calling token."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"{token.client_id}: {' '.join(token.scopes) or '(no scopes)'}" if token else "(no token)"

    app = server.streamable_http_app(streamable_http_path="/mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(serve, sys.argv[1:])
