"""What every model client gives the agent loop: a stream of deltas, then one ModelResponse."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None  # US dollars, when the provider reports it (OpenRouter's usage.cost)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        costs = [c for c in (self.cost, other.cost) if c is not None]
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
            sum(costs) if costs else None,
        )


@dataclass
class ToolCallRequest:
    """A tool call as the model asked for it; `arguments` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str
    # What the provider attached to this call and wants back with it: Gemini's
    # `{"google": {"thought_signature": ...}}`. Kept in the history; the dialect decides.
    extra_content: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        call = {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}
        if self.extra_content:
            call["extra_content"] = self.extra_content
        return call


FINISH_NOTICES = {
    "length": "The answer was cut off at the output token limit (finish_reason {raw}).",
    "content_filter": "The provider's content filter stopped the answer (finish_reason {raw}).",
    "refusal": "The model refused to answer.",
    "empty": "The model returned an empty answer (finish_reason {raw}); some servers do that when the "
             "prompt does not fit their context.",
}


@dataclass
class ModelResponse:
    """One complete answer of the model (the successful attempt only).

    `finish_reason` is ours, the same for every provider: "stop", "tool_calls", "length",
    "content_filter" or "refusal" (agentica_cli.models.dialects.normalize_finish);
    `raw_finish_reason` what the provider said. `reasoning_details` (OpenRouter) and each
    call's `extra_content` (Gemini) are kept to be sent back as they came.
    """

    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: TokenUsage | None = None
    finish_reason: str = "stop"
    raw_finish_reason: str = ""
    reasoning_details: list[dict[str, Any]] | None = None
    refusal: str = ""

    def to_message(self) -> dict[str, Any]:
        """The assistant message for the history, in chat completions format, with what any
        provider may want back (the model's dialect picks what is sent: models/dialects.py)."""
        # null content is only valid beside tool calls; an empty answer (a reasoning-only
        # turn, an answer cut at max_tokens) is "" or the next request is rejected.
        message: dict[str, Any] = {"role": "assistant", "content": self.content or (None if self.tool_calls else "")}
        if self.tool_calls:
            message["tool_calls"] = [tc.to_dict() for tc in self.tool_calls]
        if self.reasoning:
            # Thinking models (DeepSeek, Kimi) want reasoning back in later requests, and
            # answer 400 without it; which messages and under which name is the dialect's.
            message["reasoning_content"] = self.reasoning
        if self.reasoning_details:
            message["reasoning_details"] = self.reasoning_details
        return message

    def notice(self) -> str | None:
        """What the user should be told about how this answer ended; None when it ended normally."""
        raw = self.raw_finish_reason or self.finish_reason
        if self.finish_reason in FINISH_NOTICES:
            return FINISH_NOTICES[self.finish_reason].format(raw=raw)
        if not self.content and not self.tool_calls:
            return FINISH_NOTICES["empty"].format(raw=raw)
        return None


@dataclass
class ModelTextDelta:
    text: str


@dataclass
class ModelReasoningDelta:
    text: str


def seconds_text(seconds: float) -> str:
    """A duration for people: "2 s", "0.5 s", "1.2 s", "20 s"."""
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


@dataclass
class ModelRetry:
    """Attempt number `attempt` (1-based) failed and the request is sent again after `delay`
    seconds; `max_attempts` is the most there will be (0: not known). Text streamed since the
    attempt began is void: the retry starts the answer again from scratch."""

    attempt: int
    delay: float
    reason: str
    max_attempts: int = 0

    def describe(self) -> str:
        """For people: `retrying in 2 s (attempt 2 of 5): HTTP 503: overloaded`."""
        of = f" of {self.max_attempts}" if self.max_attempts else ""
        reason = self.reason if len(self.reason) <= 300 else self.reason[:299] + "…"
        return f"retrying in {seconds_text(self.delay)} (attempt {self.attempt + 1}{of}): {reason}"


ModelStreamEvent = ModelTextDelta | ModelReasoningDelta | ModelRetry | ModelResponse


class ModelError(Exception):
    """The model request failed for good (after retries, or a non-retryable status)."""

    def __init__(self, message: str, *, status_code: int | None = None, kind: str = "api"):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        # "api", "auth", "connection", "timeout", "config", "context_length" (too long for the
        # context: the agent compacts and retries once), "billing", "rate_limit"
        self.kind = kind


class MissingApiKeyError(ModelError):
    """No API key configured; the message names the environment variable to set."""

    def __init__(self, provider: str, env_var: str):
        super().__init__(
            f"No API key for {provider}: set the {env_var} environment variable "
            f"(or pass api_key=... / --api-key).",
            kind="config",
        )
        self.provider = provider
        self.env_var = env_var


class Model:
    """Base for model clients. Subclasses implement `response_stream`."""

    id: str = ""
    provider: str = ""
    context_window: int | None = None

    def response_stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> AsyncIterator[ModelStreamEvent]:
        """Yield text/reasoning deltas and retry notices, then exactly one ModelResponse.

        Raises ModelError when the request fails for good.
        """
        raise NotImplementedError

    async def response(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> ModelResponse:
        final: ModelResponse | None = None
        async for event in self.response_stream(messages, tools):
            if isinstance(event, ModelResponse):
                final = event
        if final is None:
            raise ModelError("the model returned no response")
        return final

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"

