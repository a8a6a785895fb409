"""agentica: a terminal coding agent, and the tool framework under it.

Heavy parts (the agent loop, model clients, MCP) are imported on first use so that
`import agentica_cli` and `agentica --help` stay fast.
"""

from __future__ import annotations

from importlib import import_module

# Not `from typing import TYPE_CHECKING`: `typing` (and `re` under it) is ~7 ms that
# `agentica --version` and a batch's start before its zygote need not pay.
TYPE_CHECKING = False

__version__ = "0.1.0"

_LAZY = {
    "Tool": "agentica_cli.tools.base",
    "Function": "agentica_cli.tools.base",
    "FunctionCall": "agentica_cli.tools.base",
    "StopAgentRun": "agentica_cli.tools.base",
    "RetryAgentRun": "agentica_cli.tools.base",
    "ToolContext": "agentica_cli.tools.context",
    "tool": "agentica_cli.tools.decorators",
    "ToolInputGuardrail": "agentica_cli.tools.guardrails",
    "ToolOutputGuardrail": "agentica_cli.tools.guardrails",
    "UserInputTool": "agentica_cli.tools.user_input",
    "McpTool": "agentica_cli.tools.mcp",
    "Agent": "agentica_cli.agent",
    "DeepAgent": "agentica_cli.deep",
    "ToolConfig": "agentica_cli.agent",
    "RunResult": "agentica_cli.agent",
    "OpenAIChat": "agentica_cli.models",
    "ZhipuAI": "agentica_cli.models",
    "DeepSeek": "agentica_cli.models",
    "Moonshot": "agentica_cli.models",
    "Qwen": "agentica_cli.models",
    "OpenRouter": "agentica_cli.models",
    "Ollama": "agentica_cli.models",
    "OpenAILike": "agentica_cli.models",
}

__all__ = ["__version__", *_LAZY]

if TYPE_CHECKING:
    from typing import Any

    from agentica_cli.tools.base import Function, FunctionCall, RetryAgentRun, StopAgentRun, Tool  # noqa: F401
    from agentica_cli.tools.decorators import tool  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:  # the toolkits (ArxivTool, ...): their package's own lazy map, so one list to keep
        from agentica_cli.toolkits import _LAZY as toolkit_modules

        module = toolkit_modules.get(name)
    if module is None:
        raise AttributeError(f"module 'agentica_cli' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
