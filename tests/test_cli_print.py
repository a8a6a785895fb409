"""End-to-end: the real `agentica -p` command in a subprocess against the scripted model server."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_support import AGENTICA, cli_env, last_user_message, model_args, run_cli, tool_results

from agentica_cli.testing import ScriptedModelServer, turns


def session_files(home: Path) -> list[Path]:
    folder = home / "sessions"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def test_text_format_prints_only_the_answer_and_progress_on_stderr(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="call_1")),
        turns.text("The notes say hello."),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "what do the notes say?", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The notes say hello.\n"
    assert "> read_file notes.txt" in proc.stderr
    assert "\x1b[" not in proc.stderr  # no colour when stderr is not a terminal
    assert len(requests) == 2
    assert requests[0]["model"] == "scripted-model"
    assert last_user_message(requests[0]) == "what do the notes say?"
    assert "hello from the notes" in tool_results(requests[1])["call_1"]


def test_json_format_is_one_object_with_result_session_usage_and_tool_calls(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(
            turns.call("read_file", {"file_path": "notes.txt"}, id="call_1"),
            usage={"prompt_tokens": 100, "completion_tokens": 7},
        ),
        turns.text("Done reading.", usage={"prompt_tokens": 130, "completion_tokens": 3}),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "read the notes", "--output-format", "json", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["type"] == "result"
    assert result["result"] == "Done reading."
    assert result["is_error"] is False
    assert result["exit_code"] == 0
    assert result["stop_reason"] == "completed"
    assert result["usage"] == {"input_tokens": 230, "output_tokens": 10, "total_tokens": 240}
    assert result["num_model_requests"] == 2
    assert [(c["id"], c["name"], c["args"]["file_path"], c["status"]) for c in result["tool_calls"]] == [
        ("call_1", "read_file", "notes.txt", "ok")
    ]
    files = session_files(home)
    assert [f.stem for f in files] == [result["session_id"]]


def test_stream_json_writes_every_event_as_a_line(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="call_1")),
        turns.text("All the notes, summarised in one sentence."),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--output-format", "stream-json", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "session"
    assert kinds[1] == "turn_started"
    assert kinds[-2:] == ["turn_finished", "result"]
    assert kinds.count("model_request_started") == 2
    started = next(e for e in events if e["type"] == "tool_call_started")
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert (started["call_id"], started["name"], started["args"]["file_path"]) == ("call_1", "read_file", "notes.txt")
    assert finished["status"] == "ok" and "hello from the notes" in finished["result"]
    assert kinds.index("tool_call_started") < kinds.index("tool_call_finished") < kinds.index("text_delta")
    text = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert text == "All the notes, summarised in one sentence."
    assert events[-1]["result"] == text
    assert events[0]["session_id"] == events[-1]["session_id"]


def test_piped_text_is_attached_to_the_prompt(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("It is a KeyError.")]) as server:
        proc = run_cli(
            ["-p", "explain this error", *model_args(server)],
            cwd=project,
            home=home,
            input="Traceback:\n  KeyError: 'x'\n",
        )
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It is a KeyError.\n"
    assert last_user_message(requests[0]) == "explain this error\n\n<stdin>\nTraceback:\n  KeyError: 'x'\n</stdin>"


def test_piped_text_is_the_prompt_when_none_is_given(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", *model_args(server)], cwd=project, home=home, input="summarise the notes\n")
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert last_user_message(requests[0]) == "summarise the notes"


def test_piped_stdin_without_p_runs_one_task(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("done")]) as server:
        proc = run_cli([*model_args(server)], cwd=project, home=home, input="the task\n")
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    assert last_user_message(requests[0]) == "the task"


def test_add_dir_lets_tools_use_another_folder(home: Path, project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "shared"
    extra.mkdir()
    target = extra / "from-agent.txt"
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": str(target), "content": "hi\n"}, id="w1")),
        turns.text("ok"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(
            ["-p", "write", "--permission-mode", "accept-edits", "--add-dir", str(extra), *model_args(server)],
            cwd=project,
            home=home,
        )
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == "hi\n"
    assert str(extra) in server.requests[0]["messages"][0]["content"]  # the model is told about it


def test_no_prompt_at_all_is_a_usage_error(home: Path, project: Path) -> None:
    proc = run_cli(["-p", "--api-key", "k"], cwd=project, home=home, input="")
    assert proc.returncode == 2
    assert "no prompt" in proc.stderr


def test_destructive_call_is_refused_without_a_terminal(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": "notes.txt", "content": "overwritten\n"}, id="w1")),
        turns.text("I would have overwritten notes.txt; re-run with --yes."),
    ]
    started = time.monotonic()
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "overwrite the notes", *model_args(server)], cwd=project, home=home, timeout=30)
        requests = server.requests
    assert time.monotonic() - started < 20  # refused at once, never waiting for an answer
    assert proc.returncode == 0, proc.stderr
    assert (project / "notes.txt").read_text() == "hello from the notes\n"
    told = tool_results(requests[1])["w1"]
    assert "'write_file' was not run" in told
    assert "needs the user's permission and this run cannot ask (agentica -p, permission mode 'default')" in told
    assert "agentica: refused 'write_file': -p runs never ask for permission; re-run with" in proc.stderr
    assert "--yes" in proc.stderr and "--permission-mode accept-edits" in proc.stderr
    assert proc.stdout == "I would have overwritten notes.txt; re-run with --yes.\n"


def test_yes_lets_destructive_calls_run(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": "out.txt", "content": "written\n"}, id="w1")),
        turns.text("Wrote out.txt."),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "write it", "--yes", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert (project / "out.txt").read_text() == "written\n"
    assert "not run" not in tool_results(requests[1])["w1"]
    assert "refused" not in proc.stderr


def test_plan_mode_refuses_and_asks_for_a_plan(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("write_file", {"file_path": "out.txt", "content": "x"}, id="w1")),
        turns.text("Plan: create out.txt."),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "do it", "--permission-mode", "plan", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert not (project / "out.txt").exists()
    assert "Plan mode is on" in tool_results(requests[1])["w1"]
    assert "plan mode is read-only" in proc.stderr
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and "Plan mode is on" in system["content"]  # told before it tries


def test_other_modes_do_not_mention_plan_mode(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", "--permission-mode", "accept-edits", *model_args(server)], cwd=project, home=home)
        system = server.requests[0]["messages"][0]
    assert proc.returncode == 0, proc.stderr
    assert system["role"] == "system" and "Plan mode" not in system["content"]


def test_accept_edits_runs_edits_in_the_work_dir_but_not_commands(home: Path, project: Path) -> None:
    # --sandbox off: unconfined commands still ask (test_sandbox_cli: sandboxed ones run)
    script = [
        turns.tool_calls(
            turns.call("write_file", {"file_path": "new.txt", "content": "made\n"}, id="w1"),
            turns.call("execute", {"command": "touch ran.txt"}, id="x1"),
        ),
        turns.text("Wrote new.txt; the command needs --yes."),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(
            ["-p", "go", "--permission-mode", "accept-edits", "--sandbox", "off", *model_args(server)],
            cwd=project, home=home,
        )
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert (project / "new.txt").read_text() == "made\n"
    assert not (project / "ran.txt").exists()
    results = tool_results(requests[1])
    assert "'execute' was not run" in results["x1"]
    assert "not run" not in results["w1"]
    hint = "agentica: refused 'execute': -p runs never ask for permission; re-run with --yes to allow it"
    assert hint in proc.stderr


def test_max_turns_limit_exits_3(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1"))]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "loop", "--max-turns", "1", *model_args(server)], cwd=project, home=home)
        assert len(server.requests) == 1
    assert proc.returncode == 3, proc.stderr
    assert "stopped at the max-turns limit" in proc.stderr


def test_config_hooks_block_a_call_and_see_results(home: Path, project: Path) -> None:
    (home / "config.toml").write_text(
        "[[hooks.before_tool_call]]\n"
        'command = "grep -q rm && { echo no deleting here; exit 1; } || exit 0"\n'
        'tools = ["execute"]\n'
        "[[hooks.after_tool_call]]\n"
        'command = "cat >> hook-log.jsonl; echo >> hook-log.jsonl"\n'
    )
    script = [
        turns.tool_calls(turns.call("execute", {"command": "rm notes.txt"}, id="x1")),
        turns.tool_calls(turns.call("execute", {"command": "echo fine"}, id="x2")),
        turns.text("Done."),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "clean up", "--yes", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert (project / "notes.txt").exists()
    assert "Blocked by the hook `grep -q rm" in tool_results(requests[1])["x1"]
    assert "no deleting here" in tool_results(requests[1])["x1"]
    assert "fine" in tool_results(requests[2])["x2"]
    logged = [json.loads(line) for line in (project / "hook-log.jsonl").read_text().splitlines()]
    assert [(e["event"], e["tool"], e["call_id"], e["args"]["command"]) for e in logged] == [
        ("after_tool_call", "execute", "x2", "echo fine")
    ]
    assert "fine" in logged[0]["result"]


def test_agents_md_files_go_into_the_system_prompt(home: Path, project: Path) -> None:
    (home / "AGENTS.md").write_text("Personal rule: answer in English.")
    (project / ".git").mkdir()
    (project / "AGENTS.md").write_text("Project rule: run pytest -q.")
    sub = project / "pkg"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("Package rule: keep functions small.")
    (home / "config.toml").write_text('instructions = "Config rule: be brief."\n')
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=sub, home=home)
        system = server.requests[0]["messages"][0]
    assert proc.returncode == 0, proc.stderr
    assert system["role"] == "system"
    text = system["content"]
    order = [text.index(rule) for rule in ("Config rule", "Personal rule", "Project rule", "Package rule")]
    assert order == sorted(order)


def test_config_precedence_user_project_env_flag(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[model]\nname = "user-model"\napi_key = "user-key"\n')
    (project / ".agentica").mkdir()
    (project / ".agentica" / "config.toml").write_text('[model]\nname = "project-model"\n')
    seen: list[tuple[str, str]] = []
    with ScriptedModelServer([turns.text("ok")] * 4) as server:
        base = ["-p", "hi", "--base-url", server.base_url]
        runs = [
            (base, {}),
            (base, {"AGENTICA_MODEL": "env-model"}),
            ([*base, "--model", "flag-model"], {"AGENTICA_MODEL": "env-model"}),
            ([*base, "--api-key", "flag-key"], {}),
        ]
        for args, extra in runs:
            proc = run_cli(args, cwd=project, home=home, env=cli_env(home, **extra))
            assert proc.returncode == 0, proc.stderr
        for record in server.request_log:
            seen.append((record.body["model"], record.headers["authorization"]))
    assert seen == [
        ("project-model", "Bearer user-key"),
        ("env-model", "Bearer user-key"),
        ("flag-model", "Bearer user-key"),
        ("project-model", "Bearer flag-key"),
    ]


def test_bad_config_names_key_and_file_and_exits_2(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[permissions]\nmode = "yolo"\n')
    proc = run_cli(["-p", "hi", "--api-key", "k"], cwd=project, home=home)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"agentica: config error: {home / 'config.toml'}: 'permissions.mode' must be one of")
    assert "Traceback" not in proc.stderr


def test_wrong_flag_exits_2_with_the_problem(home: Path, project: Path) -> None:
    proc = run_cli(["-p", "hi", "--output-format", "xml"], cwd=project, home=home)
    assert proc.returncode == 2
    assert "argument --output-format: invalid choice: 'xml'" in proc.stderr


def test_missing_key_explains_how_to_configure_one(home: Path, project: Path) -> None:
    proc = run_cli(["-p", "hi"], cwd=project, home=home)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("agentica: no API key configured for provider 'openai'.")
    assert "export OPENAI_API_KEY=..." in proc.stderr
    assert "api_key = " in proc.stderr and str(home / "config.toml") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_api_failure_exits_1(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.error(401, "bad key")]) as server:
        proc = run_cli(["-p", "hi", "--output-format", "json", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["is_error"] is True and result["exit_code"] == 1
    assert "bad key" in result["error"]


def _wait_for(condition, timeout: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_continue_after_the_process_was_killed_mid_run(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="call_1")),
        turns.text("never delivered", delay=30),  # the process is killed while waiting for this
        turns.text("You asked me to read the notes."),
    ]
    with ScriptedModelServer(script) as server:
        cmd = [*AGENTICA, "-p", "read the notes", *model_args(server)]
        proc = subprocess.Popen(cmd, cwd=project, env=cli_env(home), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            _wait_for(lambda: len(server.request_log) >= 2)
        finally:
            proc.kill()
            proc.communicate(timeout=10)
        [saved] = session_files(home)
        again = run_cli(["-p", "--continue", "what did I ask?", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert again.returncode == 0, again.stderr
    assert again.stdout == "You asked me to read the notes.\n"
    history = [m for m in requests[2]["messages"] if m["role"] != "system"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "user"]
    assert history[0]["content"] == "read the notes"
    assert history[1]["tool_calls"][0]["id"] == "call_1"
    assert "hello from the notes" in history[2]["content"]
    assert history[3]["content"] == "what did I ask?"
    assert session_files(home) == [saved]  # continued in the same file
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [entry["message"]["role"] for entry in lines[1:]] == ["user", "assistant", "tool", "user", "assistant"]


def test_resume_by_id_and_unknown_id(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("first"), turns.text("second")]) as server:
        first = run_cli(["-p", "one", "--output-format", "json", *model_args(server)], cwd=project, home=home)
        session_id = json.loads(first.stdout)["session_id"]
        second = run_cli(["-p", "two", "--resume", session_id, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert second.returncode == 0, second.stderr
    assert [m["content"] for m in requests[1]["messages"] if m["role"] in ("user", "assistant")] == [
        "one",
        "first",
        "two",
    ]
    missing = run_cli(["-p", "x", "--resume", "nope", "--api-key", "k"], cwd=project, home=home)
    assert missing.returncode == 2
    assert "no session 'nope'" in missing.stderr


def test_sigint_exits_130(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("slow", delay=30)]) as server:
        cmd = [*AGENTICA, "-p", "hi", "--output-format", "json", *model_args(server)]
        proc = subprocess.Popen(cmd, cwd=project, env=cli_env(home), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: len(server.request_log) >= 1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    result = json.loads(out)
    assert result["stop_reason"] == "cancelled" and result["exit_code"] == 130


def test_stream_json_marks_a_retried_request_so_its_partial_text_can_be_dropped(home: Path, project: Path) -> None:
    script = [turns.cut(turns.text("The first attempt is cut off here."), after=3), turns.text("The whole answer.")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--output-format", "stream-json", *model_args(server)], cwd=project, home=home)
        assert len(server.requests) == 2  # the cut request was sent again
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("model_request_started") == 1  # a retry is not a new step ...
    [retry] = [i for i, e in enumerate(events) if e["type"] == "notice" and e["kind"] == "retry"]  # ... but a notice
    before = "".join(e["text"] for e in events[:retry] if e["type"] == "text_delta")
    after = "".join(e["text"] for e in events[retry:] if e["type"] == "text_delta")
    assert before and "The first attempt is cut off here.".startswith(before)  # void: streamed, then cut
    assert after == "The whole answer." == events[-1]["result"]  # what a consumer keeps


BLOCKING_HOOK = """#!/bin/sh
# Claude Code's UserPromptSubmit contract: the prompt on stdin as JSON, exit 2 + stderr blocks it
if grep -q deploy; then echo "no deploys on a Friday" >&2; exit 2; fi
exit 0
"""


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_prompt_blocked_by_a_hook_exits_4_with_the_reason(home: Path, project: Path, output_format: str) -> None:
    hook = project.parent / "block-deploys.sh"
    hook.write_text(BLOCKING_HOOK)
    hook.chmod(0o755)
    (home / "settings.json").write_text(json.dumps(
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}))
    with ScriptedModelServer([turns.text("never asked")]) as server:
        proc = run_cli(["-p", "deploy the app", "--output-format", output_format, *model_args(server)],
                       cwd=project, home=home)
        assert server.requests == []  # the prompt never reached the model
    assert proc.returncode == 4, proc.stderr
    assert "blocked by a hook: no deploys on a Friday" in proc.stderr
    assert session_files(home) == []  # not sent, not kept: no session for --continue to pick up
    if output_format == "text":
        assert proc.stdout == ""
        return
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    result = lines[-1]
    assert result["type"] == "result"
    assert (result["stop_reason"], result["is_error"], result["exit_code"]) == ("blocked", True, 4)
    assert "no deploys on a Friday" in result["error"]
    if output_format == "stream-json":
        finished = [e for e in lines if e["type"] == "turn_finished"]
        assert [(e["stop_reason"], e["reason"]) for e in finished] == [("blocked", "no deploys on a Friday")]


def test_help_documents_every_exit_code(home: Path, project: Path) -> None:
    from agentica_cli.app import exitcodes

    proc = run_cli(["--help"], cwd=project, home=home)
    assert proc.returncode == 0
    documented = proc.stdout[proc.stdout.index("exit codes:") :]
    codes = {int(line.split()[0]) for line in documented.splitlines()[1:] if line.strip()}
    returned = {exitcodes.OK, exitcodes.MODEL_ERROR, exitcodes.USAGE_ERROR, exitcodes.INCOMPLETE,
                exitcodes.BLOCKED, exitcodes.INTERRUPTED, exitcodes.OUTPUT_CLOSED}  # each returned by a test here
    assert codes == returned == {0, 1, 2, 3, 4, 130, 141}
    reference = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    for code in codes:
        assert f"\n| {code} | " in reference


def test_untrusted_project_hooks_do_not_run_until_trusted(home: Path, project: Path) -> None:
    (project / ".agentica").mkdir()
    config = project / ".agentica" / "config.toml"
    config.write_text('[[hooks.before_tool_call]]\ncommand = "touch hook-ran"\n')
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")), turns.text("read")]
    with ScriptedModelServer(script * 2) as server:
        untrusted = run_cli(["-p", "read", *model_args(server)], cwd=project, home=home)
        assert untrusted.returncode == 0, untrusted.stderr
        assert not (project / "hook-ran").exists()
        assert f"agentica: ignoring 'hooks' from untrusted {config} (run with --trust to use it)" in untrusted.stderr
        trusted = run_cli(["-p", "read", "--trust", *model_args(server)], cwd=project, home=home)
    assert trusted.returncode == 0, trusted.stderr
    assert (project / "hook-ran").exists()
    assert "ignoring" not in trusted.stderr


def test_text_progress_names_the_tool_of_a_result_that_is_not_under_its_call(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(
            turns.call("read_file", {"file_path": "notes.txt"}, id="r1"),
            turns.call("grep", {"pattern": "hello"}, id="g1"),
        ),
        turns.text("ok"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "look", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[:2] == ["> read_file notes.txt", "> grep hello"]  # run together (both read-only)
    first, second = (line.split(" (")[0] for line in lines[2:4])
    # The calls run together, so either may finish first. A result right under its own
    # "> grep" line needs no name; every other one is named.
    if first.endswith("line read"):
        assert (first, second) == ("  read_file: 1 line read", "  grep: 1 line of matches")
    else:
        assert (first, second) == ("  1 line of matches", "  read_file: 1 line read")


def test_closed_stdout_stops_the_run_quietly_with_141(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("word " * 100, chunk_delay=0.01)]) as server:
        cmd = [*AGENTICA, "-p", "hi", "--output-format", "stream-json", *model_args(server)]
        proc = subprocess.Popen(cmd, cwd=project, env=cli_env(home), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and json.loads(proc.stdout.readline())["type"] == "session"
        proc.stdout.close()  # like `| head -1`
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 141, err
    assert err == ""  # no traceback, no error line: a closed pipe is the reader's choice
