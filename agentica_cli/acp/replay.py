"""A saved conversation as the session updates an editor shows (session/load)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentica_cli.acp import updates
from agentica_cli.acp.prompt_blocks import content_text


def replay_updates(messages: list[dict[str, Any]], work_dir: Path) -> Iterator[Any]:
    from acp import (
        start_tool_call,
        text_block,
        tool_content,
        update_agent_message_text,
        update_plan,
        update_user_message_text,
    )

    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    for message in messages:
        role = message.get("role")
        text = content_text(message.get("content"))
        if role == "user" and text:
            yield update_user_message_text(text)
        elif role == "assistant":
            if text:
                yield update_agent_message_text(text)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name = str(function.get("name", ""))
                try:
                    args = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    args = {}
                args = args if isinstance(args, dict) else {}
                result = results.get(call.get("id"))
                failed = isinstance(result, str) and result.startswith("Error")
                body = [tool_content(text_block(updates.fenced(updates.result_text(result))))] if result else None
                yield start_tool_call(
                    str(call.get("id", "")), updates.tool_title(name, args), kind=updates.tool_kind(name),
                    status="failed" if failed else "completed", content=body,
                    locations=updates.tool_locations(name, args, work_dir), raw_input=updates.raw_arguments(args),
                )
                if name == "write_todos" and not failed:
                    entries = updates.plan_entries(args)
                    if entries is not None:
                        yield update_plan(entries)
