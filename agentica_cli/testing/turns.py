"""Builders for the scripted turns the test model server plays back.

A turn is a plain JSON-serialisable dict, so the same script can be built in Python or
written to a file for `python -m agentica_cli.testing.server --script turns.json`.
Every turn may also carry:

- `delay`: seconds to wait before answering (headers included);
- `chunk_delay`: seconds between streamed chunks;
- `cut_after`: for a streamed answer, close the connection after this many SSE chunks
  (for a non-streamed one, close it without answering);
- `usage`: `{"prompt_tokens": n, "completion_tokens": m}` to report instead of an estimate;
- `stall`: for a streamed answer, stop making progress after some chunks (see `stall()`).

Faults that never finish on their own (`stall()`, `hang()`) still end: when the client
disconnects, when the server stops, or after their `limit` (60 s unless given), so a test of
a client that does not time out fails by its own timeout instead of hanging forever.
"""

from __future__ import annotations

import json
from typing import Any

Turn = dict[str, Any]

TURN_TYPES = ("text", "tool_calls", "error", "repeat_tool", "hang")
_COMMON = ("delay", "chunk_delay", "cut_after", "usage")
STALL_BEATS = ("comment", "empty", "nothing")
DEFAULT_FAULT_LIMIT = 60.0


def _extras(extra: dict[str, Any]) -> dict[str, Any]:
    unknown = set(extra) - set(_COMMON)
    if unknown:
        raise TypeError(f"unknown turn option(s): {', '.join(sorted(unknown))}")
    return {k: v for k, v in extra.items() if v is not None}


def text(content: str, *, reasoning: str | None = None, **extra: Any) -> Turn:
    """An assistant reply with `content` (and optional streamed `reasoning_content`)."""
    turn: Turn = {"type": "text", "content": content}
    if reasoning is not None:
        turn["reasoning"] = reasoning
    return turn | _extras(extra)


def call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> dict[str, Any]:
    """One tool call inside `tool_calls(...)`. A str `arguments` is sent verbatim (malformed JSON too)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    entry: dict[str, Any] = {"name": name, "arguments": raw}
    if id is not None:
        entry["id"] = id
    return entry


def tool_calls(*calls: dict[str, Any], content: str = "", reasoning: str | None = None, **extra: Any) -> Turn:
    """An assistant reply that calls tools (built with `call(...)`), optionally with reasoning
    and text first."""
    if not calls:
        raise ValueError("tool_calls() needs at least one call(...)")
    turn: Turn = {"type": "tool_calls", "calls": list(calls), "content": content}
    if reasoning is not None:
        turn["reasoning"] = reasoning
    return turn | _extras(extra)


def error(status: int, message: str = "", *, retry_after: float | str | None = None, body: Any = None,
          content_type: str | None = None, **extra: Any) -> Turn:
    """An HTTP error answer, e.g. `error(429, retry_after=0.2)` or `error(500)`. `body`, when
    given, is sent instead of `{"error": {"message": ...}}`: a dict or list as JSON, a str as
    it is (a provider's own error shape, a proxy's HTML page with `content_type="text/html"`)."""
    turn: Turn = {"type": "error", "status": status, "message": message or f"scripted error {status}"}
    if retry_after is not None:
        turn["retry_after"] = str(retry_after)
    if body is not None:
        turn["body"] = body
        turn["content_type"] = content_type or ("text/plain" if isinstance(body, str) else "application/json")
    return turn | _extras(extra)


def cut(turn: Turn, after: int) -> Turn:
    """`turn`, but the stream is cut after `after` SSE chunks (a failed attempt)."""
    return turn | {"cut_after": after}


def stall(turn: Turn, after: int = 1, *, every: float = 1.0, send: str = "comment",
          limit: float = DEFAULT_FAULT_LIMIT) -> Turn:
    """`turn`, but its stream stops making progress after `after` SSE chunks (the first chunk
    only says `role: assistant`). The connection then stays open and gets, every `every`
    seconds, `send`: "comment" (`: keep-alive` lines, as providers send while a request
    waits), "empty" (chunks with an empty delta) or "nothing"; until the client disconnects,
    the server stops, or `limit` seconds pass (the connection is then closed). A non-streamed
    request gets no answer at all, as with `hang()`.
    """
    if send not in STALL_BEATS:
        raise ValueError(f"send must be one of {', '.join(STALL_BEATS)}, not {send!r}")
    if after < 0 or every <= 0 or limit <= 0:
        raise ValueError("stall() needs after >= 0, every > 0 and limit > 0")
    return turn | {"stall": {"after": int(after), "every": float(every), "send": send, "limit": float(limit)}}


def hang(*, limit: float = DEFAULT_FAULT_LIMIT) -> Turn:
    """Read the request and never answer (no status line, no headers), as a stuck proxy or
    server does; until the client disconnects, the server stops, or `limit` seconds pass
    (the connection is then closed without an answer)."""
    if limit <= 0:
        raise ValueError("hang() needs limit > 0")
    return {"type": "hang", "limit": float(limit)}


def repeat_tool(
    name: str, count: int, *, arguments: dict[str, Any] | str | None = None, final: str = "done"
) -> Turn:
    """For benches: answer `count` requests in a row with one `name` tool call each, then `final`."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"type": "repeat_tool", "name": name, "arguments": raw, "count": count, "final": final}


def validate(turn: Any) -> None:
    if callable(turn):
        return
    if not isinstance(turn, dict) or turn.get("type") not in TURN_TYPES:
        raise ValueError(f"not a scripted turn: {turn!r} (types: {', '.join(TURN_TYPES)})")
