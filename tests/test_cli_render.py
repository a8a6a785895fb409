"""Pure parts of the CLI's output: Markdown block splitting, call/result summaries, edit previews."""

from __future__ import annotations

from pathlib import Path

from agentica_cli.cli.diff_preview import preview_edit
from agentica_cli.cli.printers import compose_prompt
from agentica_cli.cli.render import split_markdown
from agentica_cli.cli.summaries import summarize_call, summarize_result


def test_split_markdown_keeps_the_unfinished_block_and_open_fences() -> None:
    assert split_markdown("one\n\ntwo") == ("one\n\n", "two")
    assert split_markdown("para one\nstill one") == ("", "para one\nstill one")
    text = "intro\n\n```py\nx = 1\n\ny = 2\n"
    assert split_markdown(text) == ("intro\n\n", "```py\nx = 1\n\ny = 2\n")  # blank line inside a fence
    closed = text + "```\n"
    assert split_markdown(closed) == (closed, "")
    assert split_markdown(closed + "after") == (closed, "after")


def test_call_summaries_pick_the_telling_argument() -> None:
    assert summarize_call("read_file", {"file_path": "calc.py", "offset": None}) == "read_file calc.py"
    assert summarize_call("execute", {"command": "pytest -q", "timeout": 120}) == "execute pytest -q"
    assert summarize_call("grep", {"pattern": "TODO", "path": "."}) == "grep TODO"
    assert summarize_call("grep", {"pattern": "TODO", "path": "src"}) == "grep TODO in src"
    assert summarize_call("write_todos", {"todos": [{}, {}]}) == "write_todos (2 items)"
    assert summarize_call("execute", {"command": "x" * 200}, width=20) == "execute " + "x" * 11 + "…"


def test_result_summaries_of_the_builtin_tools_output() -> None:
    read = "     1\timport os\n     2\t\n     3\tprint(1)\n(end of file: all 3 lines shown)"
    assert summarize_result("read_file", read) == "3 lines read"
    assert summarize_result("execute", "[exit code 1; 0.4 s]\nE   assert 1 == 2\nFAILED") == (
        "exit code 1, 2 lines of output"
    )
    assert summarize_result("execute", "[exit code 0; 0.0 s]\n(no output)") == "exit code 0, no output"
    grep = "app.py:3:# TODO: x\nlib.py:9:# TODO: y\n[2 matching lines in 2 files]"
    assert summarize_result("grep", grep) == "2 lines of matches"
    assert summarize_result("edit_file", "x", status="denied") == "denied: x"
    assert summarize_result("execute", "", status="cancelled") == "cancelled"
    assert summarize_result("read_file", "Error: FileNotFoundError: nope", status="error") == (
        "Error: FileNotFoundError: nope"
    )


def test_edit_preview_is_a_unified_diff(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    diff = preview_edit("edit_file", {"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}, tmp_path)
    assert diff == "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    new_file = preview_edit("write_file", {"file_path": "b.py", "content": "z = 0\n"}, tmp_path)
    assert new_file == "--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+z = 0\n"  # a new file comes from nowhere
    edits = [{"old_string": "x = 1", "new_string": "x = 10"}, {"old_string": "y = 2", "new_string": "y = 20"}]
    multi = preview_edit("multi_edit_file", {"file_path": "a.py", "edits": edits}, tmp_path)
    assert multi is not None and "+x = 10\n" in multi and "+y = 20\n" in multi
    assert preview_edit("execute", {"command": "ls"}, tmp_path) is None


def test_compose_prompt_with_piped_text() -> None:
    assert compose_prompt("explain", "log line\n") == "explain\n\n<stdin>\nlog line\n</stdin>"
    assert compose_prompt("", "the task\n") == "the task"
    assert compose_prompt("task", "  \n") == "task"


def _render(events: list) -> str:  # type: ignore[type-arg]
    import io

    from rich.console import Console

    from agentica_cli.cli.render import EventRenderer

    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=80, force_terminal=False), Path("."), markdown=False)
    for event in events:
        renderer.handle(event)
    return out.getvalue()


def test_a_retried_request_drops_its_partial_text_instead_of_showing_it_twice() -> None:
    from agentica_cli.agent.events import ModelRequestStarted, Notice, TextDelta, TurnFinished

    retry = Notice("Model request failed (stream cut); retrying in 0.1s", kind="retry")
    screen = _render([ModelRequestStarted(1), TextDelta("Hello wor"), retry, TextDelta("Hello world."),
                      TurnFinished("Hello world.")])
    assert screen.count("Hello wor") == 1 and "Hello world." in screen
    assert "cut off" not in screen  # nothing of the void attempt had been printed for good


def test_a_retry_after_printed_blocks_says_the_reply_starts_again() -> None:
    from agentica_cli.agent.events import ModelRequestStarted, Notice, TextDelta, TurnFinished

    retry = Notice("Model request failed (stream cut); retrying in 0.1s", kind="retry")
    screen = _render([ModelRequestStarted(1), TextDelta("First para.\n\nSecond pa"), retry,
                      TextDelta("First para.\n\nSecond para."), TurnFinished("First para.\n\nSecond para.")])
    assert screen.index("First para.") < screen.index("(the reply above was cut off; it starts again below)")
    assert screen.count("Second pa") == 1


def test_execute_and_edit_summaries_count_what_the_user_cares_about() -> None:
    out = "[exit code 0; 0.0 s]\n--- stdout ---\n5\n--- stderr ---\nwarning: x"
    assert summarize_result("execute", out) == "exit code 0, 2 lines of output"
    edit = ("Edited calc.py: 1 replacement.\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            "-    return a - b\n+    return a + b\n")
    assert summarize_result("edit_file", edit) == "Edited calc.py: 1 replacement. (+1 -1)"


def test_an_edit_that_cannot_apply_has_no_diff_preview(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    args = {"file_path": "a.py", "old_string": "not in the file", "new_string": "y"}
    assert preview_edit("edit_file", args, tmp_path) is None  # the question then shows the arguments


def test_a_sub_agent_header_comes_first_and_its_steps_are_indented_under_it() -> None:
    from agentica_cli.agent.events import ToolCallFinished, ToolCallStarted

    screen = _render([
        ToolCallStarted("t1", "task", {"description": "inspect calc"}),
        ToolCallStarted("r1", "read_file", {"file_path": "calc.py"}, source="task:t1"),
        ToolCallFinished("r1", "read_file", "     1\tx = 1\n", elapsed=0.01, source="task:t1"),
        ToolCallFinished("t1", "task", "calc.py sets x.", elapsed=0.5),
    ])
    assert screen.splitlines() == [
        "● task inspect calc",
        "  │ ● read_file calc.py",
        "  │   ⎿ 1 line read (0.0s)",
        "  ⎿ calc.py sets x. (0.5s)",
    ]


def test_side_by_side_sub_agents_repeat_their_header_when_their_lines_interleave() -> None:
    from agentica_cli.agent.events import ToolCallFinished, ToolCallStarted

    screen = _render([
        ToolCallStarted("t1", "task", {"description": "inspect calc"}),
        ToolCallStarted("t2", "task", {"description": "inspect util"}),
        ToolCallStarted("r1", "read_file", {"file_path": "calc.py"}, source="task:t1"),
        ToolCallFinished("r1", "read_file", "     1\tx = 1\n", elapsed=0.01, source="task:t1"),
        ToolCallFinished("t2", "task", "util is empty.", elapsed=0.4),
        ToolCallFinished("t1", "task", "calc.py sets x.", elapsed=0.5),
    ])
    assert screen.splitlines() == [
        "● task inspect calc",
        "● task inspect util",
        "● task inspect calc",  # again: the line below is t1's, not t2's
        "  │ ● read_file calc.py",
        "  │   ⎿ 1 line read (0.0s)",
        "● task inspect util",
        "  ⎿ util is empty. (0.4s)",
        "● task inspect calc",
        "  ⎿ calc.py sets x. (0.5s)",
    ]


def test_cancelling_leaves_a_line_for_each_running_tool() -> None:
    import io

    from rich.console import Console

    from agentica_cli.agent.events import ToolCallStarted
    from agentica_cli.cli.render import EventRenderer

    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=80, force_terminal=False), Path("."), markdown=False)
    renderer.handle(ToolCallStarted("x1", "execute", {"command": "sleep 30"}))
    renderer.cancel()
    assert out.getvalue().splitlines()[-2:] == ["● execute sleep 30", "  ⎿ cancelled (0.0s)"]


def test_blocks_printed_one_by_one_keep_the_blank_line_between_them() -> None:
    from agentica_cli.agent.events import ModelRequestStarted, TextDelta, TurnFinished

    screen = _render([ModelRequestStarted(1), TextDelta("One.\n\nTw"), TextDelta("o.\n\n"), TextDelta("Three."),
                      TurnFinished("One.\n\nTwo.\n\nThree.")])
    assert screen.splitlines() == ["One.", "", "Two.", "", "Three."]
