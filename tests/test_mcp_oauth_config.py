"""OAuth settings of a `[mcp_servers.NAME]` table and `agentica mcp add --oauth`: scopes, a
client registered in advance (id, secret from ${VAR}, a fixed callback port), checked against
the local authorization server (tests/mcp_servers/oauth_server.py --client ...)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from cli_support import run_cli
from mcp_servers.support import HERE, PYTHON

from agentica_cli.tools.mcp.oauth import McpOAuth
from agentica_cli.tools.mcp.servers import McpConfigError, McpServerConfig, McpServerSet


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_preregistered_client_with_scopes_and_a_fixed_callback_port(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRACKER_SECRET", "s3cret")
    port = free_port()
    proc = subprocess.Popen([PYTHON, str(HERE / "oauth_server.py"), "--ttl", "60", "--client", f"abc:s3cret:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    opened: list[str] = []

    async def browser(address: str) -> None:  # the authorization server approves and redirects at once
        opened.append(address)
        await asyncio.to_thread(lambda: urllib.request.urlopen(address, timeout=10).read())

    async def main() -> str:
        servers = McpServerSet.from_tables({"tracker": {
            "url": url, "oauth_client_id": "abc", "oauth_client_secret": "${TRACKER_SECRET}",
            "oauth_scopes": ["read"], "oauth_callback_port": port}})
        tool = servers.tools[0]
        assert isinstance(tool.target.oauth, McpOAuth)
        tool.target.oauth.open_url = browser
        servers.start()
        try:
            assert await servers.wait_ready(timeout=30), servers.statuses()[0].error
            assert servers.statuses()[0].auth == "logged in"
            return await tool.call_tool("granted")
        finally:
            await servers.close()

    try:
        granted = asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert granted == "abc: read"  # our client, and only the scope asked for
    query = parse_qs(urlparse(opened[0]).query)
    assert query["client_id"] == ["abc"] and query["scope"] == ["read"]
    assert query["redirect_uri"] == [f"http://127.0.0.1:{port}/callback"]
    stored = json.loads(next((tmp_path / "home" / "mcp-auth").glob("tracker-*.json")).read_text())
    assert stored["tokens"]["access_token"] and "client" not in stored  # nothing registered dynamically


@pytest.mark.parametrize(("table", "error"), [
    ({"url": "http://h/mcp", "oauth": False, "oauth_scopes": ["a"]}, "oauth = false, but oauth_scopes set"),
    ({"url": "http://h/mcp", "oauth_client_secret": "x"}, "oauth_client_secret needs oauth_client_id"),
    ({"url": "http://h/mcp", "oauth_callback_port": 70000}, "must be a port number"),
    ({"command": "x", "oauth_scopes": ["a"]}, "oauth applies to a 'url' server"),
])
def test_bad_oauth_settings_are_clear_errors(table: dict, error: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(McpConfigError, match=error):
        McpServerConfig.from_dict("s", table)


def test_mcp_add_with_oauth_options(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = run_cli(["mcp", "add", "tracker", "--url", "https://tracker.example/mcp", "--oauth-scope", "read",
                    "--oauth-scope", "write", "--oauth-client-id", "abc", "--oauth-client-secret", "${TRACKER_SECRET}",
                    "--oauth-callback-port", "8765"], cwd=tmp_path, home=home)
    assert proc.returncode == 0, proc.stderr
    assert "logs in with OAuth when it first starts" in proc.stdout
    from agentica_cli.app.settings.config import load_toml

    table = load_toml(home / "config.toml")["mcp_servers"]["tracker"]
    assert table == {"url": "https://tracker.example/mcp", "oauth": True, "oauth_scopes": ["read", "write"],
                     "oauth_client_id": "abc", "oauth_client_secret": "${TRACKER_SECRET}",
                     "oauth_callback_port": 8765}
    from agentica_cli.cli.mcp_config_edit import describe_server

    assert describe_server(table) == "http https://tracker.example/mcp  (OAuth, scopes: read write)"
