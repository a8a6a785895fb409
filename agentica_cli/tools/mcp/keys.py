"""The keys of a `[mcp_servers.NAME]` config table and the type each must have.

One list for both readers: `McpServerConfig.from_dict` and the CLI's config check. Kept
apart from `mcp_servers` so the config check need not import the MCP machinery.
"""

from __future__ import annotations

CONFIG_KEYS: dict[str, str] = {
    "command": "str",
    "args": "list[str]",
    "env": "dict[str,str]",
    "cwd": "str",
    "url": "str",
    "headers": "dict[str,str]",
    "headers_helper": "str",  # a url server's: a shell command whose stdout (a JSON object) adds headers
    "transport": "str",
    "enabled": "bool",
    "timeout": "float",
    "connect_timeout": "float",
    "include_tools": "list[str]",
    "exclude_tools": "list[str]",
    "sandbox": "str",  # a stdio server's OS sandbox: one of SANDBOX_MODES (default "off")
    "sandbox_network": "bool",  # a sandboxed server may open network connections
    "sandbox_unix_sockets": "bool",  # a sandboxed server may create Unix sockets (docker, a database's socket)
    "protocol": "str",  # "auto" (default) or "legacy": the 2025 handshake at once
    "oauth": "bool",  # a url server behind OAuth: log in through the browser, tokens in ~/.agentica/mcp-auth
    # Any of these implies oauth = true:
    "oauth_scopes": "list[str]",  # the scopes to ask for (default: what the server says it needs)
    "oauth_client_id": "str",  # a client registered in advance (no dynamic registration)
    "oauth_client_secret": "str",  # its secret, if it has one (${VAR} is expanded)
    "oauth_callback_port": "int",  # a fixed port (1-65535) for the redirect (a pre-registered redirect URI)
}
OAUTH_KEYS = ("oauth_scopes", "oauth_client_id", "oauth_client_secret", "oauth_callback_port")
PROTOCOLS = ("auto", "legacy")
SANDBOX_MODES = ("workspace-write", "read-only", "off")  # agentica_cli.sandbox.MODES
TRANSPORTS = ("stdio", "sse", "streamable-http", "http")
