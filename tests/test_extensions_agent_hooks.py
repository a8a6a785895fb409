"""Claude Code's "agent" hooks: a read-only sub-agent (the scripted server plays its turns) looks
at the project, then answers {"ok": ..., "reason": ...}."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import model_args, run_cli, tool_results
from conftest import collect, scripted_model
from test_cli_render import _render

from agentica_cli.agent import Decision
from agentica_cli.agent.events import Notice, ToolCallFinished, ToolCallStarted, TurnFinished
from agentica_cli.deep import DeepAgent
from agentica_cli.extensions import agent_hooks
from agentica_cli.extensions.hook_config import HookConfigError, specs_from_claude_json, specs_from_toml
from agentica_cli.extensions.hooks import CommandHooks
from agentica_cli.testing import ScriptedModelServer, turns

READ_ONLY = ["glob", "grep", "ls", "read_file"]


def agent_hook(event: str, prompt: str, matcher: str = "", **fields: Any) -> dict[str, Any]:
    return {"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "agent", "prompt": prompt, **fields}]}]}}


def agent_with(server: Any, work: Path, settings: dict[str, Any], **options: Any) -> DeepAgent:
    agent = DeepAgent(scripted_model(server), work_dir=work, exclude_tools=("web_search", "fetch_url"), **options)
    agent.hooks.append(CommandHooks(specs_from_claude_json(settings, "settings.json"), work,
                                    model=lambda: agent.model))
    return agent


def offered(request: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in request.get("tools") or ())


def warnings(events: list[Any]) -> str:
    return "\n".join(e.message for e in events if isinstance(e, Notice) and e.kind == "warning")


def test_a_stop_agent_hook_reads_the_project_and_keeps_the_agent_working(scripted, tmp_path: Path) -> None:
    (tmp_path / "NOTES.md").write_text("- [ ] update the changelog\n")
    settings = agent_hook("Stop", "Is every item of NOTES.md done? Event: $ARGUMENTS")
    server = scripted(turns.text("all done"),
                      turns.tool_calls(turns.call("read_file", {"file_path": "NOTES.md"}, id="h1")),
                      turns.text('Not yet. {"ok": false, "reason": "the changelog item is still open"}'),
                      turns.text("changelog updated"),
                      turns.text('{"ok": true}'))
    events = asyncio.run(collect(agent_with(server, tmp_path, settings), "finish the notes"))
    main, hook, hook_again, main_again, last = server.requests
    assert "write_file" in offered(main) and "execute" in offered(main)
    # The hook agent: its own system prompt, the read-only tools alone, the event's JSON.
    assert hook["messages"][0]["role"] == "system"
    assert hook["messages"][0]["content"].startswith("You are a hook in a coding agent's session")
    assert f"Working directory: {tmp_path.resolve()}" in hook["messages"][0]["content"]
    assert offered(hook) == READ_ONLY and offered(hook_again) == READ_ONLY
    question = hook["messages"][1]["content"]
    assert question.startswith("Is every item of NOTES.md done? Event: {")
    event = json.loads(question.split("Event: ", 1)[1])
    assert (event["hook_event_name"], event["stop_hook_active"]) == ("Stop", False)
    assert "- [ ] update the changelog" in tool_results(hook_again)["h1"]
    assert not any(m["role"] == "tool" for m in main_again["messages"])  # its reads stay its own
    assert main_again["messages"][-1] == {
        "role": "user", "content": "[A Stop hook asks you to continue: the changelog item is still open]"}
    assert json.loads(last["messages"][1]["content"].split("Event: ", 1)[1])["stop_hook_active"] is True
    assert [e.content for e in events if isinstance(e, TurnFinished) and not e.source] == ["changelog updated"]
    # The user sees its steps as a sub-agent's, after a line naming the hook.
    notice = next(e for e in events if isinstance(e, Notice) and "hook agent" in e.message)
    assert notice.message == ("Stop hook `agent: Is every item of NOTES.md done? Event: $ARGUMENTS`: "
                              "a hook agent is checking (ls, read_file, glob, grep)") and not notice.source
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.name, e.source) for e in started] == [("read_file", "hook:Stop")]
    assert events.index(notice) < events.index(started[0])
    screen = _render([e for e in events if isinstance(e, (Notice, ToolCallStarted, ToolCallFinished))])
    lines = screen.splitlines()
    at = lines.index("  │ ● read_file NOTES.md")  # (the REPL's screen; the note wraps at its width)
    assert " ".join(line.strip() for line in lines[:at]) == f"note: {notice.message}"
    assert lines[at + 1].startswith("  │   ⎿ 1 line read")


def test_a_pretooluse_agent_hook_refuses_the_call_and_stays_in_the_project(scripted, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside.txt").write_text("not yours")
    settings = agent_hook("PreToolUse", "May this command run?", matcher="Bash", model="judge-model")
    server = scripted(turns.tool_calls(turns.call("execute", {"command": "touch made"}, id="x1")),
                      turns.tool_calls(turns.call("read_file", {"file_path": "../outside.txt"}, id="h1"),
                                       turns.call("write_file", {"file_path": "hooked.txt", "content": "x"}, id="h2")),
                      turns.text('{"ok": false, "reason": "no new files today"}'))
    agent = agent_with(server, project, settings, approve=lambda call: Decision.allow())
    events = asyncio.run(collect(agent, "go"))
    judge, judged = server.requests[1:]
    assert judge["model"] == "judge-model" and judged["model"] == "judge-model"
    sent = json.loads(judge["messages"][1]["content"].split("\n\n", 1)[1])  # no $ARGUMENTS: the JSON follows
    assert (sent["tool_name"], sent["tool_input"]["command"]) == ("Bash", "touch made")
    results = tool_results(judged)
    assert "outside the allowed directories" in results["h1"] and "not yours" not in results["h1"]
    assert "unknown tool" in results["h2"].lower()  # never offered, refused if called anyway
    assert not (project / "hooked.txt").exists() and not (project / "made").exists()
    finished = [e for e in events if isinstance(e, TurnFinished) and not e.source]
    assert [(e.content, e.stop_reason) for e in finished] == [
        ("Stopped by a hook: no new files today", "stopped_by_tool")]
    assert {e.source for e in events if isinstance(e, ToolCallStarted) and e.name == "read_file"} == {
        "hook:PreToolUse:x1"}
    assert len(server.requests) == 3


def test_agent_hook_failures_are_warnings_and_the_session_goes_on(
        scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(answers: list[Any], **fields: Any) -> tuple[list[Any], Any]:
        settings = agent_hook("UserPromptSubmit", "Judge: $ARGUMENTS", **fields)
        server = scripted(*answers, turns.text("answer"))
        events = asyncio.run(collect(agent_with(server, tmp_path, settings), "hello"))
        assert [e.content for e in events if isinstance(e, TurnFinished) and not e.source] == ["answer"]
        assert server.requests[-1]["messages"][-1]["content"] == "hello"  # the prompt went on unchanged
        return events, server

    events, _ = run([turns.text("sure, looks fine")])
    assert "the hook agent's answer was not {\"ok\": ..., \"reason\": ...} JSON: 'sure, looks fine'" in warnings(events)
    events, _ = run([turns.hang(limit=10)], timeout=0.5)
    assert "UserPromptSubmit hook `agent: Judge: $ARGUMENTS` timed out after 0.5 s" in warnings(events)
    events, _ = run([turns.error(400, "no such model")])
    assert "UserPromptSubmit hook `agent: Judge: $ARGUMENTS` failed: " in warnings(events)
    assert "no such model" in warnings(events)
    monkeypatch.setattr(agent_hooks, "MAX_TURNS", 2)
    events, server = run([turns.tool_calls(turns.call("ls", {}, id="l1")),
                          turns.tool_calls(turns.call("ls", {}, id="l2"))])
    assert "gave no verdict within 2 model requests" in warnings(events)
    assert len(server.requests) == 3


def test_agent_hooks_are_read_from_json_and_toml(tmp_path: Path) -> None:
    spec, = specs_from_toml({"Stop": [{"type": "agent", "prompt": "Tested?", "model": "m"}]}, "config.toml")
    assert (spec.kind, spec.prompt, spec.model, spec.timeout) == ("agent", "Tested?", "m", 60.0)
    spec, = specs_from_claude_json(agent_hook("SubagentStop", "Done?", timeout=90), "s")
    assert (spec.kind, spec.timeout, spec.shown) == ("agent", 90.0, "SubagentStop hook `agent: Done?`")
    with pytest.raises(HookConfigError, match='an "agent" hook has nothing to decide'):
        specs_from_claude_json(agent_hook("SessionStart", "x"), "s")
    with pytest.raises(HookConfigError, match="needs a 'prompt' string"):
        specs_from_claude_json({"hooks": {"Stop": [{"hooks": [{"type": "agent"}]}]}}, "s")


def test_an_agent_hook_in_settings_json_runs_in_print_mode_under_the_permission_rules(
        home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "NOTES.md").write_text("- [ ] tests\n")
    (project / "secret.txt").write_text("hunter2")
    (home / "settings.json").write_text(json.dumps(agent_hook("Stop", "Are the NOTES done? $ARGUMENTS")))
    (home / "config.toml").write_text('[permissions]\ndeny = ["read_file(secret.txt)"]\n')
    script = [turns.text("done"),
              turns.tool_calls(turns.call("read_file", {"file_path": "secret.txt"}, id="s1"),
                               turns.call("read_file", {"file_path": "NOTES.md"}, id="n1")),
              turns.text('{"ok": false, "reason": "the tests item is open"}'),
              turns.text("tests written"),
              turns.text('{"ok": true}')]
    with ScriptedModelServer(script) as server:
        result = run_cli(["-p", "finish", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tests written"
    assert len(requests) == 5 and offered(requests[1]) == READ_ONLY
    results = tool_results(requests[2])
    assert "a permission rule denies it" in results["s1"] and "hunter2" not in results["s1"]
    assert "- [ ] tests" in results["n1"]
    assert requests[3]["messages"][-1]["content"] == "[A Stop hook asks you to continue: the tests item is open]"
    lines = result.stderr.splitlines()
    at = lines.index("note: Stop hook `agent: Are the NOTES done? $ARGUMENTS`: a hook agent is checking "
                     "(ls, read_file, glob, grep)")
    assert "    > read_file NOTES.md" in lines[at:]  # its steps, indented like a sub-agent's


def test_a_projects_agent_hooks_wait_for_trust(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(
        agent_hook("UserPromptSubmit", "Is the repository open for changes? $ARGUMENTS")))
    script = [turns.text("answered"), turns.text('{"ok": false, "reason": "the repository is frozen"}')]
    with ScriptedModelServer(script) as server:
        untrusted = run_cli(["-p", "go", *model_args(server)], cwd=project, home=home)
        assert untrusted.returncode == 0, untrusted.stderr
        assert "ignoring this untrusted project's hooks" in untrusted.stderr
        assert len(server.requests) == 1 and untrusted.stdout.strip() == "answered"  # no hook agent ran
        trusted = run_cli(["-p", "go", "--trust", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert trusted.returncode == 4, trusted.stderr  # blocked by the hook (docs/cli.md#exit-codes)
    assert "the repository is frozen" in trusted.stderr
    assert len(requests) == 2 and offered(requests[1]) == READ_ONLY
    assert requests[1]["messages"][0]["content"].startswith("You are a hook")
