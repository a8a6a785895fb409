"""SessionStart hooks fire when an interactive session starts, not at its first prompt.

Claude Code runs them as the session opens (a hook that prints the branch, or installs
something, runs while the user types); their context waits for the first prompt. The agent
is only built when there are such hooks: otherwise the REPL keeps building it lazily, after
its first paint.
"""

from __future__ import annotations

from typing import Any


def has_session_start_hooks(extensions: Any) -> bool:
    return any(spec.event == "SessionStart" for spec in getattr(extensions, "hooks", ()) or ())


def begin(repl: Any) -> None:
    """At REPL start: the agent is built and SessionStart fires in the background; anything
    that needs the agent (a prompt, a command) waits for it (Repl.ensure_agent)."""
    import asyncio

    if has_session_start_hooks(repl.extensions):
        repl.start_preload()  # the heavy imports, in a thread: the first paint is not held up
        repl.session_start = asyncio.create_task(start(repl))


async def start(repl: Any, source: str | None = None) -> None:
    """SessionStart for the REPL's current session; what the hooks say for the user is shown."""
    try:
        agent = await repl.ensure_agent()
    except Exception:
        return  # the next prompt reports it properly
    from agentica_cli.app.extension_setup import bind_session

    bind_session(agent, repl.current_session())  # the hooks get the session id and transcript
    outcome = await agent.start_session(source)
    if outcome.messages:
        show(outcome.messages)


def show(messages: list[str]) -> None:
    from agentica_cli.tui.terminal import plain

    def lines() -> None:
        for message in messages:
            plain(message, "33")  # plain() passes it through safe_text

    try:
        from prompt_toolkit.application import run_in_terminal

        run_in_terminal(lines)  # above the prompt the user may be typing at
    except Exception:
        lines()
