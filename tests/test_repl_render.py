"""What the REPL shows while it works, through a pseudo-terminal against the scripted model
server: the spinner while the model is slow, a command's output while it runs, /expand."""

from __future__ import annotations

import re
from pathlib import Path

from test_repl import project  # noqa: F401  (fixture)

from agentica_cli.testing import ScriptedModelServer, turns

STYLE = r"(?:\x1b\[[0-9;]*m)*"  # rich's styling between parts of a line (NO_COLOR keeps dim and bold)


def plain(screen: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)


def test_a_spinner_shows_while_the_model_is_slow(start_repl) -> None:
    # the spinner starts before the request is sent and the reply comes 3 s after it arrives, so
    # the spinner is due first however long a busy machine takes to start the agent
    with ScriptedModelServer([turns.text("The late reply.", delay=3)]) as server:
        repl = start_repl(server)
        repl.send_line("hello")
        screen = repl.expect(rf"Waiting for the model · \d+\.\ds{STYLE} · esc/ctrl-c to interrupt")
        screen += repl.expect(r"Waiting for the model · [1-9]\.\ds")  # its clock runs
        assert "The late reply." not in screen
        assert all(r.finished_at == 0.0 for r in server.request_log)  # the reply has not been sent yet
        repl.expect("The late reply.")
        repl.expect_prompt()
        assert repl.exit() == 0


def test_command_output_shows_while_it_runs_and_a_tail_stays(start_repl, project: Path) -> None:  # noqa: F811
    # the command prints its second line only once the test has seen the first on screen (a file
    # in the work folder is the signal), so the check holds however busy the machine is
    command = ("printf 'first-%s\\n' live; while [ ! -e go ]; do sleep 0.05; done; sleep 1; "
               "printf 'second-%s\\n' live")
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x1")), turns.text("Ran it.")]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "--yes")
        repl.send_line("run it")
        screen = repl.expect("first-live")  # printed by the command, shown under its spinner
        assert "second-live" not in screen and "exit code" not in screen  # the command still runs
        assert len(server.requests) == 1  # its result has not gone back to the model
        (project / "go").touch()
        screen = plain(repl.expect("Ran it."))
        assert re.search(r"⎿ exit code 0, 2 lines of output \(\d+\.\ds\)\s+first-live\s+second-live", screen)
        repl.expect_prompt()
        assert repl.exit() == 0


def test_a_long_output_leaves_a_short_tail_and_expand_shows_it_all(start_repl) -> None:
    script = [turns.tool_calls(turns.call("execute", {"command": "seq -f 'row-%02g' 1 10"}, id="x1")),
              turns.text("Counted.")]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "--yes")
        repl.send_line("count")
        screen = plain(repl.expect("Counted."))
        done = screen[screen.index("exit code 0, 10 lines of output"):]
        assert "+6 lines" in done and "row-07" in done and "row-10" in done and "row-06" not in done
        repl.expect_prompt()
        repl.send_line("/expand")
        screen = repl.expect("row-10")
        assert "row-01" in screen and "row-06" in screen  # every line, what the model got
        repl.expect_prompt()
        repl.child.sendcontrol("o")  # the same at one key, without leaving the input line
        screen = repl.expect("row-10")
        assert "row-01" in screen and "row-06" in screen
        repl.expect_prompt()  # redrawn under the output: Ctrl-D sent before that could be lost
        assert repl.exit() == 0


def test_a_retry_counts_down_its_wait(start_repl) -> None:
    script = [turns.error(503, "overloaded", retry_after=3), turns.text("Second time lucky.")]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server)
        repl.send_line("hello")
        repl.expect(r"retrying in 3 s \(attempt 2 of \d+\): HTTP 503")  # the note, and the live line
        screen = repl.expect(rf"retrying in 2 s{STYLE} \(attempt 2 of \d+\): HTTP 503", timeout=5)  # a second later
        assert "Second time lucky." not in screen
        repl.expect("Second time lucky.")
        repl.expect_prompt()
        assert len(server.requests) == 2
        assert repl.exit() == 0
