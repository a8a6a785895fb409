"""The events a tool itself emits while it runs, and the base of every event of the loop.

They live with the tool framework, not the loop (agent/events.py re-exports them), so a tool
such as builtin_tools' `execute` can stream its output without importing the agent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Event:
    type: str = field(init=False, default="event")
    source: str = field(default="", kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ToolOutput(Event):
    """What a running tool printed since its previous ToolOutput (e.g. `execute`'s command
    output), for showing it live. At most ~10 a second per call; when more came in between,
    `text` is its last few thousand characters. The result the model gets is unaffected.
    Pushed by the tool through its context, so `source` is `task:<call_id>` like any event
    a tool emits; `call_id` names the call it belongs to."""

    call_id: str
    text: str
    type: str = field(init=False, default="tool_output")
