"""The typed events `Agent.run_stream()` yields. Every UI is a consumer of these.

Each event carries `source`: "" for the agent the caller runs, or a path such as
"task:call_3" for a sub-agent's events forwarded into its parent's stream, so a UI can
indent them under the task that produced them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentica_cli.tools.events import Event, ToolOutput  # what a tool emits lives with the tools

StopReason = Literal[
    "completed",  # the model answered without calling tools
    "stopped_by_tool",  # StopAgentRun or stop_after_tool_call
    "tool_call_limit",  # tool_call_limit reached and the model answered
    "max_turns",  # the loop gave up after too many model requests
    "cancelled",  # the caller cancelled the run (Ctrl-C)
    "error",  # the model/API failed for good
    "blocked",  # a UserPromptSubmit hook refused the prompt, or a hook said `continue: false`
    "truncated",  # the answer was cut at the output token limit (finish_reason length)
    "filtered",  # a content filter stopped the answer, or the model refused
    "empty",  # the model returned no answer at all
]


@dataclass
class TurnStarted(Event):
    """A run (one user prompt) begins."""

    prompt: str
    type: str = field(init=False, default="turn_started")


@dataclass
class ModelRequestStarted(Event):
    """The loop is about to send request number `step` (1-based) to the model."""

    step: int
    type: str = field(init=False, default="model_request_started")


@dataclass
class TextDelta(Event):
    """A piece of the assistant's visible text, as it streams."""

    text: str
    type: str = field(init=False, default="text_delta")


@dataclass
class ReasoningDelta(Event):
    """A piece of the model's reasoning text, for models that stream it separately."""

    text: str
    type: str = field(init=False, default="reasoning_delta")


@dataclass
class ToolCallStarted(Event):
    call_id: str
    name: str
    args: dict[str, Any]
    type: str = field(init=False, default="tool_call_started")


@dataclass
class ApprovalRequested(Event):
    """A destructive call waits for the caller's `approve` hook."""

    call_id: str
    name: str
    args: dict[str, Any]
    type: str = field(init=False, default="approval_requested")


@dataclass
class ToolCallFinished(Event):
    call_id: str
    name: str
    result: str
    error: str | None = None
    elapsed: float = 0.0
    # "ok", "error", "denied", "blocked", "cancelled", "malformed", "unknown_tool", "limit"
    status: str = "ok"
    show_result: bool = False
    type: str = field(init=False, default="tool_call_finished")


@dataclass
class Usage(Event):
    """Token usage of one model request, as the API reported it (or estimated)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False
    cost: float | None = None  # US dollars, when the provider reported it (OpenRouter's usage.cost)
    type: str = field(init=False, default="usage")


@dataclass
class Notice(Event):
    """Something the user should know that is neither text nor a tool call.

    `kind`: "retry" (a RetryNotice: a model request failed and is sent again; the text streamed since the
    last ModelRequestStarted of this source is void and the answer starts again), "compaction"
    (older messages were summarised), "warning", "info".
    """

    message: str
    kind: str = "info"
    type: str = field(init=False, default="notice")


@dataclass
class RetryNotice(Notice):
    """A notice of kind "retry", with its figures for programs: `attempt` is the attempt about
    to start (2 after the first failed), `max_attempts` the most there will be (0: not known),
    `delay` the seconds waited before it, `reason` why the last one failed."""

    kind: str = "retry"
    attempt: int = 0
    max_attempts: int = 0
    delay: float = 0.0
    reason: str = ""


@dataclass
class Checkpoint(Event):
    """A snapshot of the work tree was taken (the Agent's `checkpoints`): at the start of a
    turn, after a tool step that may have changed files, or at the end of a cancelled turn.
    `files`: paths changed since the previous snapshot; `skipped`: left out (too large)."""

    snapshot: str
    label: str
    turn: int
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    type: str = field(init=False, default="checkpoint")


@dataclass
class TurnFinished(Event):
    """The run is over. `reason` says why when that is not the answer: for "blocked", what the
    hook that refused the prompt said."""

    content: str
    stop_reason: StopReason = "completed"
    reason: str = ""
    type: str = field(init=False, default="turn_finished")


@dataclass
class Error(Event):
    """A failure that ended the run (after retries); `kind` is e.g. "api", "auth", "config"."""

    message: str
    kind: str = "api"
    status_code: int | None = None
    type: str = field(init=False, default="error")


AgentEvent = (
    TurnStarted
    | ModelRequestStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ApprovalRequested
    | ToolCallFinished
    | ToolOutput
    | Usage
    | Notice
    | Checkpoint
    | TurnFinished
    | Error
)
