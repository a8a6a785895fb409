"""What an MCP client offers its servers besides calling tools: roots, elicitation (asking
the user for input) and sampling (a completion from the client's model).

The host (the CLI, or a library user) plugs its own behaviour in through `McpClientHandlers`;
this module turns the SDK's requests into plain values and back, so no UI code touches SDK
types. Without a handler the capability is not declared (elicitation and sampling) or the
roots list is empty. Every failure becomes a decline or a JSON-RPC error for the server,
never an exception in our session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ElicitAction = Literal["accept", "decline", "cancel"]

# A sampling request may not ask for more than this many tokens, whatever it says.
MAX_SAMPLING_TOKENS = 4096
MAX_SAMPLING_CHARS = 100_000  # of the messages a server sends to be completed


@dataclass
class ElicitRequest:
    """A server's request for input from the user: a message and a flat form (JSON Schema
    properties of type string, number, integer, boolean or enum), or a URL to open."""

    server: str
    message: str
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    url: str | None = None


@dataclass
class ElicitAnswer:
    action: ElicitAction
    content: dict[str, Any] | None = None


@dataclass
class SamplingRequest:
    """A server's request for a completion: its messages as (role, text) and its limits."""

    server: str
    messages: list[tuple[str, str]]
    system_prompt: str | None
    max_tokens: int


ElicitHandler = Callable[[ElicitRequest], Awaitable[ElicitAnswer]]
# Returns the completion's text; raising (or returning None) refuses the request.
SamplingHandler = Callable[[SamplingRequest], Awaitable[str | None]]


@dataclass
class McpClientHandlers:
    """The host's side of the protocol, shared by all servers of one agent.

    roots: the folders servers may work in (the CLI: the work folder and --add-dir folders).
    elicit: asks the user; None declines every request (e.g. `agentica -p`).
    sample: approves and runs a completion; None refuses every sampling request.
    """

    roots: Sequence[Path] = ()
    elicit: ElicitHandler | None = None
    sample: SamplingHandler | None = None


def _text_of(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    parts = []
    for block in blocks:
        kind = getattr(block, "type", None)
        parts.append(block.text if kind == "text" else f"[{kind or 'non-text'} content]")
    return "\n".join(parts)


def client_callbacks(server: str, handlers: McpClientHandlers | None,
                     waiting_on_user: Callable[[], AbstractContextManager[Any]] = nullcontext) -> dict[str, Any]:
    """The SDK Client's keyword arguments for these handlers (only those that are set).
    `waiting_on_user` is entered while a handler runs: the server's calls must not time out
    while the user fills its form or approves its sampling request (call_clock.py)."""
    import mcp_types as types
    from pydantic import FileUrl

    handlers = handlers or McpClientHandlers()
    callbacks: dict[str, Any] = {}

    async def list_roots(context: Any) -> Any:
        roots = [types.Root(uri=FileUrl(Path(p).resolve().as_uri()), name=Path(p).name or str(p))
                 for p in handlers.roots]
        return types.ListRootsResult(roots=roots)

    callbacks["list_roots_callback"] = list_roots

    if handlers.elicit is not None:
        elicit = handlers.elicit

        async def on_elicit(context: Any, params: Any) -> Any:
            if getattr(params, "mode", "form") == "url":
                request = ElicitRequest(server, params.message, url=params.url)
            else:
                schema = params.requested_schema
                schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
                request = ElicitRequest(server, params.message, dict(schema.get("properties") or {}),
                                        list(schema.get("required") or ()))
            try:
                with waiting_on_user():
                    answer = await elicit(request)
            except asyncio.CancelledError:
                raise
            except Exception:
                answer = ElicitAnswer("cancel")
            content = answer.content if answer.action == "accept" and request.url is None else None
            return types.ElicitResult(action=answer.action, content=content)

        callbacks["elicitation_callback"] = on_elicit

    if handlers.sample is not None:
        sample = handlers.sample

        async def on_sample(context: Any, params: Any) -> Any:
            messages = [(m.role, _text_of(m.content)) for m in params.messages]
            if sum(len(text) for _, text in messages) > MAX_SAMPLING_CHARS:
                return types.ErrorData(code=-32602, message=f"sampling request over {MAX_SAMPLING_CHARS} characters")
            request = SamplingRequest(server, messages, params.system_prompt,
                                      max(1, min(params.max_tokens, MAX_SAMPLING_TOKENS)))
            try:
                with waiting_on_user():
                    text = await sample(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                return types.ErrorData(code=-1, message=f"sampling failed: {exc}")
            if text is None:
                return types.ErrorData(code=-1, message="the user declined the sampling request")
            return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text),
                                             model="agentica", stop_reason="endTurn")

        callbacks["sampling_callback"] = on_sample
    return callbacks


def field_options(schema: dict[str, Any]) -> list[Any] | None:
    """The allowed values of a single-select field: `enum`, or `oneOf` / `anyOf` of consts."""
    if "enum" in schema:
        return list(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and all(isinstance(o, dict) and "const" in o for o in schema[key]):
            return [o["const"] for o in schema[key]]
    return None


def coerce_form_value(schema: dict[str, Any], raw: str) -> Any:
    """A typed form answer from what the user typed, per the field's schema; ValueError if
    it does not fit (the form asks again). A multi-select (array) field takes a comma list."""
    kind = schema.get("type", "string")
    text = raw.strip()
    if kind == "array":
        items = schema.get("items")
        item = items if isinstance(items, dict) else {}
        return [coerce_form_value(item, part) for part in text.split(",") if part.strip()]
    options = field_options(schema)
    if options is not None:
        if text not in [str(o) for o in options]:
            raise ValueError(f"one of: {', '.join(str(o) for o in options)}")
        return next(o for o in options if str(o) == text)
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("yes or no")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number") from None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            raise ValueError("a number") from None
    return raw
