"""Resuming, through a pseudo-terminal: the picker (`--resume` with no ID at 80x24, `/resume` at
120x40: arrows, type to filter), the replay's Markdown rendered as in the live session, and
/rewind listing what the user typed rather than the message sent for it."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from screen_support import PROMPT, Screen, spawn_screen

from agentica_cli.app.sessions import SessionStore
from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def _saved(home: Path, project: Path, prompt: str, answer: str) -> str:
    """A session written by the session writer itself, as an earlier run leaves it."""
    session = SessionStore(home / "sessions").create(project, "scripted-model", lazy=True)
    session.append({"role": "user", "content": prompt})
    session.append({"role": "assistant", "content": answer})
    session.close()
    time.sleep(0.02)  # distinct modification times: the picker lists the newest first
    return session.id


def _users(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_resume_without_an_id_opens_a_picker_that_filters_as_you_type(home: Path, project: Path,
                                                                      screens: list[Screen]) -> None:
    _saved(home, project, "fix the parser crash", "Fixed the parser.")
    _saved(home, project, "write tests for pears", "Wrote the pear tests.")
    with ScriptedModelServer([turns.text("Continuing.")]) as server:
        screen = spawn_screen_at(home, project, server, "--resume", columns=80, lines=24)
        screens.append(screen)
        listed = screen.wait_text("fix the parser crash")
        assert "write tests for pears" in listed
        screen.send("parser")
        screen.wait_for(lambda text: "write tests for pears" not in text, what="the list filtered")
        screen.send("\r")
        screen.wait_text(PROMPT)
        screen.send("and now?\r")
        screen.wait_text("Continuing.")
        assert _users(server.requests[0]) == ["fix the parser crash", "and now?"]


def spawn_screen_at(home: Path, project: Path, server: object, *flags: str, columns: int, lines: int) -> Screen:
    """The REPL on a screen, not waiting for the prompt (a picker comes first)."""
    from cli_support import model_args
    from screen_support import open_screen

    return open_screen(home, project, [*model_args(server), *flags], columns=columns, lines=lines)


def test_slash_resume_picks_with_the_arrows(home: Path, project: Path, screens: list[Screen]) -> None:
    _saved(home, project, "the older session", "Old answer.")
    _saved(home, project, "the newer session", "New answer.")
    with ScriptedModelServer([turns.text("Back in the old one.")]) as server:
        screen = spawn_screen(home, project, server, columns=120, lines=40)
        screens.append(screen)
        screen.send("/resume\r")
        screen.wait_text("the older session")
        screen.send("\x1b[B")  # Down: the older one (the newer is first)
        time.sleep(0.2)
        screen.send("\r")
        screen.wait_text("Old answer.")  # replayed
        screen.send("continue\r")
        screen.wait_text("Back in the old one.")
        assert _users(server.requests[0]) == ["the older session", "continue"]


def test_the_replay_renders_markdown_as_the_live_session_does(home: Path, project: Path,
                                                              screens: list[Screen]) -> None:
    answer = ("## The plan\n\nChange **parse_args** so that every flag is checked before the command runs, "
              "and say which one is wrong.\n\n| step | file |\n|---|---|\n| one | cli.py |\n")
    _saved(home, project, "plan it", answer)
    with ScriptedModelServer([]) as server:
        screen = spawn_screen(home, project, server, "--continue", columns=80, lines=24)
        screens.append(screen)
        text = screen.wait_text("The plan")
        replay = text.split("The plan", 1)[1].split("Type a message", 1)[0]
        assert "##" not in text and "**" not in text and "|---" not in text  # rendered, not raw
        assert "parse_args" in replay and "cli.py" in replay
        rows = [row for row in replay.splitlines() if row.strip()]
        wrapped = [row for row in rows if "flag" in row or "command" in row]
        assert wrapped and all(row.startswith("    ") for row in wrapped)  # soft-wrapped under `agent:`


@pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")
def test_rewind_lists_what_was_typed_not_the_attached_file(home: Path, project: Path,
                                                           screens: list[Screen]) -> None:
    (project / "notes.txt").write_text("SECRET-LOOKING-CONTENT of the notes\n")
    with ScriptedModelServer([turns.text("Explained.")]) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("explain @notes.txt briefly\r")
        screen.wait_text("Explained.")
        assert "SECRET-LOOKING-CONTENT" in _users(server.requests[0])[-1]  # the file went with it
        screen.send("/rewind\r")
        listing = screen.wait_text("Rewind to before which turn")
        row = next(line for line in listing.splitlines() if "1." in line and "explain" in line)
        assert "explain @notes.txt briefly" in row
        assert "SECRET-LOOKING-CONTENT" not in listing and "<file" not in listing
