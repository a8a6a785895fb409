"""/compact's instructions reach the summariser, and /rewind after /compact does not keep a
summary of the turns it takes back, through a pseudo-terminal at 80x24."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from screen_support import PROMPT, Screen, spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def two_turns() -> list:
    return [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.text("First done."),
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r2")),
        turns.text("Second done."),
        turns.text("SUMMARY-OF-THE-FIRST-TURN"),
    ]


def _two_turns_then(screen: Screen, command: str) -> None:
    for prompt, answer in (("first task", "First done."), ("second task", "Second done.")):
        screen.send(prompt + "\r")
        screen.wait_text(answer)
    screen.send(command + "\r")


def _wait_requests(screen: Screen, server: ScriptedModelServer, count: int) -> None:
    screen.wait_for(lambda _: len(server.requests) >= count, what=f"{count} requests")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_compact_passes_its_instructions_to_the_summariser(
    home: Path, project: Path, screens: list[Screen], size: tuple[int, int],
) -> None:
    with ScriptedModelServer(two_turns()) as server:
        screen = spawn_screen(home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        _two_turns_then(screen, "/compact focus on the tests")
        _wait_requests(screen, server, 5)
        summarising = server.requests[4]
        assert not summarising.get("tools")
        assert "focus on the tests" in summarising["messages"][0]["content"]


@pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")
@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_rewind_after_compact_goes_back_to_before_the_summarised_turn(home: Path, project: Path,
                                                                     screens: list[Screen],
        columns: int, lines: int) -> None:
    with ScriptedModelServer([*two_turns(), turns.text("Fresh start.")]) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        _two_turns_then(screen, "/compact")
        _wait_requests(screen, server, 5)
        screen.wait_for(lambda text: text.rstrip().splitlines()[-2].startswith(PROMPT) or "->" in text,
                        what="the compaction done")
        screen.send("/rewind 1 conversation\r")  # turn 1 is inside the summary
        screen.wait_text("first task")  # its prompt back at the input
        screen.send("\x15again\r")  # Ctrl-U, then a new first message
        screen.wait_text("Fresh start.")
        sent = server.requests[5]["messages"]
        users = [m["content"] for m in sent if m["role"] == "user"]
        assert users == ["again"]  # neither the summary of the turn taken back nor the turn after it
        assert not any("SUMMARY-OF-THE-FIRST-TURN" in str(m.get("content")) for m in sent)
