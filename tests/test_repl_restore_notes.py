"""After files are put back (/undo, /rewind N code, `agentica --undo` then `--continue`), the
next request tells the model what was restored (the files, the turn), through a pseudo-terminal
at 80x24 and 120x40: otherwise it goes on believing its reverted edit is still there."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import last_user_message, model_args, run_cli
from screen_support import PROMPT, Screen, spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return path


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def fix_turns() -> list:
    edit = {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    return [turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r")),
            turns.tool_calls(turns.call("edit_file", edit, id="e")),
            turns.text("Fixed add.")]


def _fixed_in_a_turn(screen: Screen, project: Path) -> None:
    screen.send("fix add\r")
    screen.wait_text("Allow?")
    screen.send("y")
    screen.wait_text("Fixed add.")
    assert "a + b" in (project / "calc.py").read_text()


@pytest.mark.parametrize(("command", "size"), [("/undo", (80, 24)), ("/rewind 1 code", (120, 40))])
def test_the_next_request_says_what_was_restored(home: Path, project: Path, screens: list[Screen],
                                                  command: str, size: tuple[int, int]) -> None:
    with ScriptedModelServer([*fix_turns(), turns.text("No, add is broken again.")]) as server:
        screen = spawn_screen(home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        _fixed_in_a_turn(screen, project)
        screen.send(command + "\r")
        # The command's report, then the prompt under it: the restore is over (git checkout
        # rewrites a file by removing it first, so the file is not read while it runs).
        screen.wait_for(lambda text: PROMPT in text.partition("turn 1 (fix add): 1 file(s)")[2],
                        what="the restore's report and the next prompt")
        assert "a - b" in (project / "calc.py").read_text()  # calc.py put back
        screen.send("is add fixed?\r")
        screen.wait_text("broken again")
        sent = last_user_message(server.requests[3])
        assert sent.endswith("is add fixed?")
        note = sent.removesuffix("is add fixed?")
        assert "calc.py" in note and "1" in note  # the file, and the turn it undid
        assert "fix add" in note


def test_undo_from_the_command_line_is_told_to_the_continued_session(home: Path, project: Path,
                                                                     screens: list[Screen]) -> None:
    with ScriptedModelServer(fix_turns()) as server:
        done = run_cli(["-p", "fix add", "-y", *model_args(server)], cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    undone = run_cli(["--undo"], cwd=project, home=home)
    assert undone.returncode == 0, undone.stderr
    assert "a - b" in (project / "calc.py").read_text()
    with ScriptedModelServer([turns.text("It is not fixed."), turns.text("Second.")]) as server:
        screen = spawn_screen(home, project, server, "--continue", columns=80, lines=24)
        screens.append(screen)
        screen.send("is add fixed?\r")
        screen.wait_text("It is not fixed.")
        note = last_user_message(server.requests[0]).removesuffix("is add fixed?")
        assert "calc.py" in note and "fix add" in note
        screen.wait_text(PROMPT)
        screen.send("and now?\r")
        screen.wait_text("Second.")
        assert last_user_message(server.requests[1]) == "and now?"  # told once


def test_undo_from_the_command_line_is_told_to_a_print_run_that_continues(home: Path, project: Path) -> None:
    with ScriptedModelServer(fix_turns()) as server:
        assert run_cli(["-p", "fix add", "-y", *model_args(server)], cwd=project, home=home).returncode == 0
    assert run_cli(["--undo"], cwd=project, home=home).returncode == 0
    with ScriptedModelServer([turns.text("Not fixed.")]) as server:
        done = run_cli(["-p", "--continue", "is add fixed?", *model_args(server)], cwd=project, home=home)
        assert done.returncode == 0, done.stderr
        note = last_user_message(server.requests[0]).removesuffix("is add fixed?")
        assert "calc.py" in note and "fix add" in note
