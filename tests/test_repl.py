"""The interactive REPL through a pseudo-terminal (pexpect), against the scripted model server."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pexpect
import pytest
from cli_support import model_args, tool_results
from screen_support import PROMPT, flat, spawn_agentica

from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello\nworld\n")
    return path


def test_starts_and_streams_an_answer(start_repl, project: Path) -> None:
    answer = "First paragraph of the answer.\n\nSecond paragraph, streamed slowly.\n\nThe end."
    server = ScriptedModelServer([turns.text(answer, chunk_delay=0.15)])
    with server:
        repl = start_repl(server)
        repl.send_line("hello there")
        repl.expect("First paragraph of the answer.")
        # on screen while the server is still sending the rest: it streams
        assert server.request_log[0].finished_at == 0.0
        repl.expect("The end.")
        repl.expect_prompt()
        assert server.requests[0]["messages"][-1] == {"role": "user", "content": "hello there"}
        assert repl.exit() == 0


def test_tool_call_is_rendered_with_a_result_summary(start_repl) -> None:
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.text("It says hello world."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server)
        repl.send_line("read the notes")
        repl.expect(r"read_file notes\.txt")
        repl.expect(r"lines read")
        repl.expect("It says hello world.")
        repl.expect_prompt()
        assert repl.exit() == 0


def _edit_script(reply: str) -> list:
    return [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.tool_calls(
            turns.call("edit_file", {"file_path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}, id="e1")
        ),
        turns.text(reply),
    ]


def test_edit_asks_and_yes_applies_it(start_repl, project: Path) -> None:
    with ScriptedModelServer(_edit_script("Edited.")) as server:
        repl = start_repl(server)
        repl.send_line("change hello to goodbye")
        screen = repl.expect(r"Allow\?")
        assert "edit_file" in screen and "wants to run" in screen
        assert re.search(r"-hello", screen) and re.search(r"\+goodbye", screen)  # the diff is shown
        assert (project / "notes.txt").read_text() == "hello\nworld\n"  # nothing before the answer
        repl.child.send("y")  # one key, no Enter
        repl.expect("Edited.")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "goodbye\nworld\n"
        assert "declined" not in tool_results(server.requests[2])["e1"]
        assert repl.exit() == 0


def test_edit_asks_and_no_leaves_the_file_untouched(start_repl, project: Path) -> None:
    with ScriptedModelServer(_edit_script("Left it alone.")) as server:
        repl = start_repl(server)
        repl.send_line("change hello to goodbye")
        repl.expect(r"Allow\?")
        repl.child.send("e")  # no, and say what to do instead
        repl.expect("What should it do instead")
        repl.send_line("no, keep hello please")
        repl.expect("Left it alone.")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "hello\nworld\n"
        told = tool_results(server.requests[2])["e1"]
        assert "The user declined to run 'edit_file'. They said: no, keep hello please" in told
        assert repl.exit() == 0


def test_ctrl_c_during_a_long_execute_returns_to_the_prompt(start_repl) -> None:
    script = [
        turns.tool_calls(turns.call("execute", {"command": "sleep 30"}, id="x1")),
        turns.text("Still here."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "--yes")
        repl.send_line("wait a while")
        repl.expect(r"execute sleep 30")
        time.sleep(0.5)  # the command is running
        started = time.monotonic()
        repl.child.sendcontrol("c")
        repl.expect(r"⎿ cancelled \(\d+\.\ds\)", timeout=10)  # the stopped tool leaves a line
        repl.expect(r"\(interrupted\)", timeout=10)
        repl.expect_prompt(timeout=10)
        assert time.monotonic() - started < 8
        repl.send_line("are you there?")  # the conversation is still usable
        repl.expect("Still here.")
        repl.expect_prompt()
        history = server.requests[1]["messages"]
        assert "x1" in tool_results(server.requests[1])  # the cancelled call still got a result
        assert history[-1] == {"role": "user", "content": "are you there?"}
        assert repl.exit() == 0


def test_slash_commands(start_repl, home: Path) -> None:
    with ScriptedModelServer([]) as server:
        repl = start_repl(server)
        repl.send_line("/help")
        screen = repl.expect(r"/exit")
        assert "/permissions" in screen and "/resume" in screen
        repl.expect_prompt()
        repl.send_line("/permissions plan")
        repl.expect("Permission mode: plan.")
        repl.expect_prompt()
        repl.send_line("/permisions")
        repl.expect(r"Unknown command /permisions\. Did you mean /permissions\?")
        repl.expect_prompt()
        repl.send_line("/cost")
        repl.expect(r"tokens this session: 0 in")
        repl.expect_prompt()
        repl.send_line("/exit")
        repl.child.expect(pexpect.EOF, timeout=15)
        repl.child.close()
        assert repl.child.exitstatus == 0
        assert server.requests == []


def test_session_is_saved_and_resumable(start_repl, home: Path) -> None:
    with ScriptedModelServer([turns.text("Noted.")]) as server:
        repl = start_repl(server)
        repl.send_line("remember 42")
        repl.expect("Noted.")
        repl.expect_prompt()
        assert repl.exit() == 0
    [saved] = list((home / "sessions").glob("*.jsonl"))
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [e["message"] for e in lines[1:] if e["type"] == "message"] == [  # (and each request's usage)
        {"role": "user", "content": "remember 42"},
        {"role": "assistant", "content": "Noted."},
    ]
    with ScriptedModelServer([turns.text("It was 42.")]) as server:
        repl = start_repl(server, "--continue")
        assert "you: remember 42" in repl.child.before and "agent: Noted." in repl.child.before
        repl.send_line("what number?")
        repl.expect("It was 42.")
        repl.expect_prompt()
        contents = [m.get("content") for m in server.requests[0]["messages"] if m["role"] != "system"]
        assert contents == ["remember 42", "Noted.", "what number?"]
        assert repl.exit() == 0


def test_untrusted_project_config_asks_before_use(home: Path, project: Path) -> None:
    (project / ".agentica").mkdir()
    (project / ".agentica" / "config.toml").write_text('[permissions]\nmode = "auto"\n')
    with ScriptedModelServer([]) as server:
        child = spawn_agentica(home, project, model_args(server))
        try:
            child.expect(r"sets\s+permissions\.mode\.")  # the line wraps between words where the path ends
            child.expect(r"Trust this project\? \[y/N\] ")
            child.send("n\r")
            child.expect("Not trusted")
            child.expect(r"mode default")
            child.expect(PROMPT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        child = spawn_agentica(home, project, model_args(server))
        try:
            child.expect(r"Trust this project\? \[y/N\] ")
            child.send("y\r")
            child.expect(r"mode auto")
            child.expect(PROMPT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        child = spawn_agentica(home, project, model_args(server))  # remembered: no question
        try:
            index = child.expect([r"Trust this project", r"mode auto"])
            assert index == 1
            child.expect(PROMPT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)


def test_shell_escape_mentions_and_multiline_input(start_repl, project: Path) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    with ScriptedModelServer([turns.text("Got it.")]) as server:
        repl = start_repl(server)
        repl.send_line("!echo shell-$((40 + 2))")
        repl.expect("shell-42")
        repl.expect(r"exit code 0; the output goes with your next message")
        repl.expect_prompt()
        repl.send_line("first line\\")  # a trailing backslash continues the message
        repl.send_line("look at @calc.py")
        repl.expect(r"attached calc\.py")
        repl.expect("Got it.")
        repl.expect_prompt()
        message = server.requests[0]["messages"][-1]["content"]
        assert message.startswith("I ran `echo shell-$((40 + 2))` in the shell (exit code 0). Output:\n")
        assert "shell-42" in message
        assert "first line\nlook at @calc.py" in message
        assert "Plan mode" not in server.requests[0]["messages"][0]["content"]
        assert '<file path="calc.py">\ndef add(a, b):\n    return a + b\n\n</file>' in message
        assert repl.exit() == 0


def test_ctrl_c_twice_at_an_empty_prompt_exits(start_repl) -> None:
    with ScriptedModelServer([]) as server:
        repl = start_repl(server)
        repl.child.sendcontrol("c")
        repl.expect(r"press Ctrl-C again or Ctrl-D to exit")
        repl.child.sendcontrol("c")
        repl.child.expect(pexpect.EOF, timeout=10)
        repl.child.close()
        assert repl.child.exitstatus == 0


def test_tab_completes_slash_commands_and_paths(start_repl, project: Path) -> None:
    (project / "calculator.py").write_text("x = 1\n")
    with ScriptedModelServer([turns.text("Seen."), turns.text("Back to normal.")]) as server:
        repl = start_repl(server)
        # Completion runs in the background: the next keys wait until its text is on screen
        # (typed at once, Enter could come before the completion is inserted).
        repl.child.send("/permi")
        repl.expect("mode, rules and grants")  # the menu, open as the command is typed
        repl.child.send("\t")
        repl.expect("ssions")
        repl.child.send(" plan\r")
        repl.expect("Permission mode: plan.")
        repl.expect_prompt()
        repl.child.send("check @calcu")
        repl.expect(r"calculator\.py")  # the menu
        repl.child.send("\t")
        repl.expect(r"lator\.py")
        repl.child.send("\r")
        repl.expect(r"attached calculator\.py")
        repl.expect("Seen.")
        repl.expect("Proceed?")  # a plan-mode turn that answered: leave plan mode? (issue 28)
        repl.child.send("n")
        repl.expect_prompt()
        assert server.requests[0]["messages"][-1]["content"].startswith("check @calculator.py\n\n<file")
        assert "Plan mode is on" in server.requests[0]["messages"][0]["content"]  # /permissions plan reached the model
        repl.send_line("/permissions default")
        repl.expect("Permission mode: default.")
        repl.expect_prompt()
        repl.send_line("go on")
        repl.expect("Back to normal.")
        repl.expect_prompt()
        assert "Plan mode" not in server.requests[1]["messages"][0]["content"]
        assert repl.exit() == 0


def test_input_history_is_kept_across_sessions(start_repl, home: Path) -> None:
    with ScriptedModelServer([]) as server:
        repl = start_repl(server)
        repl.send_line("/permissions accept-edits")
        repl.expect("Permission mode: accept-edits.")
        repl.expect_prompt()
        assert repl.exit() == 0
        repl = start_repl(server)
        repl.child.send("\x1b[A")  # Up: the previous session's line comes back
        repl.child.send("\r")
        repl.expect("Permission mode: accept-edits.")
        repl.expect_prompt()
        assert repl.exit() == 0
    assert "+/permissions accept-edits" in (home / "history").read_text()


def test_edit_without_asking_shows_its_diff_and_todos_are_shown(start_repl, project: Path) -> None:
    todos = [{"content": "rename greeting", "status": "in_progress"}, {"content": "run tests", "status": "pending"}]
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.tool_calls(
            turns.call("edit_file", {"file_path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}, id="e1")
        ),
        turns.tool_calls(turns.call("write_todos", {"todos": todos}, id="t1")),
        turns.text("All done."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "--yes")
        repl.send_line("edit")
        screen = repl.expect(r"\+goodbye")
        assert "Allow?" not in screen
        assert "-hello" in screen[screen.index("edit_file notes.txt") :]
        repl.expect(r"\[>\] rename greeting")
        repl.expect(r"\[ \] run tests")
        repl.expect("All done.")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "goodbye\nworld\n"
        repl.send_line("/todos")
        repl.expect(r"\[>\] rename greeting")
        repl.expect_prompt()
        assert repl.exit() == 0


def test_resume_command_lists_and_switches_sessions(start_repl, home: Path, project: Path) -> None:
    from cli_support import run_cli

    with ScriptedModelServer([turns.text("About apples."), turns.text("About pears.")]) as server:
        for prompt in ("tell me about apples", "tell me about pears"):
            done = run_cli(["-p", prompt, *model_args(server)], cwd=project, home=home)
            assert done.returncode == 0, done.stderr
    with ScriptedModelServer([turns.text("Still apples.")]) as server:
        repl = start_repl(server)
        repl.send_line("/resume")  # the picker (issue 28): its rows, newest first; Esc leaves it
        screen = repl.expect("tell me about apples")
        assert "tell me about pears" in screen  # drawn before the older one
        repl.child.send("\x1b")
        repl.expect_prompt()
        repl.send_line("/resume 2")
        repl.expect(r"Resumed \S+ \(2 messages\)\.")
        repl.expect_prompt()
        repl.send_line("and now?")
        repl.expect("Still apples.")
        repl.expect_prompt()
        contents = [m.get("content") for m in server.requests[0]["messages"] if m["role"] != "system"]
        assert contents == ["tell me about apples", "About apples.", "and now?"]
        assert repl.exit() == 0


def test_ctrl_c_at_the_approval_question_cancels_the_turn(start_repl, project: Path) -> None:
    script = [*_edit_script("unused")[:2], turns.text("Fresh start.")]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server)
        repl.send_line("change hello to goodbye")
        repl.expect(r"Allow\?")
        repl.child.sendcontrol("c")
        repl.expect(r"\(interrupted\)")
        repl.expect_prompt()
        assert (project / "notes.txt").read_text() == "hello\nworld\n"
        repl.send_line("never mind")
        repl.expect("Fresh start.")
        repl.expect_prompt()
        assert "e1" in tool_results(server.requests[2])  # the interrupted call has its result
        assert repl.exit() == 0


def test_pasted_lines_stay_one_message(start_repl) -> None:
    with ScriptedModelServer([turns.text("One message.")]) as server:
        repl = start_repl(server)
        repl.child.send("\x1b[200~first pasted line\rsecond pasted line\x1b[201~")  # bracketed paste
        repl.child.send("\r")
        repl.expect("One message.")
        repl.expect_prompt()
        assert len(server.requests) == 1
        assert server.requests[0]["messages"][-1]["content"] == "first pasted line\nsecond pasted line"
        assert repl.exit() == 0


def test_compact_command_summarises_older_messages(start_repl, home: Path) -> None:
    script = [turns.text(f"Answer {i}.") for i in range(1, 4)] + [turns.text("Summary: three questions.")]
    script.append(turns.text("Answer 4."))
    with ScriptedModelServer(script) as server:
        repl = start_repl(server)
        for i in range(1, 4):
            repl.send_line(f"question {i}")
            repl.expect(f"Answer {i}.")
            repl.expect_prompt()
        repl.send_line("/compact")
        repl.expect(r"Compacted: 6 messages -> \d+\.")
        repl.expect_prompt()
        repl.send_line("question 4")
        repl.expect("Answer 4.")
        repl.expect_prompt()
        sent = json.dumps(server.requests[-1]["messages"])
        assert "Summary: three questions." in sent
        assert "question 1" not in sent
        assert repl.exit() == 0
    # The saved session resumes from the compacted history, not the long one.
    from agentica_cli.app.sessions import SessionStore

    (saved,) = (home / "sessions").glob("*.jsonl")
    resumed = json.dumps(SessionStore.load_messages(saved))
    assert "Summary: three questions." in resumed and "question 1" not in resumed and "Answer 4." in resumed


def test_a_message_on_the_command_line_is_sent_first(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("Answered the first message.")]) as server:
        child = spawn_agentica(home, project, [*model_args(server), "summarise", "the notes"])
        try:
            child.expect("Answered the first message.")
            child.expect(PROMPT)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert child.exitstatus == 0
        assert server.requests[0]["messages"][-1] == {"role": "user", "content": "summarise the notes"}


def test_escape_enter_adds_a_newline(start_repl) -> None:
    with ScriptedModelServer([turns.text("Two lines received.")]) as server:
        repl = start_repl(server)
        repl.child.send("line one")
        repl.child.send("\x1b\r")  # Esc Enter (what Alt+Enter sends)
        repl.child.send("line two\r")
        repl.expect("Two lines received.")
        repl.expect_prompt()
        assert server.requests[0]["messages"][-1]["content"] == "line one\nline two"
        assert repl.exit() == 0


def test_always_answer_grants_a_command_prefix_and_the_question_shows_the_whole_command(
    start_repl, project: Path
) -> None:
    long_command = "sleep 1.2 && echo " + " ".join(f"word{i}" for i in range(40))
    script = [
        turns.tool_calls(turns.call("execute", {"command": long_command}, id="x1")),
        turns.tool_calls(turns.call("execute", {"command": "echo second"}, id="x2")),
        turns.tool_calls(turns.call("execute", {"command": "sleep 0.1; touch third.txt"}, id="x3")),
        turns.text("All ran."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server)
        repl.send_line("run them")
        screen = repl.expect(r"Allow\?")
        assert "execute" in screen and "wants to run" in screen
        assert "word39" in screen  # longer than the terminal: wrapped, never cut
        assert "timeout=120" in screen  # the other arguments are shown too
        # a compound command: "always" grants each part's rule (issue 28: every part could be granted)
        assert "[a] yes, and don't ask again for `sleep` commands and `echo` commands" in flat(screen)
        repl.child.send("y")
        screen = flat(repl.expect(r"Allow\?"))
        assert "[a] yes, and don't ask again for `echo` commands" in screen
        repl.child.send("a")
        repl.expect(r"allowed from now on: execute: `echo` commands")
        screen = repl.expect(r"Allow\?")  # `sleep ...; touch ...` is not covered by the `echo` grant
        assert "touch third.txt" in screen
        repl.child.send("y")
        repl.expect("All ran.")
        repl.expect_prompt()
        assert (project / "third.txt").exists()
        repl.send_line("/permissions")
        repl.expect(r"1\. execute: `echo` commands")
        repl.expect_prompt()
        repl.send_line("/permissions revoke 1")
        repl.expect(r"Revoked: execute: `echo` commands")
        repl.expect_prompt()
        assert repl.exit() == 0


def test_model_tools_and_clear_commands(start_repl) -> None:
    with ScriptedModelServer([turns.text("First answer."), turns.text("Fresh answer.")]) as server:
        repl = start_repl(server)
        repl.send_line("/tools")
        screen = repl.expect(r"write_file[^\n]*\[asks\]")
        assert re.search(r"read_file .*\[runs, read-only\]", screen)
        repl.expect_prompt()
        repl.send_line("/model")
        repl.expect(r"model: scripted-model \(provider openai\)")
        repl.expect(r"1\. +scripted")  # the endpoint's own list (GET /v1/models)
        repl.expect(r"Switch to \[1-1 or a name; Enter: keep scripted-model\]: ")
        repl.send_line("")  # Enter keeps the model
        repl.expect_prompt()
        repl.send_line("/model other-model")
        repl.expect("Switched to other-model.")
        repl.expect_prompt()
        repl.send_line("remember this")
        repl.expect("First answer.")
        repl.expect_prompt()
        repl.send_line("/clear")
        repl.expect("Started a new conversation.")
        repl.expect_prompt()
        repl.send_line("hello again")
        repl.expect("Fresh answer.")
        repl.expect_prompt()
        assert [r["model"] for r in server.requests] == ["other-model", "other-model"]
        history = [m for m in server.requests[1]["messages"] if m["role"] != "system"]
        assert history == [{"role": "user", "content": "hello again"}]
        assert repl.exit() == 0


def test_shell_escape_streams_its_output_and_ctrl_c_stops_it(start_repl) -> None:
    with ScriptedModelServer([]) as server:
        repl = start_repl(server)
        repl.send_line("!echo started-$((1 + 1)); sleep 30; echo never")
        repl.expect("started-2")  # on screen while the command still runs
        started = time.monotonic()
        repl.child.sendcontrol("c")
        repl.expect(r"\(interrupted; the output goes with your next message\)", timeout=10)
        repl.expect_prompt()
        assert time.monotonic() - started < 5
        assert "never" not in repl.child.before
        assert repl.exit() == 0


def test_ctrl_c_stops_a_shell_escape_that_ignores_sigint_and_sigterm(start_repl) -> None:
    """A shell may swallow the SIGINT (dash -c catches it between two commands; here the
    command ignores it, and SIGTERM too): what still runs is terminated, then killed."""
    with ScriptedModelServer([]) as server:
        repl = start_repl(server)
        repl.send_line("!trap '' INT TERM; echo stubborn-$((2 + 2)); sleep 60; echo never")
        repl.expect("stubborn-4")
        repl.child.sendcontrol("c")
        repl.expect(r"\(interrupted; the output goes with your next message\)", timeout=20)  # not after 60 s
        repl.expect_prompt()
        assert "never" not in repl.child.before
        assert repl.exit() == 0


def test_keys_typed_during_a_turn_are_not_echoed_but_wait_for_the_next_prompt(start_repl) -> None:
    answer = "Part one.\n\nPart two, " + "slowly " * 20 + "done."
    with ScriptedModelServer([turns.text(answer, chunk_delay=0.05), turns.text("Got the typed-ahead line.")]) as server:
        repl = start_repl(server)
        repl.send_line("go")
        repl.expect("Part one.")
        repl.child.send("typed ahead")  # while the answer still streams
        during = flat(repl.expect("done."))
        assert "› typed ahead▌ (sent when this turn ends" in during  # shown under the live area, not echoed
        repl.expect(r"❯ [^\n]*typed ahead")  # it is the next prompt's input
        repl.child.send("\r")
        repl.expect("Got the typed-ahead line.")
        repl.expect_prompt()
        assert server.requests[1]["messages"][-1] == {"role": "user", "content": "typed ahead"}
        assert repl.exit() == 0


def test_escape_interrupts_a_turn_and_a_line_typed_with_enter_is_sent_after_it(start_repl) -> None:
    slow = "Thinking out loud, " + "slowly " * 60 + "end."
    second = "Second reply, " + "slowly " * 40 + "done."
    script = [turns.text(slow, chunk_delay=0.1), turns.text(second, chunk_delay=0.05), turns.text("Queued reply.")]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server)
        repl.send_line("go")
        repl.expect("Thinking out loud")
        repl.child.send("\x1b")  # a lone Esc
        repl.expect(r"\(interrupted\)")
        repl.expect_prompt()
        assert len(server.requests) == 1
        repl.send_line("next")
        repl.expect("Second")
        repl.child.send("then this\r")  # typed with Enter while the turn runs: queued
        assert "1 message(s) queued" in flat(repl.expect("done."))
        repl.expect("Queued reply.")  # sent as soon as the turn ended
        repl.expect_prompt()
        assert server.requests[2]["messages"][-1] == {"role": "user", "content": "then this"}
        assert repl.exit() == 0
