"""Helpers for the builtin tools tests: run a tool function the way the agent loop does."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentica_cli.tools.base import FunctionCall, Tool
from agentica_cli.tools.context import ToolContext


def call_tool(tool: Tool, name: str, tool_context: ToolContext | None = None, **arguments: Any) -> FunctionCall:
    """Validate JSON arguments against the schema and execute, as the loop does."""
    call = FunctionCall(tool.functions[name], call_id="call_1", arguments=json.dumps(arguments))
    return asyncio.run(call.execute(tool_context))
