"""What an approval can grant, through a pseudo-terminal at 80x24: "always" for a compound
command (each part's rule), "always in this project" (saved in the user's file, applied by the
next session in that folder, listed and revoked in /permissions), an empty argument left out of
the question, and plan mode's "proceed?" once the plan is presented."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import tool_results
from screen_support import Screen, spawn_screen

from agentica_cli.app.runtime import PLAN_MODE_NOTE
from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def _run(command: str, id: str, **extra: object) -> turns.Turn:
    return turns.tool_calls(turns.call("execute", {"command": command, **extra}, id=id))


def _questions(screen: Screen) -> int:
    return "".join(screen.raw).count("Allow?")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_always_on_a_compound_command_grants_each_part(
    home: Path, project: Path, screens: list[Screen], size: tuple[int, int],
) -> None:
    script = [_run("echo one && printf two", "c1"), _run("printf three; echo four", "c2"), turns.text("Both ran.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        screen.send("run them\r")
        screen.wait_text("Allow?")
        screen.send("a")
        screen.wait_text("Both ran.")
        assert _questions(screen) == 1  # the second command's parts were both granted
        assert "three" in tool_results(server.requests[2])["c2"]


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_an_empty_argument_is_not_shown_in_the_question(home: Path, project: Path, screens: list[Screen],
        columns: int, lines: int) -> None:
    script = [_run("echo hi > out.txt", "c1", reason="", timeout=30), turns.text("Done.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        screen.send("go\r")
        shown = screen.wait_text("Allow?")
        assert "timeout=30" in shown  # the arguments that say something are shown
        assert "reason" not in shown
        screen.send("n")
        screen.wait_text("Done.")


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_always_in_this_project_is_saved_applied_next_time_and_revocable(
    home: Path, project: Path, screens: list[Screen], columns: int, lines: int) -> None:
    with ScriptedModelServer([_run("git status", "c1"), turns.text("First.")]) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        screen.send("check git\r")
        screen.wait_text("Allow?")
        screen.send("p")
        screen.wait_text("First.")
        screen.child.terminate(force=True)
    saved = home / "project_permissions.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    entries = json.loads(saved.read_text())
    assert entries == {str(project.resolve()): [{"tool": "execute", "words": ["git", "status"], "exact": False,
                                                 "domain": ""}]}
    script = [_run("git status", "c2"), turns.text("Second."), _run("git status", "c3"), turns.text("Third.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        screen.send("again\r")
        screen.wait_text("Second.")
        assert _questions(screen) == 0  # granted in this project: the new session did not ask
        screen.send("/permissions\r")
        listed = screen.wait_text("in this project")
        assert "git status" in listed.split("in this project", 1)[1]
        screen.send("/permissions revoke 1\r")
        screen.wait_for(lambda text: "Revoked" in text, what="the revocation")
        screen.send("once more\r")
        screen.wait_text("Allow?")  # asked again
        screen.send("y")
        screen.wait_text("Third.")
    assert json.loads(saved.read_text()) == {}


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_plan_mode_asks_to_proceed_once_the_plan_is_presented(home: Path, project: Path,
                                                               screens: list[Screen], size: tuple[int, int]) -> None:
    (project / "notes.txt").write_text("hello\n")
    edit = {"file_path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
              turns.text("Plan: in notes.txt replace hello with goodbye."),
              turns.tool_calls(turns.call("edit_file", edit, id="e1")), turns.text("Edited.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, "--permission-mode", "plan", columns=size[0], lines=size[1])
        screens.append(screen)
        screen.send("plan the change\r")
        screen.wait_text("Proceed?")
        assert PLAN_MODE_NOTE in server.requests[0]["messages"][0]["content"]
        screen.send("y")  # yes, asking before each edit
        screen.wait_text("Allow?")  # the edit is asked (mode default), not refused as in plan mode
        second = server.requests[2]
        assert PLAN_MODE_NOTE not in second["messages"][0]["content"]
        assert second["messages"][-1]["role"] == "user"
        screen.send("y")
        screen.wait_text("Edited.")
        deadline = time.monotonic() + 5
        while (project / "notes.txt").read_text() != "goodbye\n" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (project / "notes.txt").read_text() == "goodbye\n"
