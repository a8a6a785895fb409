"""Tool names and inputs between Claude Code's wire and our tools.

The model always sees our tools (`execute`, `read_file`, ...); what an SDK program sees (in
`tool_use` blocks, `can_use_tool`, hook inputs, `system/init`) is Claude Code's name and input,
so its `if tool_name == "Bash"` checks work unchanged. The names come from
extensions/tool_names.py (one table for hooks, agent files and this); the few inputs whose keys
or units differ are mapped here, both ways.
"""

from __future__ import annotations

import math
from typing import Any

from agentica_cli.extensions.tool_names import CLAUDE_TO_OURS, claude, ours

__all__ = ["BUILTIN_CLAUDE_TOOLS", "claude", "claude_input", "our_input", "ours"]

# The Claude tools a `--tools` list may name: every one with a builtin of ours behind it.
BUILTIN_CLAUDE_TOOLS = tuple(name for name in CLAUDE_TO_OURS if name != "Skill")

# (our key, Claude's key) per tool, where they differ.
_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "execute": (("background", "run_in_background"),),
    "grep": (("ignore_case", "-i"), ("context", "-C"), ("max_results", "head_limit")),
}


# Arguments of ours that Claude's tool does not have, left out while they hold their default
# (a program that compares `tool_input` sees what a Claude model would have sent).
_OUR_DEFAULTS: dict[str, dict[str, Any]] = {
    "execute": {"timeout": 120, "sandbox": True, "network": False, "reason": "", "background": False},
}


def claude_input(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Our call's arguments as Claude's tool input (`name` is our tool name)."""
    defaults = _OUR_DEFAULTS.get(name, {})
    out = {key: value for key, value in args.items()
           if value is not None and (key not in defaults or defaults[key] != value)}  # None: left out
    for ours_key, claude_key in _KEYS.get(name, ()):
        if ours_key in out:
            out[claude_key] = out.pop(ours_key)
    if name == "execute" and isinstance(out.get("timeout"), (int, float)):
        out["timeout"] = int(out["timeout"] * 1000)  # Claude's Bash timeout is in milliseconds
    return out


def our_input(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """Claude's tool input (an SDK's `updatedInput`) as our arguments for tool `name` (ours)."""
    out = dict(data)
    for ours_key, claude_key in _KEYS.get(name, ()):
        if claude_key in out:
            out[ours_key] = out.pop(claude_key)
    if name == "execute" and isinstance(out.get("timeout"), (int, float)):
        out["timeout"] = max(1, math.ceil(out["timeout"] / 1000))
    return out
