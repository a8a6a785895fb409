"""Telling a user who looks at another window that agentica wants them.

The terminal bell (most terminals flash or badge the tab) and an OSC 9 desktop
notification (`ESC ] 9 ; text BEL`: iTerm2, WezTerm, Windows Terminal, Ghostty, kitty, ...;
terminals that do not know it ignore it). Sent when a long turn ends and when an approval
question waits. `[ui] notify = false` turns it off; `[ui] notify_after` is how long (in
seconds, default 30) a turn must take before its end is worth a notification.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from agentica_cli.app.safe_text import safe_text

if TYPE_CHECKING:
    from agentica_cli.app.settings.config import Settings

DEFAULT_NOTIFY_AFTER = 30.0
BELL = "\x07"


def enabled(settings: Settings | None) -> bool:
    return settings is None or settings.ui.notify


def notify_after(settings: Settings | None) -> float:
    return DEFAULT_NOTIFY_AFTER if settings is None else settings.ui.notify_after


def notification(message: str) -> str:
    """The bytes for `message`: a bell, then OSC 9. The text cannot end the sequence early or
    start another one: controls (BEL, ESC, ...) are neutralised."""
    text = safe_text(f"agentica: {message}", keep_newlines=False)
    return f"{BELL}\x1b]9;{text}{BELL}"


def notify(message: str, settings: Settings | None = None, stream: TextIO | None = None) -> bool:
    """Ring the bell and send an OSC 9 notification, unless `ui.notify` is false or the
    output is not a terminal. Returns whether it was sent."""
    out = stream or sys.stdout
    if not enabled(settings):
        return False
    try:
        if not out.isatty():
            return False
        out.write(notification(message))
        out.flush()
    except (OSError, ValueError):  # a closed or vanished terminal: nothing to tell
        return False
    return True


def notify_turn_end(elapsed: float, settings: Settings | None, *, interrupted: bool = False) -> bool:
    """After a turn: notify when it took `ui.notify_after` seconds or more (an interrupted
    turn was ended by the user, who is here)."""
    if interrupted or elapsed < notify_after(settings):
        return False
    from agentica_cli.app.summaries import format_elapsed

    return notify(f"finished after {format_elapsed(elapsed)}", settings)
