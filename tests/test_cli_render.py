"""Pure parts of the CLI's output: Markdown block splitting, call/result summaries, edit previews."""

from __future__ import annotations

from pathlib import Path

from agentica_cli.app.edit_preview import preview_edit
from agentica_cli.app.summaries import summarize_call, summarize_result
from agentica_cli.headless.printers import compose_prompt
from agentica_cli.tui.render import split_markdown


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

    from agentica_cli.tui.render import EventRenderer

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
    from agentica_cli.tui.render import EventRenderer

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


def _screen(renderable, width: int = 60) -> str:  # type: ignore[no-untyped-def]
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False).print(renderable)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def test_markdown_has_one_blank_line_between_blocks_and_left_headings() -> None:
    answer = "# Title\n\nA paragraph.\n\n## Steps\n\n- one\n- two\n\n```sh\nls\n```\n\nEnd."
    screen = _render_markdown(answer)
    assert screen.splitlines() == ["Title", "", "A paragraph.", "", "Steps", "", " • one", " • two", "", "ls", "",
                                   "End."]


def _render_markdown(answer: str, width: int = 60, step: int = 7) -> str:
    import io

    from rich.console import Console

    from agentica_cli.agent.events import ModelRequestStarted, TextDelta, TurnFinished
    from agentica_cli.tui.render import EventRenderer

    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=width, force_terminal=False), Path("."))
    renderer.handle(ModelRequestStarted(1))
    for start in range(0, len(answer), step):  # streamed in small pieces, as a model sends it
        renderer.handle(TextDelta(answer[start:start + step]))
    renderer.handle(TurnFinished(answer))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def test_a_long_code_line_is_printed_whole_and_cut_with_a_mark_in_the_live_area() -> None:
    from agentica_cli.tui.terminal_markdown import TerminalMarkdown

    command = "pip install a-package --with-a-long-option=value --and-another-one=value2 --yes"
    screen = _render_markdown(f"Run:\n\n```bash\n{command}\n```\n", width=40)
    assert command in screen.splitlines()  # one line: the terminal wraps it, a copy is whole
    live = _screen(TerminalMarkdown(f"```bash\n{command}\n```"), width=40)
    assert live == command[:39] + "…"  # still streaming: cut at the edge, visibly


def test_diffs_are_drawn_with_old_and_new_line_numbers(tmp_path: Path) -> None:
    from agentica_cli.tui.diff_preview import render_diff

    (tmp_path / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 13)))
    diff = preview_edit("edit_file", {"file_path": "a.py", "old_string": "line 10\n", "new_string": "ten\nten b\n"},
                        tmp_path)
    assert diff is not None
    rows = [" ".join(line.split()) for line in _screen(render_diff(diff)).splitlines()]
    assert rows == ["--- a/a.py", "+++ b/a.py", "@@ -7,6 +7,7 @@", "7 7 line 7", "8 8 line 8", "9 9 line 9",
                    "10 -line 10", "10 +ten", "11 +ten b", "11 12 line 11", "12 13 line 12"]
    new = render_diff(preview_edit("write_file", {"file_path": "n.sh", "content": "a\nb\n"}, tmp_path) or "")
    assert [" ".join(line.split()) for line in _screen(new).splitlines()] == [
        "--- /dev/null", "+++ b/n.sh", "@@ -0,0 +1,2 @@", "1 +a", "2 +b"]


def test_diff_lines_show_control_characters_and_keep_line_endings(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    diff = preview_edit("edit_file", {"file_path": "w.txt", "old_string": "two", "new_string": "2\x1b[2K\x1b[1A"},
                        tmp_path)
    assert diff == "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2␛[2K␛[1A\n"


def test_partial_reads_and_cut_command_output_are_summarised_honestly(tmp_path: Path) -> None:
    from builtin_support import call_tool

    from builtin_tools import BuiltinExecuteTool

    page = "     1\trow\n(lines 1-2,000 of 5,000 shown; next page: offset=2001)"
    assert summarize_result("read_file", page) == "read lines 1–2,000 of 5,000"
    last = "  4001\trow\n(end of file: lines 4,001-5,000 of about 5,000 shown)"
    assert summarize_result("read_file", last) == "read lines 4,001–5,000 of about 5,000"
    result = call_tool(BuiltinExecuteTool(tmp_path), "execute", command="seq 1 20000").result
    assert summarize_result("execute", result) == (
        "exit code 0, printed 20,000 lines; the model got the first and last 15,000 characters")


def test_the_model_wait_line_counts_tokens_and_a_retry_down() -> None:
    import time

    from agentica_cli.tui.live_view import ModelWait

    wait = ModelWait()
    now = time.monotonic()
    assert wait.status(now).startswith("Waiting for the model · ")
    wait.received(40, reasoning=True)
    assert wait.status(now).startswith("Thinking · ") and wait.status(now).endswith("~10 tokens")
    wait.received(400)
    assert wait.status(now).endswith("~110 tokens") and wait.status(now).startswith("Writing · ")
    wait.retrying("retrying in 3 s (attempt 2 of 5): HTTP 503", None)
    now = time.monotonic()
    assert wait.status(now) == "retrying in 3 s (attempt 2 of 5): HTTP 503"
    assert wait.status(now + 1.2) == "retrying in 2 s (attempt 2 of 5): HTTP 503"  # a live countdown
    assert wait.status(now + 3.5).startswith("Waiting for the model")  # the request is sent again


def test_a_running_command_shows_its_last_lines_as_a_terminal_would() -> None:
    from agentica_cli.tui.live_view import RunningTool

    tool = RunningTool("execute make", "")
    tool.add_output("".join(f"step {i}\n" for i in range(1, 9)))
    tool.add_output("download 10%\rdownload 55%\r")  # a progress bar redrawing its line
    lines = _screen(tool).splitlines()
    assert "execute make" in lines[0]
    assert [line.strip() for line in lines[1:]] == ["step 5", "step 6", "step 7", "step 8", "download 55%"]


def test_expand_prints_the_whole_result_of_the_last_call() -> None:
    import io

    from rich.console import Console

    from agentica_cli.agent.events import ToolCallFinished, ToolCallStarted
    from agentica_cli.tui.render import EventRenderer

    out = io.StringIO()
    renderer = EventRenderer(Console(file=out, width=80, force_terminal=False), Path("."), markdown=False)
    assert not renderer.expand_last()
    output = "\n".join(f"row {i}" for i in range(1, 11))
    renderer.handle(ToolCallStarted("x1", "execute", {"command": "rows"}))
    renderer.handle(ToolCallFinished("x1", "execute", f"[exit code 0; 0.1 s]\n--- stdout ---\n{output}", elapsed=0.1))
    shown = out.getvalue()
    assert "row 1\n" not in shown and "… +6 lines (/expand shows the output)" in shown and "row 10" in shown
    assert renderer.expand_last()
    assert out.getvalue()[len(shown):].endswith(f"--- stdout ---\n{output}\n")
