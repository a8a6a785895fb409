"""The REPL's approval question and grants against the review's shell-quoting attacks (issue 25,
item 1), through a pseudo-terminal: a `git status` grant does not cover them, a no-break space
is shown as what it is, and "always" is not offered for a line the check cannot read."""

from __future__ import annotations

from pathlib import Path

from screen_support import spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns

ANSI_C_ATTACK = "git status $'\\''; echo X > PWNED; rm -rf important #'"
NBSP_ATTACK = "ls\u00a0# list; touch PWNED"


def test_a_grant_and_the_question_see_what_bash_runs(home: Path, project: Path) -> None:
    (project / "important").mkdir()
    script = [
        turns.tool_calls(turns.call("execute", {"command": "git status"}, id="x1")),
        turns.tool_calls(turns.call("execute", {"command": ANSI_C_ATTACK}, id="x2")),
        turns.tool_calls(turns.call("execute", {"command": NBSP_ATTACK}, id="x3")),
        turns.text("Done."),
    ]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=120, lines=50)
        screen.send("status please\r")
        shown = screen.wait_text("Allow?")
        assert "don't ask again for `git status` commands" in shown
        screen.send("a")
        # the grant does not cover the ANSI-C line: it is asked, with no "always" to offer
        shown = screen.wait_for(lambda text: "echo X > PWNED" in text and text.rstrip().endswith("Allow? [y/n/e, esc]"),
                                what="the second question, without 'always'")
        screen.send("n")
        shown = screen.wait_for(lambda text: "ls<U+00A0># list; touch PWNED" in text
                                and text.rstrip().endswith("Allow? [y/n/e, esc]"), what="the third question")
        assert "unusual spaces" in shown
        assert "don't ask again for `ls" not in shown
        screen.send("n")
        screen.wait_text("Done.")
        screen.child.terminate(force=True)
    assert not (project / "PWNED").exists()
    assert (project / "important").is_dir()
