"""System prompt assembly: instructions, then each Tool's guidance, then dynamic context.

The static part (instructions and tool guidance) comes first and stays the same from one
request to the next, so providers can cache it; what changes (date, limits) comes last.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentica_cli.tools.base import Tool


def build_system_prompt(instructions: str | None, tools: Iterable[object], guidance: Iterable[str]) -> str:
    sections: list[str] = []
    if instructions and instructions.strip():
        sections.append(instructions.strip())
    tool_prompts = []
    for item in tools:
        if isinstance(item, Tool):
            text = item.get_system_prompt()
            if text and text.strip():
                tool_prompts.append(text.strip())
    if tool_prompts:
        sections.append("# Using the tools\n\n" + "\n\n".join(tool_prompts))
    lines = [g.strip() for g in guidance if g and g.strip()]
    if lines:
        sections.append("# Context\n\n" + "\n".join(f"- {line}" for line in lines))
    return "\n\n".join(sections)
