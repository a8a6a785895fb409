"""In-process fake models for fast tests of session logic: no HTTP, no threads.

`ScriptedModel(turns)` plays the same scripts as `ScriptedModelServer` (built with
`agentica_cli.testing.turns`); `FunctionModel(fn)` asks a function for each answer, as
pydantic-ai's FunctionModel does. Both record every request as the body an HTTP client would
have sent (`{"model", "messages", "tools"}`), so the helpers written for the server's
`requests` work on them too.

Like a real provider, and unlike a lenient fake, they refuse a history that breaks "every
tool call gets exactly one result, right after its assistant message" (OpenAI answers 400
to that), and tool calls to tools that were not offered. Use the HTTP server wherever the
transport matters (streams, retries, timeouts, headers); use these where only the
conversation does.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from agentica_cli.models.base import (
    Model,
    ModelError,
    ModelReasoningDelta,
    ModelResponse,
    ModelStreamEvent,
    ModelTextDelta,
    TokenUsage,
    ToolCallRequest,
)
from agentica_cli.testing.checks import tool_call_problems
from agentica_cli.testing.turns import Turn, validate

__all__ = ["FunctionModel", "ScriptedModel"]

# How an error turn's status reads to the loop, as models/openai_chat.py would classify it.
_ERROR_KINDS = {401: "auth", 403: "auth", 402: "billing", 429: "rate_limit"}
_TEXT_PIECE = 8  # characters per streamed text delta, so consumers see several deltas


def _history_problems(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[str]:
    problems = tool_call_problems(messages)
    offered = {t.get("function", {}).get("name") for t in tools or []}
    for i, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            name = call.get("function", {}).get("name")
            if name not in offered and tools is not None:
                problems.append(f"message {i}: a call to {name!r}, which is not among the tools")
            try:
                json.loads(call.get("function", {}).get("arguments") or "{}")
            except ValueError:
                problems.append(f"message {i}: the arguments of call {call.get('id')!r} are not JSON")
    return problems


class FunctionModel(Model):
    """A model whose answers come from `fn(request_body) -> turn` (a `turns.text(...)`,
    `turns.tool_calls(...)` or `turns.error(...)` dict)."""

    def __init__(self, fn: Callable[[dict[str, Any]], Turn], *, id: str = "fake-model",
                 context_window: int | None = None) -> None:
        self._fn = fn
        self.id = id
        self.provider = "fake"
        self.context_window = context_window
        self.requests: list[dict[str, Any]] = []
        self._call_ids = itertools.count(1)

    async def response_stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> AsyncIterator[ModelStreamEvent]:
        body: dict[str, Any] = {"model": self.id, "messages": copy.deepcopy(messages)}
        if tools:
            body["tools"] = copy.deepcopy(tools)
        self.requests.append(body)
        problems = _history_problems(body["messages"], tools)
        if problems:
            raise ModelError("invalid request (400): " + "; ".join(problems), status_code=400)
        turn = self._fn(body)
        validate(turn)
        kind = turn["type"]
        if kind == "error":
            status = int(turn["status"])
            raise ModelError(f"HTTP {status}: {turn['message']}", status_code=status,
                             kind=_ERROR_KINDS.get(status, "api"))
        if kind not in ("text", "tool_calls"):
            raise ModelError(f"the in-process fake model cannot play a {kind!r} turn (use ScriptedModelServer)")
        reasoning = turn.get("reasoning") or ""
        if reasoning:
            yield ModelReasoningDelta(reasoning)
        content = turn.get("content") or ""
        for start in range(0, len(content), _TEXT_PIECE):
            yield ModelTextDelta(content[start:start + _TEXT_PIECE])
        calls = [
            ToolCallRequest(id=c.get("id") or f"call_{next(self._call_ids)}", name=c["name"], arguments=c["arguments"])
            for c in turn.get("calls", [])
        ]
        usage = turn.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens", max(1, len(json.dumps(body)) // 4)))
        output_tokens = int(usage.get("completion_tokens", max(1, (len(content) + len(reasoning)) // 4)))
        yield ModelResponse(
            content=content, reasoning=reasoning, tool_calls=calls,
            usage=TokenUsage(input_tokens, output_tokens, input_tokens + output_tokens),
            finish_reason="tool_calls" if calls else "stop", raw_finish_reason="tool_calls" if calls else "stop",
        )


class ScriptedModel(FunctionModel):
    """Plays `turns` in order, one per request; a request after the last one is an error
    ("no scripted turn left"), as with the HTTP server. A turn may be a callable that gets the
    request body and returns the turn."""

    def __init__(self, turns: Iterable[Turn | Callable[[dict[str, Any]], Turn]], *, id: str = "scripted-model",
                 context_window: int | None = None) -> None:
        self._script = list(turns)
        self._next = 0
        super().__init__(self._play, id=id, context_window=context_window)

    def _play(self, body: dict[str, Any]) -> Turn:
        if self._next >= len(self._script):
            raise ModelError(f"no scripted turn left (request {self._next + 1}, script has {len(self._script)})",
                             status_code=400)
        turn = self._script[self._next]
        self._next += 1
        return turn(body) if callable(turn) else turn

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next
