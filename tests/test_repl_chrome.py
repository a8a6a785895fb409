"""The REPL around the conversation, through a pseudo-terminal: the status line under the input
(and Shift+Tab), a user statusline command, notifications, large pastes, the replayed
transcript on resume, and /compact refusing an unusable summary."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import model_args
from screen_support import PROMPT, Screen, exit_repl, spawn_agentica, spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello\nworld\n")
    return path


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def _user_config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text)


def _status_row(text: str) -> str:
    """The line right under the input line (the last `❯` on screen)."""
    lines = text.splitlines()
    prompt_row = max(i for i, line in enumerate(lines) if line.startswith(PROMPT))
    return lines[prompt_row + 1]


# -- the status line -----------------------------------------------------------------------------


def test_status_line_shows_model_mode_context_and_tokens_and_shift_tab_cycles_the_mode(
    home: Path, project: Path, screens: list[Screen]
) -> None:
    script = [turns.text("First answer.", usage={"prompt_tokens": 32_000, "completion_tokens": 40}),
              turns.text("Planned.")]
    with ScriptedModelServer(script) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        text = screen.wait_text("mode: default")
        assert _status_row(text).startswith("scripted-model · mode: default (shift+tab)")
        assert "context" not in _status_row(text)  # nothing sent yet: nothing known
        screen.send("hello")
        screen.wait_text(f"{PROMPT} hello")
        screen.send("\r")
        text = screen.wait_text("First answer.")
        text = screen.wait_for(lambda t: "context 25%" in t, what="the context after the first request")
        assert "· context 25% · 32.0k tokens" in _status_row(text)  # 32,000 of the model's 128,000
        for mode in ("accept-edits", "plan", "default", "accept-edits", "plan"):
            screen.send("\x1b[Z")  # Shift+Tab
            text = screen.wait_text(f"mode: {mode} ")
            assert f"mode: {mode} " in _status_row(text)
        screen.send("make a plan\r")
        screen.wait_text("Planned.")
        # the mode chosen with Shift+Tab is the one the turn ran in
        assert "Plan mode is on" in server.requests[1]["messages"][0]["content"]
        assert "Plan mode is on" not in server.requests[0]["messages"][0]["content"]
        screen.send("/permissions\r")
        screen.wait_text("mode: plan   (modes:")


def test_a_statusline_command_replaces_the_line_and_reads_the_session_as_json(
    home: Path, project: Path, screens: list[Screen], tmp_path: Path
) -> None:
    seen = tmp_path / "statusline-input.jsonl"
    script = tmp_path / "statusline.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        "print(f\"MY LINE mode={data['mode']} model={data['model']['id']} \\x1b[31mred\")\n"
        "print('a second line is not shown')\n"
    )
    _user_config(home, f'[ui]\nstatusline = "{sys.executable} {script}"\n')
    with ScriptedModelServer([turns.text("Done.", usage={"prompt_tokens": 64_000})]) as server:
        screen = spawn_screen(home, project, server, columns=100, lines=24)
        screens.append(screen)
        text = screen.wait_text("MY LINE mode=default model=scripted-model")
        row = _status_row(text)
        assert row.startswith("MY LINE") and "␛[31mred" in row  # its escape sequence is shown, not obeyed
        assert "shift+tab" not in text and "a second line" not in text
        screen.send("\x1b[Z")
        screen.wait_text("MY LINE mode=accept-edits")  # a mode change runs it again at once
        screen.send("go\r")
        screen.wait_text("Done.")
        screen.wait_text("MY LINE mode=accept-edits")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the run after the turn (usage changed) has written its input
            inputs = [json.loads(line) for line in seen.read_text().splitlines()]
            if inputs[-1]["usage"]["total_tokens"]:
                break
            time.sleep(0.1)
            screen.pump()
    first, last = inputs[0], inputs[-1]
    assert first["mode"] == "default" and first["work_dir"] == first["cwd"] == str(project.resolve())
    assert first["session_id"] is None and first["context_percent"] is None
    assert first["model"] == {"id": "scripted-model", "display_name": "scripted-model"}
    assert last["context_percent"] == 50.0 and last["context_tokens"] == 64_000
    assert last["session_id"] and last["usage"]["input_tokens"] == 64_000
    assert last["context_window"] == 128_000


def test_a_project_statusline_command_waits_for_trust(home: Path, project: Path) -> None:
    (project / ".agentica").mkdir()
    (project / ".agentica" / "config.toml").write_text('[ui]\nstatusline = "touch statusline-ran; echo PROJECT"\n')
    with ScriptedModelServer([]) as server:
        child = spawn_agentica(home, project, model_args(server))
        try:
            child.expect(r"sets\s+ui\.statusline\.")  # the line wraps between words where the path ends
            child.expect(r"Trust this project\? \[y/N\] ")
            child.send("n\r")
            child.expect("mode: default \\(shift\\+tab\\)")  # the built-in line
            child.send("/help\r")  # redraws and a second prompt: the command had every chance
            child.expect("/exit")
            child.expect("mode: default \\(shift\\+tab\\)")
            assert exit_repl(child) == 0
        finally:
            child.close(force=True)
    assert not (project / "statusline-ran").exists()


# -- notifications -------------------------------------------------------------------------------


def test_a_long_turn_and_a_waiting_question_ring_the_bell_and_send_osc_9(home: Path, project: Path) -> None:
    # The first turn waits for the agent's imports (seconds on a loaded machine): it only warms up.
    # The second is one local request, far under notify_after; the slow one lasts longer by script.
    _user_config(home, "[ui]\nnotify_after = 1.5\n")
    script = [
        turns.text("Warm."),
        turns.text("Quick."),
        turns.text("Slow.", delay=1.6),
        turns.tool_calls(turns.call("write_file", {"file_path": "new.txt", "content": "x\n"}, id="w1")),
        turns.text("Not written."),
    ]
    with ScriptedModelServer(script) as server:
        child = spawn_agentica(home, project, model_args(server))
        try:
            child.expect(PROMPT)
            child.send("warm\r")
            child.expect("Warm.")
            child.expect(PROMPT)
            child.send("quick\r")
            child.expect("Quick.")
            child.expect(PROMPT)
            assert "\x1b]9;" not in child.before  # under notify_after: no notification
            child.send("slow\r")
            child.expect_exact("Slow.")
            child.expect_exact("\x07\x1b]9;agentica: finished after ")
            child.expect(r"\d\.\ds\x07")
            child.expect(PROMPT)
            child.send("write it\r")
            child.expect_exact("\x07\x1b]9;agentica: a tool call waits for your answer\x07")
            child.send("n")
            child.expect("Not written.")
            child.expect(PROMPT)
            assert exit_repl(child) == 0
        finally:
            child.close(force=True)


def test_notifications_are_off_with_ui_notify_false(home: Path, project: Path) -> None:
    _user_config(home, "[ui]\nnotify = false\nnotify_after = 0.2\n")
    with ScriptedModelServer([turns.text("Slow answer.", delay=0.6)]) as server:
        child = spawn_agentica(home, project, model_args(server))
        try:
            child.expect(PROMPT)
            child.send("slow\r")
            child.expect("Slow answer.")
            child.expect(PROMPT)
            assert "\x1b]9;" not in child.before and "\x07" not in child.before
            assert exit_repl(child) == 0
        finally:
            child.close(force=True)


# -- large pastes --------------------------------------------------------------------------------


def test_a_large_paste_shows_as_a_placeholder_and_is_sent_whole(
    home: Path, project: Path, screens: list[Screen]
) -> None:
    pasted = "\n".join(f"pasted line {i}" for i in range(1, 201))
    with ScriptedModelServer([turns.text("Read all 200."), turns.text("Small one.")]) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("summarise: ")
        screen.send("\x1b[200~" + pasted.replace("\n", "\r") + "\x1b[201~")
        screen.send(" thanks")
        text = screen.wait_text("[Pasted text #1 +200 lines] thanks")
        assert "pasted line 150" not in text
        screen.send("\r")
        text = screen.wait_text("Read all 200.")
        assert "pasted line" not in text  # the sent message is not echoed line by line either
        assert server.requests[0]["messages"][-1]["content"] == f"summarise: {pasted} thanks"
        screen.send("\x1b[200~two\rlines\x1b[201~")  # a small paste stays as it is
        screen.wait_text("lines")
        screen.send("\r")
        screen.wait_text("Small one.")
        assert server.requests[1]["messages"][-1]["content"] == "two\nlines"
    history = (home / "history").read_text()
    assert "+pasted line 200" in history and "[Pasted text" not in history  # recalled later: the text itself


# -- resume --------------------------------------------------------------------------------------


def _saved_session(home: Path, project: Path) -> str:
    from agentica_cli.app.sessions import SessionStore

    long_answer = "\n".join(f"answer line {i}" for i in range(1, 41))
    store = SessionStore(home / "sessions")
    session = store.create(project.resolve(), "scripted-model")
    messages = [
        {"role": "user", "content": "old question"},
        {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "read the notes"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "r1", "type": "function", "function": {"name": "read_file",
                                                          "arguments": '{"file_path": "notes.txt"}'}},
            {"id": "x1", "type": "function", "function": {"name": "execute",
                                                          "arguments": '{"command": "echo \\u001b[2Jhidden"}'}},
        ]},
        {"role": "tool", "tool_call_id": "r1", "content": "     1\thello\n     2\tworld\n"},
        {"role": "tool", "tool_call_id": "x1", "content": "Error: the command failed"},
        {"role": "assistant", "content": long_answer + "\n\x1b]0;evil title\x07done"},
    ]
    for message in messages:
        session.append(message)
    session.close()
    return session.id


def test_continue_replays_the_conversation_compactly(home: Path, project: Path) -> None:
    _saved_session(home, project)
    with ScriptedModelServer([turns.text("Carrying on.")]) as server:
        child = spawn_agentica(home, project, [*model_args(server), "--continue"])
        try:
            child.expect(r"Resumed session .* \(7 messages\)\.")
            child.expect(PROMPT)
            shown = child.before
            assert shown.index("you: old question") < shown.index("agent: old answer") < shown.index(
                "you: read the notes") < shown.index("● read_file notes.txt") < shown.index("● execute echo")
            assert "  ⎿ " in shown and "Error: the command failed" in shown  # one line per result
            assert "agent: … 21 earlier lines" in shown  # a long answer: its last 20 lines
            assert "answer line 40" in shown and "answer line 22" in shown and "answer line 21\r" not in shown
            assert "␛[2Jhidden" in shown and "␛]0;evil title␇done" in shown  # shown, not obeyed
            assert "\x1b[2J" not in shown and "\x1b]0;" not in shown
            child.send("go on\r")
            child.expect("Carrying on.")
            child.expect(PROMPT)
            assert len(server.requests[0]["messages"]) == 9  # system, the 7 resumed, the new prompt
            assert exit_repl(child) == 0
        finally:
            child.close(force=True)


def test_resume_command_replays_the_chosen_session(home: Path, project: Path) -> None:
    session_id = _saved_session(home, project)
    with ScriptedModelServer([]) as server:
        child = spawn_agentica(home, project, model_args(server))
        try:
            child.expect(PROMPT)
            child.send(f"/resume {session_id}\r")
            child.expect(rf"Resumed {session_id} \(7 messages\)\.")
            child.expect("● read_file notes.txt")
            child.expect("answer line 40")
            child.expect(PROMPT)
            assert exit_repl(child) == 0
        finally:
            child.close(force=True)


# -- compaction ----------------------------------------------------------------------------------


@pytest.mark.parametrize("summary", [turns.text(""), turns.tool_calls(turns.call("read_file", {"file_path": "x"}))])
def test_compact_with_an_unusable_summary_keeps_the_conversation(home: Path, project: Path, summary: dict) -> None:
    script = [turns.text(f"Answer {i}.") for i in range(1, 4)] + [summary, turns.text("Answer 4.")]
    with ScriptedModelServer(script) as server:
        child = spawn_agentica(home, project, model_args(server))
        try:
            for i in range(1, 4):
                child.expect(PROMPT)
                child.send(f"question {i}\r")
                child.expect(f"Answer {i}.")
            child.expect(PROMPT)
            child.send("/compact\r")
            expected = ("the model's summary was empty" if summary["type"] == "text"
                        else r"the model called a tool \(read_file\) instead of writing a summary")
            said = rf"Could not compact: {expected}\. The conversation is unchanged \(6 messages\)\."
            child.expect(said.replace(" ", r"\s+"))  # wrapped between words at the terminal's width
            child.expect(PROMPT)
            assert "Compacted" not in child.before
            child.send("question 4\r")
            child.expect("Answer 4.")
            child.expect(PROMPT)
            assert exit_repl(child) == 0
        finally:
            child.close(force=True)
        assert "tools" not in server.requests[3]  # the summary request offers none
        sent = [m["content"] for m in server.requests[4]["messages"] if m["role"] != "system"]
        assert sent == ["question 1", "Answer 1.", "question 2", "Answer 2.", "question 3", "Answer 3.", "question 4"]


def test_a_slow_statusline_command_never_holds_up_the_input(
    home: Path, project: Path, screens: list[Screen], tmp_path: Path
) -> None:
    _user_config(home, '[ui]\nstatusline = "sleep 30; echo never"\n')
    with ScriptedModelServer([]) as server:
        screen = spawn_screen(home, project, server, columns=80, lines=24)
        screens.append(screen)
        screen.send("typed while it runs")
        text = screen.wait_text(f"{PROMPT} typed while it runs")
        assert "no answer" not in text  # echoed while the command still runs, not after it was given up
        text = screen.wait_text("statusline: no answer within 2s")
        assert "never" not in text


# -- the parts, without a terminal ---------------------------------------------------------------


def test_shift_tab_cycles_three_modes_and_auto_only_when_the_session_started_in_it() -> None:
    from agentica_cli.tui.status_line import next_mode

    assert [next_mode(m) for m in ("default", "accept-edits", "plan", "auto")] == [
        "accept-edits", "plan", "default", "default"]
    assert next_mode("plan", with_auto=True) == "auto" and next_mode("auto", with_auto=True) == "default"


def test_pastes_collapse_past_10_lines_or_1000_characters_and_expand_back() -> None:
    from agentica_cli.tui.prompt_input import PastedTexts

    pastes = PastedTexts()
    ten = "\n".join(["x"] * 10)
    assert pastes.collapse(ten) == ten and pastes.collapse("y" * 1000) == "y" * 1000
    eleven = "\n".join(["x"] * 11)
    assert pastes.collapse(eleven) == "[Pasted text #1 +11 lines]"
    assert pastes.collapse("z" * 1001) == "[Pasted text #2 +1 line]"
    sent = pastes.expand("a [Pasted text #2 +1 line] b [Pasted text #1 +11 lines] [Pasted text #7 +3 lines]")
    assert sent == f"a {'z' * 1001} b {eleven} [Pasted text #7 +3 lines]"  # an unknown one stays as typed


def test_a_notification_cannot_end_its_escape_sequence_early(tmp_path: Path) -> None:
    import os
    import pty

    from agentica_cli.tui.notify import notification, notify

    assert notification("ok") == "\x07\x1b]9;agentica: ok\x07"
    assert notification("tool \x07\x1b]9;fake\x1b\\") == "\x07\x1b]9;agentica: tool ␇␛]9;fake␛\\\x07"
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        assert notify("hello", None, terminal) is True
        assert os.read(master, 100) == b"\x07\x1b]9;agentica: hello\x07"

        from agentica_cli.app.settings.config import Settings, UiSettings

        assert notify("hello", Settings(ui=UiSettings(notify=False)), terminal) is False  # [ui] notify = false
    os.close(master)
    with open(tmp_path / "not-a-terminal", "w") as file:
        assert notify("hello", None, file) is False
    assert (tmp_path / "not-a-terminal").read_text() == ""
