"""The tool framework: no UI, no model."""

from agentica_cli.tools.base import Function, FunctionCall, RetryAgentRun, StopAgentRun, Tool
from agentica_cli.tools.context import ToolContext
from agentica_cli.tools.decorators import tool
from agentica_cli.tools.guardrails import ToolInputGuardrail, ToolOutputGuardrail

__all__ = [
    "Function",
    "FunctionCall",
    "RetryAgentRun",
    "StopAgentRun",
    "Tool",
    "ToolContext",
    "ToolInputGuardrail",
    "ToolOutputGuardrail",
    "tool",
]
