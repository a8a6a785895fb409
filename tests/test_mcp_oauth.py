"""OAuth for a remote MCP server, against a local authorization server built from the SDK's
server auth pieces (tests/mcp_servers/oauth_server.py): discovery, dynamic registration,
PKCE login through the redirect listener, tokens stored 0600, a refreshed token, logout."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import urllib.request
from pathlib import Path

import pytest
from mcp_servers.support import HERE, PYTHON

from agentica_cli.tools.mcp import McpServerError, McpTool
from agentica_cli.tools.mcp.oauth import McpOAuth


@pytest.fixture
def oauth_server():  # type: ignore[no-untyped-def]
    proc = subprocess.Popen([PYTHON, str(HERE / "oauth_server.py"), "--ttl", "2"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    yield f"http://127.0.0.1:{int(line.split()[1])}"
    proc.terminate()
    proc.wait(timeout=10)


def test_login_use_refresh_and_logout(tmp_path: Path, oauth_server: str) -> None:
    opened: list[str] = []

    def browser(url: str) -> None:
        """The user's browser: the authorization server approves and redirects to our listener."""
        opened.append(url)
        urllib.request.urlopen(url, timeout=10).read()  # follows the redirect to 127.0.0.1:<listener>

    async def open_url(url: str) -> None:
        await asyncio.to_thread(browser, url)

    store = tmp_path / "auth" / "remote.json"
    url = f"{oauth_server}/mcp"

    def oauth() -> McpOAuth:
        return McpOAuth("remote", url, open_url=open_url, storage_path=store)

    async def main() -> list[str]:
        answers = []
        async with McpTool(url=url, name="remote", oauth=oauth()) as mcp:
            answers.append(await mcp.call_tool("whoami"))
            await asyncio.sleep(2.5)  # the access token expires: the next call refreshes it
            answers.append(await mcp.call_tool("whoami"))
        async with McpTool(url=url, name="remote", oauth=oauth()) as mcp:  # a later session: stored tokens
            answers.append(await mcp.call_tool("whoami"))
        return answers

    answers = asyncio.run(main())
    assert len(opened) == 1  # one login; the refresh and the second session needed no browser
    assert "code_challenge=" in opened[0] and "code_challenge_method=S256" in opened[0]
    assert answers[0] == "token #1" and answers[1] == "token #2"
    assert answers[2] in ("token #2", "token #3")  # still valid, or refreshed again
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    saved = json.loads(store.read_text())
    assert saved["tokens"]["refresh_token"] and saved["client"]["client_id"]  # registered dynamically
    state = oauth()
    assert state.state == "logged in" and state.logout() and state.state == "not logged in"


def test_without_oauth_the_server_refuses_with_a_clear_error(oauth_server: str) -> None:
    async def main() -> None:
        with pytest.raises(McpServerError) as err:
            async with McpTool(url=f"{oauth_server}/mcp", name="remote", connect_timeout=10):
                pass
        assert "401" in str(err.value)

    asyncio.run(main())


def test_oauth_config_key(tmp_path: Path) -> None:
    from agentica_cli.tools.mcp.servers import McpConfigError, McpServerConfig

    config = McpServerConfig.from_dict("remote", {"url": "http://127.0.0.1:9/mcp", "oauth": True})
    tool = config.build_tool()
    assert tool.target.oauth is not None and tool.target.oauth.state == "not logged in"
    assert tool.target.oauth.storage.path.parent.name == "mcp-auth"
    with pytest.raises(McpConfigError, match="oauth applies to a 'url' server"):
        McpServerConfig.from_dict("local", {"command": "x", "oauth": True})
