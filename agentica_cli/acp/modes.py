"""The permission modes an editor can switch between (session/set_mode)."""

from __future__ import annotations

from typing import Any

MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "ask before edits and commands"),
    "accept-edits": ("Accept edits", "file edits in the project (and sandboxed commands) run without asking"),
    "plan": ("Plan", "read-only: the agent reads and presents a plan; edits and commands are refused"),
    "auto": ("Auto", "never ask (like --yes); sensitive files still ask"),
}
MODE_IDS = tuple(MODES)


def mode_state(current: str) -> Any:
    from acp.schema import SessionMode, SessionModeState

    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=k, name=name, description=text) for k, (name, text) in MODES.items()],
    )
