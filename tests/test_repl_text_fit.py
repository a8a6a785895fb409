"""Text that fits the terminal, as a person sees it (issue 28, items 1, 4, 8, 10, 11): the REPL on
a pseudo-terminal read through a terminal emulator, mostly at 80x24.

- prose wraps between words, continuation rows under the text (the trust question, /help, the
  --continue replay); a program's 80-wide lines keep their ends under our indent;
- CJK in Markdown table cells wraps like English (80 and 120 columns), never cut with `…`;
- the approval box is drawn again after the window narrows; a finished list block and the text
  before a tool call are on screen once in every frame;
- interrupted work is kept: the answer written so far reaches the model, a cancelled command's
  output stays on screen; a first message given as an argument is in the transcript;
- yes/no questions take one key, as approvals do.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from cli_support import AGENTICA, cli_env, model_args
from screen_support import PROMPT, Screen, open_screen, spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns

TRUST_TEXT = ("These can start programs, send your API key or data elsewhere, skip confirmations or raise time "
              "and spending limits, so they are off until you trust this project.")


def rows_of(text: str) -> list[str]:
    return text.split("\n")


def assert_no_word_cut(text: str, prose: str) -> None:
    """No word of `prose` is split over two rows of `text` (its first part at a row's end, the
    rest starting the next row)."""
    words = set(prose.split())
    rows = rows_of(text)
    for upper, lower in itertools.pairwise(rows):
        if not upper.strip() or not lower.strip():
            continue
        left, right = upper.split()[-1], lower.split()[0]
        joined = left + right
        if joined in words and not (left in words and right in words):
            pytest.fail(f"{joined!r} is cut over two rows:\n{upper}\n{lower}")


def settle(screen: Screen, seconds: float = 0.3) -> str:
    time.sleep(seconds)
    screen.pump()
    return screen.text()


# -- item 1 and 11: prose wraps between words; a yes/no question takes one key -------------------


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_the_trust_question_and_help_wrap_between_words_and_a_yes_no_question_takes_one_key(
        home: Path, project: Path, columns: int, lines: int) -> None:
    from agentica_cli.tui import slash

    (project / ".agentica").mkdir()
    (project / ".agentica" / "config.toml").write_text('[permissions]\nmode = "auto"\n')
    with ScriptedModelServer([]) as server:
        screen = open_screen(home, project, model_args(server), columns=columns, lines=lines, history=400)
        try:
            shown = screen.wait_whole("Trust this project? [y/N]")
            assert_no_word_cut(shown, TRUST_TEXT)
            screen.send("n")  # one key, no Enter: as an approval is answered
            screen.wait_text("Not trusted")
            screen.wait_text(PROMPT)
            screen.send("/help\r")
            screen.wait_text("!command")
            shown = settle(screen)
            everything = screen.all_text()
        finally:
            screen.child.terminate(force=True)
    keys = [*getattr(slash, "KEYS", []), *getattr(slash, "INPUT_HELP", [])]
    for text in [*slash.COMMANDS.values(), *(meaning for _, meaning in keys)]:
        assert_no_word_cut(everything, text)
    for key in ("Shift+Tab", "Esc", "Ctrl-O", "Up / Down", "Ctrl-R", "Ctrl-V", "Ctrl-C", "Ctrl-D"):
        assert any(row.lstrip().startswith(key) for row in rows_of(everything)), key
    assert "mode default" in everything  # not trusted: the project's mode = "auto" was not taken
    assert shown.rstrip().endswith(PROMPT) or PROMPT in shown


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_the_continue_replay_wraps_under_its_text(home: Path, project: Path, columns: int, lines: int) -> None:
    prompt = ("please read every file in this project and tell me which of them still mention the old "
              "configuration format, then suggest how to move each of them to the new one")
    answer = ("Three files still use the old format: the settings loader, the command line parser and the "
              "migration script, and each needs its section names renamed before the next release.")
    with ScriptedModelServer([turns.text(answer)]) as server:
        done = subprocess.run([*AGENTICA, "-p", prompt, *model_args(server)], cwd=project, env=cli_env(home),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        screen = spawn_screen(home, project, server, "--continue", columns=columns, lines=lines)
        try:
            shown = screen.text()
        finally:
            screen.child.terminate(force=True)
    rows = rows_of(shown)
    you = next(i for i, row in enumerate(rows) if row.startswith("  you: please"))
    agent = next(i for i, row in enumerate(rows) if row.startswith("  agent: Three"))
    assert rows[you + 1].startswith(" " * 7) and rows[you + 1].strip()  # under the prompt's text, not at column 0
    assert rows[agent + 1].startswith(" " * 9) and rows[agent + 1].strip()
    assert_no_word_cut(shown, prompt)
    assert_no_word_cut(shown, answer)


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_a_terminal_wide_output_line_keeps_its_end_under_the_indent(home: Path, project: Path,
        columns: int, lines: int) -> None:
    line = "tests/test_a.py ...." + " " * (columns - 26) + "[100%]"  # pytest pads to the terminal's width
    command = f"printf '%s\\n' '{line}'"
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x1")), turns.text("Tests pass.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, "--yes", columns=columns, lines=lines)
        try:
            screen.send("run the tests\r")
            shown = screen.wait_text("Tests pass.")
        finally:
            screen.child.terminate(force=True)
    row = next(row for row in rows_of(shown) if row.startswith("    tests/test_a.py"))  # the output, not the call
    assert row.rstrip().endswith("[100%]"), shown
    assert not any(row.strip() == "[100%]" for row in rows_of(shown))


# -- item 4: CJK in table cells ------------------------------------------------------------------

CJK_CELL = "解析器负责把用户输入的命令行参数转换成内部的配置对象，并且检查每一个参数是否合法"
CJK_TABLE = ("| 模块 | 说明 | Notes |\n|---|---|---|\n"
             f"| parser | {CJK_CELL} | The parser turns the command line into settings and checks every flag |\n"
             "| 渲染 | 渲染模块把模型的回答按照终端的宽度显示出来，包括表格、列表和代码块 | Rendering ends here |\n")


def _cjk(text: str) -> str:
    return "".join(char for char in text if "\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef")


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_cjk_table_cells_wrap_by_display_width(home: Path, project: Path, columns: int, lines: int) -> None:
    with ScriptedModelServer([turns.text(CJK_TABLE)]) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        try:
            screen.send("describe the modules\r")
            screen.wait_text("Rendering ends here")
            shown = settle(screen)
        finally:
            screen.child.terminate(force=True)
    assert "…" not in shown, shown
    seen = iter(_cjk(shown))
    assert all(char in seen for char in CJK_CELL), shown  # every character, in order: nothing cut
    assert all(char in _cjk(shown) for char in "包括表格、列表和代码块")
    assert {"checks", "every", "flag"} <= set(shown.split())  # the English beside it wraps as before


# -- item 8: redraws and frames ------------------------------------------------------------------


def test_the_approval_box_is_drawn_again_after_the_window_narrows(home: Path, project: Path) -> None:
    edit = {"file_path": "notes.txt", "old_string": "hello from the notes", "new_string": "goodbye from the notes"}
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
              turns.tool_calls(turns.call("edit_file", edit, id="e1")), turns.text("Edited.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=100, lines=30)
        try:
            screen.send("change the notes\r")
            screen.wait_text("Allow?")
            screen.resize(60, 30)

            def whole_box(text: str) -> bool:  # a top border with both corners, drawn at 60 columns
                return any("╭" in row and row.rstrip().endswith("╮") for row in rows_of(text))

            shown = screen.wait_for(whole_box, timeout=8, what="the box drawn again at 60 columns")
            shown = settle(screen)
            assert shown.count("Allow?") == 1 and shown.count("wants to run") == 1, shown
            assert "+goodbye from the notes" in shown.replace("│", " ").replace("  ", " ") or "goodbye" in shown
            screen.send("y")
            screen.wait_text("Edited.")
        finally:
            screen.child.terminate(force=True)
    assert (project / "notes.txt").read_text() == "goodbye from the notes\n"


class FrameWatch:
    """Counts, after every piece of output, how often `needle` is on screen: the most seen."""

    def __init__(self, screen: Screen, needles: list[str]):
        self.screen, self.needles = screen, needles
        self.most = dict.fromkeys(needles, 0)
        screen.child.logfile_read = self  # in place of the screen: each piece goes to it, then is counted

    def write(self, data: str) -> None:
        self.screen.write(data)
        text = self.screen.text()
        for needle in self.needles:
            self.most[needle] = max(self.most[needle], text.count(needle))

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_a_streamed_list_and_the_text_before_a_tool_call_are_on_screen_once_in_every_frame(
        home: Path, project: Path, columns: int, lines: int) -> None:
    text = ("Here is the plan for the change.\n\n- first item alpha\n- second item beta\n- third item gamma\n\n"
            "Now I read the notes before I change anything.")
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1"), content=text)
              | {"chunk_delay": 0.03}, turns.text("All read.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        watch = FrameWatch(screen, ["first item alpha", "third item gamma", "Now I read the notes"])
        try:
            screen.send("plan it\r")
            screen.wait_text("All read.")
            settle(screen)
        finally:
            screen.child.terminate(force=True)
    assert watch.most == dict.fromkeys(watch.needles, 1), watch.most


# -- item 10: interrupted work is kept -----------------------------------------------------------

STORY = ("Once upon a time a small parser lived in a large repository, and every morning it read the "
         "configuration files one by one, slowly, carefully, and it never skipped a single line of them.")


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_an_interrupted_answer_reaches_the_model_and_a_first_message_is_shown(home: Path, project: Path,
        columns: int, lines: int) -> None:
    script = [turns.text(STORY, chunk_delay=0.15), turns.text("Understood.")]
    with ScriptedModelServer(script) as server:
        screen = open_screen(home, project, [*model_args(server), "tell me a story"], columns=columns, lines=lines)
        try:
            screen.wait_text("Once upon a time")
            assert f"{PROMPT} tell me a story" in screen.text()  # the argument is in the transcript
            screen.send("\x1b")  # Esc: interrupt the answer
            screen.wait_text("(interrupted)")
            screen.wait_text(PROMPT + " ")
            screen.send("go on\r")
            screen.wait_text("Understood.")
        finally:
            screen.child.terminate(force=True)
    history = server.requests[1]["messages"]
    asked = next(i for i, m in enumerate(history) if m["role"] == "user" and m["content"] == "tell me a story")
    kept = history[asked + 1]
    assert kept["role"] == "assistant" and kept["content"].startswith("Once upon a time")
    assert len(kept["content"]) < len(STORY) + 80  # what it had written, not the whole story
    assert history[asked + 2]["content"] == "go on"


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_ctrl_c_on_a_running_command_keeps_its_output_and_adds_a_cancelled_line(home: Path, project: Path,
        columns: int, lines: int) -> None:
    command = "printf 'compiling step-one\\ncompiling step-two\\n'; sleep 30"
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x1")), turns.text("unused")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, "--yes", columns=columns, lines=lines)
        try:
            screen.send("build it\r")
            screen.wait_for(lambda t: "\n    compiling step-two" in t, what="the output under the spinner")
            screen.send("\x03")
            shown = screen.wait_text("cancelled")
            shown = screen.wait_text("(interrupted)")
        finally:
            screen.child.terminate(force=True)
    rows = rows_of(shown)
    cancelled = next(i for i, row in enumerate(rows) if "⎿ cancelled" in row)
    output = [i for i, row in enumerate(rows) if row.startswith("    compiling step-")]
    assert len(output) == 2 and all(i < cancelled for i in output), shown  # kept, above the cancelled line


# -- item 11: /status; /context; /export ---------------------------------------------------------


def _demo_server_config(home: Path) -> None:
    import sys

    demo = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"
    (home / "config.toml").write_text(f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{demo}"]\n')


def _number(row: str, label: str) -> int:
    match = re.search(rf"{re.escape(label)}\s+([\d,]+)", row)
    assert match, row
    return int(match.group(1).replace(",", ""))


def _context_rows(context: str, labels: tuple[str, ...]) -> dict[str, str]:
    rows = rows_of(context)
    return {label: next(r for r in rows if f" {label} " in r) for label in labels}


def test_status_and_context_show_what_the_session_is_made_of(home: Path, project: Path) -> None:
    (project / "AGENTS.md").write_text("Run the tests with make test.\n")
    (project / "big.txt").write_text("lorem ipsum dolor sit amet " * 1500)  # ~40,000 characters
    # a tool call, so two turns leave more than /compact keeps (4 messages) after the first prompt
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "AGENTS.md"}, id="r1")),
              turns.text("Read it."), turns.text("Second.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24, history=400)
        try:
            for message, reply in (("read @big.txt", "Read it."), ("next", "Second.")):
                screen.send(message + "\r")
                screen.wait_text(reply)
            screen.send("/status\r")
            screen.wait_text("permission mode:")
            status = " ".join(settle(screen, 0.1).split())
            screen.send("\x0c/context\r")  # Ctrl-L first: the table on a clean screen
            screen.wait_text("/compact would free")
            context = settle(screen, 0.1)
        finally:
            screen.child.terminate(force=True)
    assert f"base URL: {server.base_url}" in status
    assert "instructions: AGENTS.md" in status and "MCP servers: none" in status
    session = re.search(r"session: (\S+) \(agentica --resume \1\)", status)
    assert session and list((home / "sessions").rglob(f"{session.group(1)}*")), status

    row = _context_rows(context, ("system prompt", "instruction files", "tools", "conversation", "attachments",
                                  "free"))
    attached = _number(row["attachments"], "attachments")
    assert 9_000 <= attached <= 11_000  # 40,000 characters at about four a token
    assert _number(row["instruction files"], "instruction files") > 0
    total = re.search(r"context: about ([\d,]+) of ([\d,]+) tokens", " ".join(context.split()))
    assert total
    parts = sum(_number(row[label], label) for label in row if label != "free")
    assert int(total.group(1).replace(",", "")) == parts
    assert parts + _number(row["free"], "free") == int(total.group(2).replace(",", ""))
    frees = re.search(r"/compact would free about ([\d,]+) tokens", " ".join(context.split()))
    assert frees and int(frees.group(1).replace(",", "")) >= attached  # the first turn, attachment and all
    assert any(re.fullmatch(r"  [█▓▒▚▞▤▥▦]+·+", r.rstrip()) for r in rows_of(context)), context  # the bar


def test_status_and_context_name_each_mcp_server_and_what_its_tools_take(home: Path, project: Path) -> None:
    _demo_server_config(home)
    with ScriptedModelServer([]) as server:  # no request is needed: /context counts the next one
        screen = spawn_screen(home, project, server, columns=120, lines=40)
        try:
            for _ in range(60):  # the MCP server starts in the background
                screen.send("\x0c/status\r")
                shown = screen.wait_text("permission mode:")
                if "demo (ready" in shown:
                    break
                time.sleep(0.2)
            status = " ".join(settle(screen, 0.1).split())
            screen.send("\x0c/context\r")
            screen.wait_text("/compact would free")
            context = settle(screen, 0.1)
        finally:
            screen.child.terminate(force=True)
    assert re.search(r"MCP servers: demo \(ready, \d+ tools?\)", status), status
    row = _context_rows(context, ("MCP demo", "tools"))
    assert _number(row["MCP demo"], "MCP demo") > 0 and re.search(r"\d+ tools?", row["MCP demo"])
    assert server.requests == []


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_export_writes_the_conversation_with_its_diffs_and_never_overwrites_unasked(
        home: Path, project: Path, columns: int, lines: int) -> None:
    edit = {"file_path": "notes.txt", "old_string": "hello from the notes", "new_string": "goodbye from the notes"}
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
              turns.tool_calls(turns.call("edit_file", edit, id="e1")), turns.text("Edited the notes.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, "--yes", columns=columns, lines=lines, history=400)
        try:
            screen.send("change the notes\r")
            screen.wait_text("Edited the notes.")
            screen.send("/export\r")
            screen.wait_text("Wrote")
            written = sorted(project.glob("agentica-*.md"))
            screen.send("/export notes.txt\r")
            screen.wait_text("Not exported")
            screen.send("/export ../outside.md\r")
            screen.wait_for(lambda _: screen.all_text().count("Not exported") == 2, what="the second refusal")
            screen.send("/export conversation.json\r")
            screen.wait_for(lambda _: screen.all_text().count("Wrote") == 2, what="the JSON export")
            first_json = (project / "conversation.json").read_text()
            screen.send("/export conversation.json --force\r")
            screen.wait_text("Replaced")
        finally:
            screen.child.terminate(force=True)
    assert len(written) == 1
    markdown = written[0].read_text()
    assert markdown.index("change the notes") < markdown.index("edit_file") < markdown.index("Edited the notes.")
    diff = markdown[markdown.index("```diff"):]
    assert "-hello from the notes" in diff and "+goodbye from the notes" in diff
    assert (project / "notes.txt").read_text() == "goodbye from the notes\n"  # not replaced by the export
    assert not (project.parent / "outside.md").exists()  # outside the project: refused
    exported = json.loads(first_json)
    assert [m["role"] for m in exported["messages"]] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert "+goodbye from the notes" in exported["diffs"]["e1"]
    assert json.loads((project / "conversation.json").read_text())["messages"] == exported["messages"]


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_onboarding_yes_no_questions_take_one_key_as_approvals_do(home: Path, project: Path,
        columns: int, lines: int) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on: the key cannot be checked
        sock.bind(("127.0.0.1", 0))
        unreachable = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    screen = open_screen(home, project, ["--base-url", unreachable, "--provider", "deepseek"],
            columns=columns, lines=lines)
    try:
        screen.wait_text("Paste your deepseek API key")
        screen.send("sk-offline\r")
        screen.wait_whole("Save it anyway? [y/N]")
        screen.send("y")  # one key, no Enter
        shown = screen.wait_text("Saved to")
        screen.wait_text(PROMPT)
    finally:
        screen.child.terminate(force=True)
    assert "Save it anyway? [y/N] y" in shown  # the answer stays beside its question
    assert "sk-offline" in (home / "config.toml").read_text()
