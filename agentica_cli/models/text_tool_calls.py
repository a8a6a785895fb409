"""Tool calls a model wrote as text, made real calls (the `tool_call_format` setting).

A local server without a tool-call parser for its model (llama.cpp without `--jinja`, a vLLM
started without `--tool-call-parser`, an Ollama template that lacks tools) passes the model's
own call syntax through in `content`. The formats read here, as the model families document
them:

- "hermes": Hermes / Qwen2.5 / Qwen3 chat templates:
  `<tool_call>\\n{"name": "read_file", "arguments": {"path": "a.py"}}\\n</tool_call>`
- "qwen3-coder": Qwen3-Coder's XML, also inside `<tool_call>`:
  `<function=read_file>\\n<parameter=path>\\na.py\\n</parameter>\\n</function>`; and Llama 3.1's
  `<function=read_file>{"path": "a.py"}</function>`
- "mistral": `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.py"}}]`
- "text": any of them.

It is never on by default: a hosted provider parses calls itself, and a model that only
*quotes* such syntax (explaining it, say) would have it run. Streamed text from the first tag
on is held back (it is a call, not the answer); when the answer turns out to hold no valid
call the held text is shown after all.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

from agentica_cli.models.base import ModelResponse, ModelRetry, ModelStreamEvent, ModelTextDelta, ToolCallRequest

FORMATS = ("native", "hermes", "qwen3-coder", "mistral", "text")

_OPENERS = {"hermes": ("<tool_call>",), "qwen3-coder": ("<tool_call>", "<function="), "mistral": ("[TOOL_CALLS]",)}

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\s]+)>\s*(.*?)\s*(?:</function>|$)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\s*(.*?)\s*(?:</parameter>|(?=<parameter=)|$)", re.DOTALL)


def check_format(value: str) -> str:
    if value not in FORMATS:
        raise ValueError(f"tool_call_format must be one of {', '.join(FORMATS)}, not {value!r}")
    return value


def openers(fmt: str) -> tuple[str, ...]:
    if fmt == "text":
        return tuple(dict.fromkeys(o for group in _OPENERS.values() for o in group))
    return _OPENERS.get(fmt, ())


def parse_text_calls(content: str, fmt: str, tools: list[dict[str, Any]] | None = None
                     ) -> tuple[str, list[ToolCallRequest]]:
    """(the text outside the calls, the calls) from `content`; no calls: (content, [])."""
    if fmt in ("native", "") or not content:
        return content, []
    types = _parameter_types(tools)
    calls: list[ToolCallRequest] = []
    rest = content
    if fmt in ("hermes", "qwen3-coder", "text") and "<tool_call>" in rest:
        found = _tool_call_blocks(rest, fmt, types)
        if found is not None:
            calls, rest = found
    if not calls and fmt in ("qwen3-coder", "text") and "<function=" in rest:
        found_fn = [_function_call(name, body, types) for name, body in _FUNCTION.findall(rest)]
        if found_fn and all(found_fn):
            calls = [c for c in found_fn if c]
            rest = _FUNCTION.sub("", rest)
    if not calls and fmt in ("mistral", "text") and "[TOOL_CALLS]" in rest:
        head, _, tail = rest.partition("[TOOL_CALLS]")
        parsed = _json_calls(tail.strip())
        if parsed:
            calls, rest = parsed, head
    if not calls:
        return content, []
    return rest.strip(), calls


def _tool_call_blocks(text: str, fmt: str, types: dict[str, dict[str, str | None]]
                      ) -> tuple[list[ToolCallRequest], str] | None:
    calls: list[ToolCallRequest] = []
    for body in _TOOL_CALL.findall(text):
        if body.startswith("<function=") and fmt in ("qwen3-coder", "text"):
            inner = _FUNCTION.findall(body)
            found = [_function_call(name, args, types) for name, args in inner]
            if not inner or not all(found):
                return None
            calls += [c for c in found if c]
        elif fmt in ("hermes", "text"):
            parsed = _json_calls(body)
            if not parsed:
                return None  # not a call after all: keep the text as the model wrote it
            calls += parsed
        else:
            return None
    return (calls, _TOOL_CALL.sub("", text)) if calls else None


def _json_calls(text: str) -> list[ToolCallRequest]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return []
        args = item.get("arguments", item.get("parameters", {}))
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        calls.append(ToolCallRequest(_call_id(), item["name"], arguments))
    return calls


def _function_call(name: str, body: str, types: dict[str, dict[str, str | None]]) -> ToolCallRequest | None:
    body = body.strip()
    if body.startswith("{"):  # Llama 3.1: <function=name>{json}</function>
        try:
            args = json.loads(body)
        except ValueError:
            return None
        return ToolCallRequest(_call_id(), name, json.dumps(args, ensure_ascii=False))
    params = _PARAMETER.findall(body)
    if body and not params:
        return None
    schema = types.get(name, {})
    args = {key: _parameter_value(value, schema.get(key)) for key, value in params}
    return ToolCallRequest(_call_id(), name, json.dumps(args, ensure_ascii=False))


def _parameter_value(text: str, kind: str | None) -> Any:
    """A <parameter> value: text for a string parameter (or one the schema does not type),
    JSON for numbers, booleans, arrays and objects (as Qwen3-Coder's own parser reads them)."""
    if kind in (None, "string"):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parameter_types(tools: list[dict[str, Any]] | None) -> dict[str, dict[str, str | None]]:
    out: dict[str, dict[str, str | None]] = {}  # None: the schema gives no type
    for tool in tools or ():
        fn = tool.get("function") or {}
        props = ((fn.get("parameters") or {}).get("properties") or {})
        out[fn.get("name", "")] = {k: v.get("type") for k, v in props.items() if isinstance(v, dict)}
    return out


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def with_text_calls(response: ModelResponse, fmt: str, tools: list[dict[str, Any]] | None) -> ModelResponse:
    """`response` with the calls its text holds made real (native calls win: nothing to do)."""
    if response.tool_calls or fmt in ("native", ""):
        return response
    content, calls = parse_text_calls(response.content, fmt, tools)
    if not calls:
        return response
    response.content = content
    response.tool_calls = calls
    response.finish_reason = "tool_calls"
    return response


async def parse_stream(events: AsyncIterator[ModelStreamEvent], fmt: str, tools: list[dict[str, Any]] | None
                       ) -> AsyncIterator[ModelStreamEvent]:
    """The model's events with text calls made real; streamed text from a call's tag on is
    held back (the answer's own text before it still streams)."""
    starts = openers(fmt)
    pending = ""  # text not yet shown: it may be the start of a tag
    holding = False  # a tag began: the rest of this attempt's text is a call
    async for event in events:
        if isinstance(event, ModelRetry):
            pending, holding = "", False
            yield event
        elif isinstance(event, ModelTextDelta):
            if holding:
                pending += event.text
                continue
            pending += event.text
            cut = min((i for i in (pending.find(s) for s in starts) if i >= 0), default=-1)
            if cut >= 0:
                holding = True
                if pending[:cut]:
                    yield ModelTextDelta(pending[:cut])
                pending = pending[cut:]
                continue
            keep = _partial_opener(pending, starts)
            shown = pending[: len(pending) - keep]
            pending = pending[len(pending) - keep:]
            if shown:
                yield ModelTextDelta(shown)
        elif isinstance(event, ModelResponse):
            had_calls = bool(event.tool_calls)
            event = with_text_calls(event, fmt, tools)
            if pending and (had_calls or not event.tool_calls):
                yield ModelTextDelta(pending)  # held back, but no call after all
            pending, holding = "", False
            yield event
        else:
            yield event


def _partial_opener(text: str, starts: tuple[str, ...]) -> int:
    """How many characters at the end of `text` could begin one of `starts`."""
    best = 0
    for start in starts:
        for size in range(min(len(start) - 1, len(text)), 0, -1):
            if text.endswith(start[:size]):
                best = max(best, size)
                break
    return best
