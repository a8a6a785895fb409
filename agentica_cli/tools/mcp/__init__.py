"""MCP (Model Context Protocol) support, on the official `mcp` SDK.

    from agentica_cli.tools.mcp import McpTool

Modules: `tool` (McpTool, one server as agent Functions), `connection` (the live session),
`process` (stdio server processes), `results` (tool results as text), `servers` (the CLI's
configured server set), `keys` (config table keys). The names of `tool` are re-exported
here lazily, so importing `agentica_cli.tools.mcp.keys` (the CLI's config check) stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["McpServerError", "McpTool", "McpToolError"]
_SUBMODULES = {"tool", "connection", "process", "results", "servers", "keys", "env_refs"}


def __getattr__(name: str) -> Any:
    if name.startswith("__") or name in _SUBMODULES:  # `from . import x` imports the module itself
        raise AttributeError(name)
    import importlib

    tool = importlib.import_module("agentica_cli.tools.mcp.tool")
    try:
        return getattr(tool, name)
    except AttributeError:
        raise AttributeError(f"module 'agentica_cli.tools.mcp' has no attribute {name!r}") from None
