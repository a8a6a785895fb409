"""The tool framework: no UI, no model.

Names are imported on first use, so that importing one light submodule (e.g. the MCP
config keys the CLI checks at startup) does not pay for asyncio and the rest.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_LAZY = {
    "Function": "agentica_cli.tools.base",
    "FunctionCall": "agentica_cli.tools.base",
    "RetryAgentRun": "agentica_cli.tools.base",
    "StopAgentRun": "agentica_cli.tools.base",
    "Tool": "agentica_cli.tools.base",
    "ToolContext": "agentica_cli.tools.context",
    "ToolInputGuardrail": "agentica_cli.tools.guardrails",
    "ToolOutputGuardrail": "agentica_cli.tools.guardrails",
    "tool": "agentica_cli.tools.decorators",
}

__all__ = list(_LAZY)

if TYPE_CHECKING:
    from agentica_cli.tools.base import Function, FunctionCall, RetryAgentRun, StopAgentRun, Tool  # noqa: F401
    from agentica_cli.tools.context import ToolContext  # noqa: F401
    from agentica_cli.tools.decorators import tool  # noqa: F401
    from agentica_cli.tools.guardrails import ToolInputGuardrail, ToolOutputGuardrail  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentica_cli.tools' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
