"""`sandbox = ...` in [mcp_servers.NAME]: a stdio server started inside the command sandbox."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agentica_cli.sandbox import best_backend
from agentica_cli.tools.base import FunctionCall
from agentica_cli.tools.mcp.servers import McpConfigError, McpServerConfig, McpServerSet

DEMO_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"


def test_the_sandbox_key_is_checked() -> None:
    with pytest.raises(McpConfigError, match="sandbox must be one of workspace-write, read-only, off"):
        McpServerConfig.from_dict("s", {"command": "x", "sandbox": "tight"})
    with pytest.raises(McpConfigError, match="applies to a 'command' server"):
        McpServerConfig.from_dict("s", {"url": "http://127.0.0.1:1/mcp", "sandbox": "read-only"})
    assert McpServerConfig.from_dict("s", {"command": "x"}).sandbox == "off"  # default: unconfined


@pytest.mark.skipif(best_backend() is None, reason="no sandbox backend (bubblewrap or Landlock) here")
def test_a_sandboxed_stdio_server_runs_inside_the_sandbox(tmp_path: Path) -> None:
    table = {"command": sys.executable, "args": [str(DEMO_SERVER)], "sandbox": "workspace-write",
             "include_tools": ["echo", "getenv"]}

    async def main() -> None:
        async with McpServerSet.from_tables({"s": table}, base_dir=tmp_path, log_dir=tmp_path / "logs") as servers:
            assert await servers.wait_ready(timeout=20), servers.status("s")
            (tool,) = servers.tools
            echoed = await FunctionCall(tool.functions["s__echo"], "c1", {"text": "hi"}).execute()
            assert echoed.error is None and "hi" in str(echoed.result)
            tmp = await FunctionCall(tool.functions["s__getenv"], "c2", {"name": "TMPDIR"}).execute()
            assert "agentica-sandbox-" in str(tmp.result)  # the sandbox's private temp folder

    asyncio.run(main())
