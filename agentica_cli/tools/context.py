"""What the loop hands to a tool that asks for it (a parameter annotated `ToolContext`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolContext:
    """Run-time context injected into a tool; never part of the schema the model sees.

    `agent` is the running agent (sub-agent tools use its model and approval hook);
    `emit` forwards an event into the agent's event stream (e.g. a sub-agent's events);
    `output` shows a line of live progress on the running call (a ToolOutput event).
    """

    call_id: str = ""
    agent: Any = None
    emit: Callable[[Any], None] | None = None
    output: Callable[[str], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
