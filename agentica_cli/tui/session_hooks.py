"""SessionStart hooks fire when an interactive session starts, not at its first prompt.

Claude Code runs them as the session opens (a hook that prints the branch, or installs
something, runs while the user types); their context waits for the first prompt. The agent
is only built early when there are such hooks (Repl.build_agent_early): otherwise the REPL
keeps building it lazily, after its first paint. AppSession runs them, and tells what they say.
"""

from __future__ import annotations

from typing import Any


def has_session_start_hooks(extensions: Any) -> bool:
    return any(spec.event == "SessionStart" for spec in getattr(extensions, "hooks", ()) or ())
