"""ToolConfig and RunResult: how the loop treats tools and context, and what a run returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentica_cli.agent.events import StopReason
from agentica_cli.models.base import TokenUsage


@dataclass
class ToolConfig:
    """Limits and context management for an Agent's runs.

    tool_call_limit: tool calls allowed per run (None: no limit); past it the model is told
        tools are exhausted, tools are no longer offered, and it must answer.
    compress_tool_results: shorten old tool results larger than `compress_threshold_chars`
        (keeping `compress_keep_chars` at each end) in what is sent to the model; the
        history itself keeps them whole.
    context_overflow_threshold / context_window: when the prompt reaches threshold x window
        tokens (the API's reported usage, or an estimate), older messages are summarised by
        the model into one message; the last `compact_keep_messages` stay as they are.
        context_window None: the model's own figure.
    max_turns: model requests per run before the loop gives up (stop_reason "max_turns").
    max_result_tokens: the budget of one tool result (any tool; about 4 characters a token).
        A larger result is saved whole under `result_dir` and the model gets its head, its
        tail and the file's path to page through. None: no limit.
    result_dir: where such results are saved (the CLI: the session's folder); None: a
        private temporary folder removed when Python exits.
    """

    tool_call_limit: int | None = None
    compress_tool_results: bool = False
    compress_threshold_chars: int = 6000
    compress_keep_chars: int = 1500
    context_overflow_threshold: float = 0.8
    context_window: int | None = None
    compact_keep_messages: int = 4
    max_turns: int = 100
    max_result_tokens: int | None = 25_000
    result_dir: str | None = None


@dataclass
class RunResult:
    """What `Agent.run()` returns: the final answer and this run's figures."""

    content: str
    messages: list[dict[str, Any]]
    usage: TokenUsage = field(default_factory=TokenUsage)
    stop_reason: StopReason = "completed"
    error: str | None = None  # the Error event's message when stop_reason is "error"
