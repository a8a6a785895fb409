"""Checks on the messages an agent sent, for tests."""

from __future__ import annotations

from typing import Any


def tool_call_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What breaks "every tool call gets exactly one result, right after its assistant message".

    Returns an empty list for a valid history; otherwise one line per problem.
    """
    problems: list[str] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg.get("role") == "tool":
            problems.append(f"message {i}: tool result {msg.get('tool_call_id')!r} without a preceding call")
            i += 1
            continue
        calls = (msg.get("tool_calls") or []) if msg.get("role") == "assistant" else []
        i += 1
        if not calls:
            continue
        expected = [c.get("id") for c in calls]
        seen: list[str | None] = []  # a tool message without tool_call_id is a mismatch too
        while i < len(messages) and messages[i].get("role") == "tool":
            seen.append(messages[i].get("tool_call_id"))
            i += 1
        if seen != expected:
            problems.append(f"message {i}: calls {expected} answered by {seen}")
    return problems
