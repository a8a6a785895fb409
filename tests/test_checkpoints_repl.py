"""/undo, /redo, /diff and /rewind in the REPL, through a pseudo-terminal, on a real git
repository: shell commands' changes are undone too, and the user's repository is untouched."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from screen_support import flat, spawn_screen
from test_checkpoints_api import repo_state
from test_repl import project  # noqa: F401  (fixture)

from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")


def git_init(path: Path) -> None:
    (path / "old.txt").write_text("old\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "i"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)


def one_turn_script() -> list:
    return [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "notes.txt", "old_string": "hello",
                                                  "new_string": "HELLO"}, id="e")),
        turns.tool_calls(turns.call("execute", {"command": "echo x > new.txt"}, id="x1"),
                         turns.call("execute", {"command": "rm old.txt"}, id="x2")),
        turns.text("All done."),
    ]


def _sandbox_for_top_level_shell_edits() -> list[str]:
    """The shell's edits here are at the top of a git checkout: the Landlock backend (a machine
    without a working bubblewrap) refuses creating and deleting entries beside `.git` by design
    (docs/security.md), so there this test, which is about the checkpoints, runs without it."""
    from agentica_cli.sandbox.bwrap import bwrap_works

    return [] if bwrap_works() else ["--sandbox", "off"]


def test_undo_redo_diff_and_a_conflict_in_the_repl(start_repl, project: Path) -> None:  # noqa: F811
    git_init(project)
    before = repo_state(project)
    with ScriptedModelServer(one_turn_script()) as server:
        repl = start_repl(server, "-y", *_sandbox_for_top_level_shell_edits())
        repl.send_line("shout, add new.txt, drop old.txt")
        repl.expect("All done.")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "HELLO\nworld\n"
        assert (project / "new.txt").exists() and not (project / "old.txt").exists()

        repl.send_line("/diff")
        shown = flat(repl.expect("old.txt"))
        assert "new.txt" in shown and "notes.txt" in shown and "+HELLO" in shown
        repl.expect_prompt()

        repl.send_line("/undo")
        assert "Undid turn 1" in flat(repl.expect("3 file"))
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "hello\nworld\n"
        assert not (project / "new.txt").exists() and (project / "old.txt").read_text() == "old\n"
        assert repo_state(project) == before

        repl.send_line("/redo")
        repl.expect("Redid turn 1")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "HELLO\nworld\n" and not (project / "old.txt").exists()

        (project / "notes.txt").write_text("mine\n")  # the user edits a file the turn changed
        repl.send_line("/undo")
        assert "notes.txt" in flat(repl.expect(r"Overwrite them anyway\?"))
        repl.send_line("n")
        repl.expect("Nothing was changed.")
        assert (project / "notes.txt").read_text() == "mine\n"
        repl.expect_prompt()
        repl.send_line("/undo")
        repl.expect(r"Overwrite them anyway\?")
        repl.send_line("y")
        repl.expect("Undid turn 1")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "hello\nworld\n"
        assert repl.exit() == 0


def test_rewind_takes_back_code_and_conversation(start_repl, project: Path) -> None:  # noqa: F811
    script = [
        turns.tool_calls(turns.call("execute", {"command": "echo one > a.txt"}, id="a")),
        turns.text("First done."),
        turns.tool_calls(turns.call("execute", {"command": "echo two > a.txt; echo b > b.txt"}, id="b")),
        turns.text("Second done."),
        turns.text("Answer after rewind."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "-y")
        for prompt, answer in (("first task", "First done."), ("second task", "Second done.")):
            repl.send_line(prompt)
            repl.expect(answer)
            repl.expect_prompt()
        repl.send_line("/rewind")
        listing = flat(repl.expect("Rewind to before which turn"))
        assert "1. " in listing and "first task" in listing and "second task" in listing
        repl.send_line("2")
        repl.expect(r"Restore \(c\)ode")
        repl.send_line("b")
        repl.expect("Rewound the conversation")
        assert (project / "a.txt").read_text() == "one\n" and not (project / "b.txt").exists()
        repl.expect_prompt()
        repl.child.sendcontrol("u")  # the rewound prompt was put back at the input: replace it
        repl.send_line("again")
        repl.expect("Answer after rewind.")
        last = server.requests[-1]["messages"]
        users = [m["content"] for m in last if m["role"] == "user"]
        assert users[-2:] == ["first task", "again"] and "second task" not in users
        repl.expect_prompt()
        assert repl.exit() == 0


def test_rewind_of_the_conversation_works_after_a_resume(start_repl, project: Path) -> None:  # noqa: F811
    script = [
        turns.tool_calls(turns.call("execute", {"command": "echo one > a.txt"}, id="a")),
        turns.text("First done."),
        turns.tool_calls(turns.call("execute", {"command": "echo two > a.txt"}, id="b")),
        turns.text("Second done."),
        turns.text("Answer after rewind."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "-y")
        for prompt, answer in (("first task", "First done."), ("second task", "Second done.")):
            repl.send_line(prompt)
            repl.expect(answer)
            repl.expect_prompt()
        assert repl.exit() == 0

        resumed = start_repl(server, "-y", "--continue")
        resumed.send_line("/rewind 2 both")
        resumed.expect("Rewound the conversation")
        assert (project / "a.txt").read_text() == "one\n"
        resumed.expect_prompt()
        resumed.child.sendcontrol("u")
        resumed.send_line("third task")
        resumed.expect("Answer after rewind.")
        users = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
        assert users == ["first task", "third task"]
        resumed.expect_prompt()
        assert resumed.exit() == 0


def test_the_rewind_questions_are_on_screen_whole_at_40_columns(home: Path, project: Path) -> None:  # noqa: F811
    script = [turns.tool_calls(turns.call("execute", {"command": "echo one > a.txt"}, id="a")),
              turns.text("First done.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, "-y", columns=40)
        try:
            screen.send("first task\r")
            screen.wait_text("First done.")
            (project / "a.txt").write_text("mine\n")  # changed outside the agent: /rewind asks to overwrite
            screen.send("/rewind\r")
            screen.wait_whole("Rewind to before which turn? (number; Enter: none)")
            screen.send("1\r")
            screen.wait_whole("Restore (c)ode, c(o)nversation or (b)oth? [b]")
            screen.send("\r")
            screen.wait_whole("Overwrite them anyway? Your changes to them are lost. [y/N]")
            screen.send("y\r")
            screen.wait_text("Rewound the")
        finally:
            screen.child.terminate(force=True)
    assert not (project / "a.txt").exists()
