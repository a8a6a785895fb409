"""The resume picker (`/resume`, `agentica --resume` with no ID): this folder's sessions, newest
first, each with its first message, age and size; Up/Down move, typing filters (every word must
appear in the first message or the id), Enter resumes, Esc or Ctrl-C leaves.
"""

from __future__ import annotations

import time
from typing import Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.sessions import SessionInfo, format_age

VISIBLE = 10  # rows of sessions shown at once


def session_row(info: SessionInfo, now: float, width: int) -> str:
    try:
        size = info.path.stat().st_size
    except OSError:
        size = 0
    kb = f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} B"
    tail = f"  {format_age(now - info.updated):>8}  {info.messages:>3} msgs  {kb:>6}"
    title = safe_text(info.title or "(empty)", keep_newlines=False)
    room = max(10, width - len(tail) - 4)
    title = title if len(title) <= room else title[: room - 1] + "…"
    return f"{title:<{room}}{tail}"


def matches(info: SessionInfo, query: str) -> bool:
    haystack = f"{info.title} {info.id}".lower()
    return all(word in haystack for word in query.lower().split())


async def pick_session(sessions: list[SessionInfo]) -> str | None:
    """The id of the session chosen, or None when the user left the picker."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.layout.containers import Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    state: dict[str, Any] = {"query": "", "index": 0}
    now = time.time()

    def shown() -> list[SessionInfo]:
        return [s for s in sessions if matches(s, state["query"])]

    def text() -> FormattedText:
        from prompt_toolkit.application import get_app

        width = get_app().output.get_size().columns
        found = shown()
        state["index"] = min(state["index"], max(0, len(found) - 1))
        start = max(0, state["index"] - VISIBLE + 1)
        parts: list[tuple[str, str]] = [("bold", "Resume a session"),
                                        ("", f"  ({len(found)} of {len(sessions)}; type to filter, ↑↓, Enter, Esc)\n"),
                                        ("ansicyan", "filter: "), ("", state["query"] + "\n")]
        for number, info in enumerate(found[start:start + VISIBLE], start):
            mark = "❯ " if number == state["index"] else "  "
            style = "reverse" if number == state["index"] else ""
            parts.append((style, mark + session_row(info, now, width - 2)))
            parts.append(("", "\n"))
        if not found:
            parts.append(("ansibrightblack", "  no session matches\n"))
        return FormattedText(parts)

    bindings = KeyBindings()

    @bindings.add("up")
    def _up(event: KeyPressEvent) -> None:
        state["index"] = max(0, state["index"] - 1)

    @bindings.add("down")
    def _down(event: KeyPressEvent) -> None:
        state["index"] = min(len(shown()) - 1, state["index"] + 1) if shown() else 0

    @bindings.add("enter")
    def _choose(event: KeyPressEvent) -> None:
        found = shown()
        if found:
            event.app.exit(result=found[state["index"]].id)

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d")
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    @bindings.add("backspace")
    def _erase(event: KeyPressEvent) -> None:
        state["query"] = state["query"][:-1]
        state["index"] = 0

    @bindings.add(Keys.Any)
    def _type(event: KeyPressEvent) -> None:
        if event.data.isprintable():
            state["query"] += event.data
            state["index"] = 0

    window = Window(FormattedTextControl(text, show_cursor=False), wrap_lines=False, dont_extend_height=True)
    app: Application[str | None] = Application(layout=Layout(window), key_bindings=bindings, erase_when_done=True)
    app.ttimeoutlen = 0.05
    return await app.run_async()
