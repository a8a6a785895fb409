"""One run's events as OpenTelemetry spans and metrics.

    invoke_agent agentica            the turn (one prompt): the trace's root
      chat <model>                   each model request (retries inside it)
      execute_tool <name>            each tool call
        chat <model>                 a sub-agent's request, under the `task` call that ran it
        execute_tool <name>          ... and its tool calls

Names and attributes follow OpenTelemetry's GenAI conventions (gen_ai.*) where one exists,
agentica.* otherwise. Never recorded: prompts, answers, tool arguments or results (they may hold
secrets); a tool span has the tool's name, call id, duration and outcome only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import Counter, Histogram, Meter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agentica_cli.agent.events import (
    ApprovalRequested,
    Error,
    Event,
    ModelRequestStarted,
    RetryNotice,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    Usage,
)
from agentica_cli.agent.observers import ObservedAgent

AGENT_NAME = "agentica"


@dataclass
class Instruments:
    tracer: Tracer | None
    tokens: Counter | None = None
    cost: Counter | None = None
    tool_calls: Counter | None = None
    errors: Counter | None = None
    turns: Counter | None = None
    request_duration: Histogram | None = None

    @classmethod
    def create(cls, tracer: Tracer | None, meter: Meter | None) -> Instruments:
        if meter is None:
            return cls(tracer)
        return cls(
            tracer,
            tokens=meter.create_counter("agentica.tokens", unit="{token}",
                                        description="Tokens of model requests, by gen_ai.token.type"),
            cost=meter.create_counter("agentica.cost", unit="USD", description="Cost of model requests, where known"),
            tool_calls=meter.create_counter("agentica.tool_calls", unit="{call}",
                                            description="Tool calls, by tool and outcome"),
            errors=meter.create_counter("agentica.errors", unit="{error}",
                                        description="Model requests that failed for good, by error.type"),
            turns=meter.create_counter("agentica.turns", unit="{turn}", description="Turns, by stop reason"),
            request_duration=meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                                    description="Duration of model requests"),
        )


@dataclass
class _Request:
    span: Span | None
    started: float
    retries: int = 0


@dataclass
class _ToolCall:
    span: Span | None
    name: str


@dataclass
class TurnRecorder:
    """A RunObserver (agentica_cli/agent/observers.py) for one run of a top-level agent."""

    instruments: Instruments
    agent: ObservedAgent
    requests: dict[str, _Request] = field(default_factory=dict)  # source -> its open model request
    tools: dict[tuple[str, str], _ToolCall] = field(default_factory=dict)  # (source, call id) -> open call
    turn: Span | None = None
    model: str = ""
    provider: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    ended: bool = False

    def __post_init__(self) -> None:
        model = getattr(self.agent, "model", None)
        self.model = str(getattr(model, "id", None) or getattr(model, "name", None) or type(model).__name__)
        self.provider = str(getattr(model, "provider", "") or "")
        tracer = self.instruments.tracer
        if tracer is not None:
            self.turn = tracer.start_span(f"invoke_agent {AGENT_NAME}", kind=SpanKind.INTERNAL, attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT_NAME,
                "gen_ai.conversation.id": str(getattr(self.agent, "session_id", "") or ""),
                "gen_ai.request.model": self.model,
            })

    # -- events -------------------------------------------------------------------------

    def event(self, event: Event) -> None:
        source = event.source
        if isinstance(event, ModelRequestStarted):
            self._end_request(source, None)  # (a request never ends without Usage or Error: defensive)
            self.requests[source] = _Request(self._start(f"chat {self.model}", source, SpanKind.CLIENT, {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": self.model,
                **({"gen_ai.provider.name": self.provider} if self.provider else {}),
                "agentica.request.step": event.step,
            }), time.monotonic())
        elif isinstance(event, RetryNotice):
            request = self.requests.get(source)
            if request is not None:
                request.retries += 1
                if request.span is not None:
                    request.span.add_event("retry", {"agentica.retry.attempt": event.attempt,
                                                     "agentica.retry.delay_s": event.delay,
                                                     "agentica.retry.reason": event.reason[:200]})
        elif isinstance(event, Usage):
            self._usage(source, event)
        elif isinstance(event, Error):
            self._error(source, event)
        elif isinstance(event, ToolCallStarted):
            span = self._start(f"execute_tool {event.name}", source, SpanKind.INTERNAL, self._tool_attributes(event))
            self.tools[(source, event.call_id)] = _ToolCall(span, event.name)
        elif isinstance(event, ApprovalRequested):
            call = self.tools.get((source, event.call_id))
            if call is not None and call.span is not None:
                call.span.add_event("approval_requested")
        elif isinstance(event, ToolCallFinished):
            self._tool_finished(source, event)
        elif isinstance(event, TurnFinished) and not source:
            self._turn_finished(event.stop_reason)

    def finished(self, error: BaseException | None) -> None:
        if not self.ended:
            self._turn_finished("cancelled" if error is not None else "completed", error)

    # -- model requests -----------------------------------------------------------------

    def _usage(self, source: str, event: Usage) -> None:
        attributes = {"gen_ai.request.model": self.model}
        if self.instruments.tokens is not None:
            self.instruments.tokens.add(event.input_tokens, {**attributes, "gen_ai.token.type": "input"})
            self.instruments.tokens.add(event.output_tokens, {**attributes, "gen_ai.token.type": "output"})
        cost = getattr(event, "cost", None)  # set by models whose price is known
        if isinstance(cost, (int, float)) and self.instruments.cost is not None:
            self.instruments.cost.add(float(cost), attributes)
        if not source:
            self.input_tokens += event.input_tokens
            self.output_tokens += event.output_tokens
        request = self.requests.get(source)
        if request is not None and request.span is not None:
            request.span.set_attributes({"gen_ai.usage.input_tokens": event.input_tokens,
                                         "gen_ai.usage.output_tokens": event.output_tokens,
                                         "agentica.usage.estimated": event.estimated})
        self._end_request(source, None)

    def _error(self, source: str, event: Error) -> None:
        if self.instruments.errors is not None:
            self.instruments.errors.add(1, {"error.type": event.kind, "gen_ai.request.model": self.model})
        self._end_request(source, event)
        if not source and self.turn is not None:
            self.turn.set_status(Status(StatusCode.ERROR, event.kind))

    def _end_request(self, source: str, error: Error | None) -> None:
        request = self.requests.pop(source, None)
        if request is None:
            return
        elapsed = time.monotonic() - request.started
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": self.model}
        if error is not None:
            attributes["error.type"] = error.kind
        if self.instruments.request_duration is not None:
            self.instruments.request_duration.record(elapsed, attributes)
        span = request.span
        if span is None:
            return
        span.set_attributes({"agentica.request.retries": request.retries,
                             "agentica.request.latency_ms": round(elapsed * 1000, 1)})
        if error is not None:
            span.set_attribute("error.type", error.kind)
            if error.status_code is not None:
                span.set_attribute("http.response.status_code", error.status_code)
            span.set_status(Status(StatusCode.ERROR, error.kind))
        span.end()

    # -- tool calls ---------------------------------------------------------------------

    @staticmethod
    def _tool_attributes(event: ToolCallStarted | ToolCallFinished) -> dict[str, Any]:
        return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.name,
                "gen_ai.tool.call.id": event.call_id}

    def _tool_finished(self, source: str, event: ToolCallFinished) -> None:
        call = self.tools.pop((source, event.call_id), None)
        if call is None:  # refused before it started (malformed arguments, an unknown tool)
            start = time.time_ns() - int(event.elapsed * 1e9)
            call = _ToolCall(self._start(f"execute_tool {event.name}", source, SpanKind.INTERNAL,
                                         self._tool_attributes(event), start), event.name)
        if self.instruments.tool_calls is not None:
            self.instruments.tool_calls.add(1, {"gen_ai.tool.name": event.name, "agentica.tool.status": event.status})
        span = call.span
        if span is None:
            return
        span.set_attributes({"agentica.tool.status": event.status,
                             "agentica.tool.duration_ms": round(event.elapsed * 1000, 1)})
        if event.status != "ok":
            span.set_attribute("error.type", event.status)
            span.set_status(Status(StatusCode.ERROR, event.status))
        span.end()

    # -- the turn -----------------------------------------------------------------------

    def _turn_finished(self, stop_reason: str, error: BaseException | None = None) -> None:
        self.ended = True
        for source in list(self.requests):
            self._end_request(source, None)
        for key in list(self.tools):  # cancelled under way: each still gets its span
            call = self.tools.pop(key)
            if call.span is not None:
                call.span.set_attributes({"agentica.tool.status": "cancelled", "error.type": "cancelled"})
                call.span.end()
        if self.instruments.turns is not None:
            self.instruments.turns.add(1, {"agentica.stop_reason": stop_reason})
        if self.turn is not None:
            self.turn.set_attributes({"agentica.stop_reason": stop_reason,
                                      "gen_ai.usage.input_tokens": self.input_tokens,
                                      "gen_ai.usage.output_tokens": self.output_tokens})
            if error is not None:
                self.turn.set_attribute("error.type", type(error).__name__)
            self.turn.end()

    def _start(self, name: str, source: str, kind: SpanKind, attributes: dict[str, Any],
               start_time: int | None = None) -> Span | None:
        tracer = self.instruments.tracer
        if tracer is None:
            return None
        parent = self._parent(source)
        context = trace.set_span_in_context(parent) if parent is not None else None
        return tracer.start_span(name, context=context, kind=kind, attributes=attributes, start_time=start_time)

    def _parent(self, source: str) -> Span | None:
        """The span a source's spans go under: the turn, or for "…/task:ID" the task call ID
        of the source before it."""
        if not source:
            return self.turn
        outer, _, last = source.rpartition("/")
        call_id = last.split(":", 1)[1] if ":" in last else last
        call = self.tools.get((outer, call_id))
        return call.span if call is not None and call.span is not None else self.turn
