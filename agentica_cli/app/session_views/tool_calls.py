"""The tool calls of a stored conversation, by call id: what /export and the REPL's transcript
(on --continue, /resume) show for each call and its result.

A call whose arguments are not a JSON object (malformed, cut off, a bare value) keeps them as
they were, under "arguments": the raw text is shown rather than nothing. It is untrusted text
(the model wrote it): the front end neutralises it as it shows it (safe_text in the transcript,
JSON escapes in the export).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

ToolCalls = dict[str, tuple[str, dict[str, Any]]]  # call id -> (tool name, arguments)


def call_arguments(raw: Any) -> dict[str, Any]:
    """A stored call's arguments as a dict: the parsed JSON object, else {"arguments": raw}."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def calls_by_id(messages: Iterable[dict[str, Any]]) -> ToolCalls:
    """Every assistant message's tool calls: call id -> (name, arguments)."""
    found: ToolCalls = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            found[str(call.get("id"))] = (str(function.get("name", "?")), call_arguments(function.get("arguments")))
    return found
