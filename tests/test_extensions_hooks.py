"""Lifecycle command hooks with Claude Code's contract, against the scripted model server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import collect, scripted_model, tool_results

from agentica_cli.agent import Agent, Decision
from agentica_cli.agent.events import Notice, TurnFinished
from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.hook_config import HookSpec, load_hook_specs
from agentica_cli.extensions.hooks import CommandHooks
from agentica_cli.extensions.places import Places
from agentica_cli.testing import turns

RECORD = "{ cat; echo; } >> "  # + the log file: one JSON object a line


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def deep(server: Any, work: Path, specs: list[HookSpec], **kwargs: Any) -> DeepAgent:
    return DeepAgent(scripted_model(server), work_dir=work, hooks=[CommandHooks(specs, work)],
                     exclude_tools=("web_search", "fetch_url"), **kwargs)


def test_each_event_fires_once_with_the_documented_json(scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop",
              "PreCompact", "SessionEnd"]
    specs = [HookSpec(event, RECORD + str(log)) for event in events]
    server = scripted(
        turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "hi"}, id="w1")),
        turns.text("Done."),
        turns.text("Summary of the conversation."),  # the compaction request
    )
    asked: list[str] = []
    agent = deep(server, tmp_path, specs, approve=lambda call: asked.append(call.name) or Decision.allow())

    async def session() -> None:
        await collect(agent, "write a.txt")
        await agent.compact(keep_messages=1)
        await agent.end_session("prompt_input_exit")

    asyncio.run(session())
    seen = records(log)
    assert [r["hook_event_name"] for r in seen] == ["SessionStart", "UserPromptSubmit", "PreToolUse",
                                                    "Notification", "PostToolUse", "Stop", "PreCompact",
                                                    "SessionStart", "SessionEnd"]
    for record in seen:
        assert record["session_id"] == agent.session_id
        assert record["cwd"] == str(tmp_path.resolve())
        assert {"transcript_path", "permission_mode"} <= set(record)
    assert [r["source"] for r in seen if r["hook_event_name"] == "SessionStart"] == ["startup", "compact"]
    by = {r["hook_event_name"]: r for r in seen}
    assert by["UserPromptSubmit"]["prompt"] == "write a.txt"
    # Claude Code's tool names and argument names: a Claude hook script reads them unchanged
    assert by["PreToolUse"]["tool_name"] == "Write" and by["PreToolUse"]["agentica_tool_name"] == "write_file"
    assert by["PreToolUse"]["tool_input"] == {"file_path": "a.txt", "content": "hi"}
    assert by["PreToolUse"]["tool_use_id"] == "w1"
    assert "Wrote" in by["PostToolUse"]["tool_response"] or "a.txt" in by["PostToolUse"]["tool_response"]
    assert by["Notification"]["message"] == "agentica needs your permission to use write_file"
    assert by["Stop"]["stop_hook_active"] is False
    assert by["PreCompact"]["trigger"] == "manual"
    assert by["SessionEnd"]["reason"] == "prompt_input_exit"
    assert asked == ["write_file"]


def test_subagent_stop_fires_for_the_sub_agent(scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    specs = [HookSpec(e, RECORD + str(log)) for e in ("Stop", "SubagentStop")]
    server = scripted(turns.tool_calls(turns.call("task", {"description": "look", "prompt": "Look"}, id="t1")),
                      turns.text("sub answer"), turns.text("main answer"))
    asyncio.run(collect(deep(server, tmp_path, specs), "go"))
    assert [r["hook_event_name"] for r in records(log)] == ["SubagentStop", "Stop"]


def test_exit_2_blocks_a_call_and_the_model_reads_stderr(scripted, tmp_path: Path) -> None:
    spec = HookSpec("PreToolUse", "echo 'writes are frozen until Friday' >&2; exit 2", matcher="Write|Edit")
    server = scripted(
        turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "x"}, id="w1"),
                         turns.call("read_file", {"file_path": "b.txt"}, id="r1")),
        turns.text("ok"),
    )
    (tmp_path / "b.txt").write_text("bee\n")
    asyncio.run(collect(deep(server, tmp_path, [spec]), "go"))
    results = tool_results(server.requests[1])
    assert "writes are frozen until Friday" in results["w1"] and "not run" in results["w1"]
    assert not (tmp_path / "a.txt").exists()
    assert "bee" in results["r1"]  # the matcher left read_file alone


def test_a_claude_code_pretooluse_script_blocks_execute_unchanged(scripted, tmp_path: Path) -> None:
    """The validator from Claude Code's hook documentation, configured as in Claude Code."""
    hooks_dir = tmp_path / ".claude/hooks"
    hooks_dir.mkdir(parents=True)
    script = hooks_dir / "bash_validator.py"
    script.write_text(f"""#!{sys.executable}
import json, re, sys
data = json.load(sys.stdin)
if data.get("tool_name") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {{}}).get("command", "")
if re.search(r"\\brm\\s+-rf\\b", command):
    print("Dangerous command: rm -rf is not allowed", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
""")
    script.chmod(0o755)
    (tmp_path / ".claude/settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [{
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_validator.py'}],
    }]}}))
    (tmp_path / "keep").mkdir()
    problems: list[str] = []
    specs = load_hook_specs(Places(project=tmp_path, user_home=tmp_path / "home", claude_home=None), problems)
    assert problems == []
    server = scripted(
        turns.tool_calls(turns.call("execute", {"command": "rm -rf keep"}, id="x1")),
        turns.tool_calls(turns.call("execute", {"command": "echo fine"}, id="x2")),
        turns.text("ok"),
    )
    asyncio.run(collect(deep(server, tmp_path, specs), "clean up"))
    assert "Dangerous command: rm -rf is not allowed" in tool_results(server.requests[1])["x1"]
    assert (tmp_path / "keep").is_dir()
    assert "fine" in tool_results(server.requests[2])["x2"]


def pre_json(decision: str, **extra: Any) -> str:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                  "permissionDecisionReason": f"the hook says {decision}", **extra}}
    return f"echo '{json.dumps(out)}'"


def test_json_deny_ask_allow_and_updated_input(scripted, tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("bee\n")
    specs = [
        HookSpec("PreToolUse", pre_json("deny"), matcher="Write"),
        HookSpec("PreToolUse", pre_json("ask"), matcher="Read"),
        HookSpec("PreToolUse", pre_json("allow", updatedInput={"command": "echo rewritten"}), matcher="Bash"),
    ]
    server = scripted(
        turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "x"}, id="w1")),
        turns.tool_calls(turns.call("read_file", {"file_path": "b.txt"}, id="r1")),
        turns.tool_calls(turns.call("execute", {"command": "echo original"}, id="x1")),
        turns.text("ok"),
    )
    asked: list[str] = []

    def approve(call: Any) -> Decision:  # a person who says no to everything
        asked.append(call.name)
        return Decision.deny("the user said no")

    asyncio.run(collect(deep(server, tmp_path, specs, approve=approve), "go"))
    assert "the hook says deny" in tool_results(server.requests[1])["w1"] and not (tmp_path / "a.txt").exists()
    # read_file never asks, but the hook's "ask" does: and the user said no
    assert "the user said no" in tool_results(server.requests[2])["r1"]
    # "allow": execute ran without asking, with the arguments the hook wrote
    result = tool_results(server.requests[3])["x1"]
    assert "rewritten" in result and "original" not in result
    assert asked == ["read_file"]


def test_hook_ask_asks_the_user_even_in_auto_mode(tmp_path: Path) -> None:
    from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy

    questions: list[str] = []

    def ask(call: Any, verdict: Any) -> Answer:
        questions.append(verdict.note)
        return Answer("no")

    policy = PermissionPolicy("auto", tmp_path, ask=ask)

    class Call:
        name, args = "read_file", {"file_path": "x"}
        function = type("F", (), {"is_destructive": False, "is_read_only": True})()

    decision = asyncio.run(policy.confirm(Call(), "check this one"))
    assert not decision.allowed and questions == ["a hook asks: check this one"]


def test_prompt_hooks_add_context_or_block_and_stop_hook_keeps_it_working(scripted, tmp_path: Path) -> None:
    specs = [
        HookSpec("SessionStart", "echo 'The release is on Friday.'"),
        HookSpec("UserPromptSubmit",
                 "grep -q secret && { echo 'no secrets please' >&2; exit 2; }; echo 'Branch: main'"),
        HookSpec("Stop",
                 'grep -q \'"stop_hook_active": false\' && { echo "run the tests first" >&2; exit 2; }; exit 0'),
    ]
    server = scripted(turns.text("first"), turns.text("tests pass"))
    agent = deep(server, tmp_path, specs)
    events = asyncio.run(collect(agent, "hello"))
    first = server.requests[0]["messages"][-1]["content"]
    assert first == "hello\n\nThe release is on Friday.\n\nBranch: main"
    assert server.requests[1]["messages"][-1] == {"role": "user",
                                                  "content": "[A Stop hook asks you to continue: run the tests first]"}
    assert [e.content for e in events if isinstance(e, TurnFinished)] == ["tests pass"]
    blocked = asyncio.run(collect(agent, "my secret is 42"))
    assert [e.stop_reason for e in blocked if isinstance(e, TurnFinished)] == ["blocked"]
    assert any(isinstance(e, Notice) and "no secrets please" in e.message for e in blocked)
    assert len(server.requests) == 2  # the blocked prompt never reached the model
    assert all("secret" not in json.dumps(m) for m in agent.messages)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to see the hook's child is gone")
def test_a_hanging_hook_is_killed_at_its_timeout(scripted, tmp_path: Path) -> None:
    pid_file = tmp_path / "sleeper.pid"
    spec = HookSpec("PreToolUse", f"sleep 60 & echo $! > {pid_file}; wait", timeout=0.5)
    server = scripted(turns.tool_calls(turns.call("ls", {}, id="l1")), turns.text("ok"))
    started = time.monotonic()
    events = asyncio.run(collect(deep(server, tmp_path, [spec]), "go"))
    hook_span = time.monotonic() - started
    assert hook_span < 30  # far less than the hook's 60 s sleep
    assert any(isinstance(e, Notice) and "timed out after 0.5 s" in e.message for e in events)
    assert "l1" in tool_results(server.requests[1])  # a failed hook does not block the call
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the whole process group got SIGKILL
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the hook's child {pid} still runs")
    assert os.path.exists(pid_file)


def test_python_hooks_get_the_same_events(scripted, tmp_path: Path) -> None:
    from agentica_cli.agent import ToolHooks

    seen: list[tuple[str, str]] = []

    def on_event(event: str, payload: dict[str, Any]) -> Any:
        seen.append((event, payload.get("tool_name", "")))
        if event == "PreToolUse":
            return {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "python says no"}}
        return None

    def shout(text: str) -> str:
        """Shout.

        Args:
            text: what to shout
        """
        return text.upper()

    server = scripted(turns.tool_calls(turns.call("shout", {"text": "hi"}, id="s1")), turns.text("ok"))
    agent = Agent(scripted_model(server), tools=[shout], hooks=ToolHooks(on_event=on_event))
    asyncio.run(collect(agent, "go"))
    # the call was refused, so no PostToolUse (it fires after a call that ran)
    assert seen == [("SessionStart", ""), ("UserPromptSubmit", ""), ("PreToolUse", "shout"), ("Stop", "")]
    assert "python says no" in tool_results(server.requests[1])["s1"]


def test_a_hooks_allow_skips_the_question_but_not_plan_mode(scripted, tmp_path: Path) -> None:
    from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy

    questions: list[str] = []

    def ask(call: Any, verdict: Any) -> Answer:
        questions.append(call.name)
        return Answer("no")

    spec = HookSpec("PreToolUse", pre_json("allow"), matcher="Write")
    server = scripted(
        turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "x"}, id="w1")),
        turns.text("ok"),
        turns.tool_calls(turns.call("write_file", {"file_path": "b.txt", "content": "x"}, id="w2")),
        turns.text("ok"),
    )
    policy = PermissionPolicy("default", tmp_path, ask=ask)
    agent = deep(server, tmp_path, [spec], approve=policy)

    async def two_turns() -> None:
        await collect(agent, "write a")
        policy.set_mode("plan")
        await collect(agent, "write b")

    asyncio.run(two_turns())
    assert (tmp_path / "a.txt").exists() and questions == []  # allowed by the hook: no question
    assert not (tmp_path / "b.txt").exists()
    assert "Plan mode is on" in tool_results(server.requests[3])["w2"]


def test_continue_false_on_pretooluse_ends_the_run(scripted, tmp_path: Path) -> None:
    stop = json.dumps({"continue": False, "stopReason": "the build is broken; stop here"})
    server = scripted(turns.tool_calls(turns.call("ls", {}, id="l1")))
    events = asyncio.run(collect(deep(server, tmp_path, [HookSpec("PreToolUse", f"echo '{stop}'")]), "go"))
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert [(e.content, e.stop_reason) for e in finished] == [("Stopped by a hook: the build is broken; stop here",
                                                              "stopped_by_tool")]
    assert len(server.requests) == 1  # no further request after the stop
