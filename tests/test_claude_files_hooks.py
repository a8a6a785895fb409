"""Claude Code hooks as real projects write them (issue 26): events we do not fire never drop
the others, PostToolUseFailure / SubagentStart / PermissionRequest fire, entry keys `if` and
`async`; and a hooks project's settings.json guard blocks `rm -rf build` under --yes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from cli_support import cli_env, model_args, run_cli
from conftest import collect, scripted_model, tool_results
from extension_support import write

from agentica_cli.agent import Agent, Decision
from agentica_cli.app.extension_setup import _rule_matcher
from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.hook_config import HookSpec, load_hook_specs, specs_from_claude_json
from agentica_cli.extensions.hooks import CommandHooks
from agentica_cli.extensions.places import Places
from agentica_cli.testing import turns

RECORD = "{ cat; echo; } >> "  # + the log file: one JSON object a line
# The events of a real hooks project's .claude/settings.json (disler/claude-code-hooks-mastery
# configures 13 of these), and newer ones agentica does not fire.
PROJECT_EVENTS = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification", "Stop", "SubagentStop",
                  "SubagentStart", "UserPromptSubmit", "PreCompact", "SessionStart", "SessionEnd",
                  "PermissionRequest", "Setup", "WorktreeCreate"]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def hooks_settings(guard: str, log: Path) -> dict[str, Any]:
    """A settings.json shaped like the hooks project's: every event a command, PreToolUse the guard."""
    hooks: dict[str, Any] = {}
    for event in PROJECT_EVENTS:
        command = guard if event == "PreToolUse" else f"{RECORD}{log}"
        hooks[event] = [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]
    return {"permissions": {"allow": ["Bash(mkdir:*)", "Write"], "deny": []},
            "statusLine": {"type": "command", "command": "true", "padding": 0}, "hooks": hooks}


def test_events_we_do_not_fire_are_ignored_and_named_once_and_the_rest_load(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / ".claude/settings.json", json.dumps(hooks_settings("guard.sh", tmp_path / "log")))
    problems: list[str] = []
    specs = load_hook_specs(Places(project=project, user_home=tmp_path / "home", claude_home=None), problems)
    assert sorted({s.event for s in specs}) == sorted(e for e in PROJECT_EVENTS if e not in ("Setup", "WorktreeCreate"))
    assert [p for p in problems if "Setup" in p] == [
        f"{project / '.claude/settings.json'}: hooks.Setup: ignored: agentica does not fire Setup hooks "
        "(it fires SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, "
        "Notification, Stop, SubagentStart, SubagentStop, PreCompact, SessionEnd)"]
    assert len(problems) == 2 and "hooks.WorktreeCreate: ignored" in problems[1]


def test_one_broken_hook_entry_leaves_the_others_loaded() -> None:
    notices: list[str] = []
    specs = specs_from_claude_json({"hooks": {"PreToolUse": [{"hooks": [{"command": "a", "timeout": -1},
                                                                         {"command": "b"}]}],
                                              "Stop": [{"hooks": [{"command": "c"}]}]}}, "s.json", notices)
    assert [(s.event, s.command) for s in specs] == [("PreToolUse", "b"), ("Stop", "c")]
    assert notices == ["s.json: hooks.PreToolUse: 'timeout' must be a number of seconds > 0; that hook is left out"]


def test_post_tool_use_failure_fires_for_a_failed_call_and_post_tool_use_for_a_good_one(scripted,
                                                                                       tmp_path: Path) -> None:
    def boom(path: str) -> str:
        """Fails.

        Args:
            path: a path
        """
        raise FileNotFoundError(f"no such file: {path}")

    def fine(path: str) -> str:
        """Works.

        Args:
            path: a path
        """
        return f"read {path}"

    log = tmp_path / "events.jsonl"
    specs = [HookSpec(e, RECORD + str(log)) for e in ("PostToolUse", "PostToolUseFailure")]
    server = scripted(turns.tool_calls(turns.call("boom", {"path": "x"}, id="b1"), turns.call("fine", {"path": "y"},
                                                                                            id="f1")),
                      turns.text("done"))
    agent = Agent(scripted_model(server), tools=[boom, fine], hooks=[CommandHooks(specs, tmp_path)])
    asyncio.run(collect(agent, "go"))
    seen = sorted(records(log), key=lambda r: r["tool_use_id"])
    assert [(r["hook_event_name"], r["tool_use_id"]) for r in seen] == [("PostToolUseFailure", "b1"),
                                                                         ("PostToolUse", "f1")]
    assert "no such file: x" in seen[0]["error"] and seen[0]["is_interrupt"] is False
    assert "tool_response" not in seen[0] and seen[1]["tool_response"] == "read y"


def test_subagent_start_fires_before_the_sub_agent_and_its_context_reaches_it(scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    specs = [HookSpec("SubagentStart", f"{RECORD}{log}; echo '{{\"hookSpecificOutput\": "
                                       f"{{\"additionalContext\": \"use tabs\"}}}}'"),
             HookSpec("SubagentStop", RECORD + str(log))]
    server = scripted(turns.tool_calls(turns.call("task", {"description": "look", "prompt": "Look"}, id="t1")),
                      turns.text("sub answer"), turns.text("main answer"))
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, hooks=[CommandHooks(specs, tmp_path)],
                      exclude_tools=("web_search", "fetch_url"))
    asyncio.run(collect(agent, "go"))
    seen = records(log)
    assert [r["hook_event_name"] for r in seen] == ["SubagentStart", "SubagentStop"]
    assert seen[0]["agent_type"] == "general" and seen[0]["agent_id"] == "task:t1"
    sub_prompt = [m for m in server.requests[1]["messages"] if m["role"] == "user"][-1]["content"]
    assert "Look" in sub_prompt and "use tabs" in sub_prompt


def test_permission_request_fires_when_a_person_would_be_asked_and_can_answer(scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    deny = HookSpec("PermissionRequest", f"{RECORD}{log}; echo 'not on Fridays' >&2; exit 2", matcher="Write")
    allow = HookSpec("PermissionRequest", "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", "
                                          "\"decision\": {\"behavior\": \"allow\"}}}'", matcher="Bash")
    server = scripted(turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "x"}, id="w1"),
                                       turns.call("execute", {"command": "echo hi > b.txt"}, id="e1")),
                      turns.text("ok"))
    asked: list[str] = []
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, hooks=[CommandHooks([deny, allow], tmp_path)],
                      exclude_tools=("web_search", "fetch_url"),
                      approve=lambda call: asked.append(call.name) or Decision.allow())
    asyncio.run(collect(agent, "go"))
    results = tool_results(server.requests[1])
    assert asked == []  # both answered by the hooks: nobody was asked
    assert "not on Fridays" in results["w1"] and not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "hi\n"
    [record] = records(log)
    assert record["tool_name"] == "Write" and record["tool_input"] == {"file_path": "a.txt", "content": "x"}


def test_if_runs_a_hook_only_for_calls_its_rule_matches(scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    [spec] = specs_from_claude_json({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": RECORD + str(log), "if": "Bash(echo commit:*)"}]}]}}, "s.json", [])
    server = scripted(turns.tool_calls(turns.call("execute", {"command": "ls"}, id="e1"),
                                       turns.call("execute", {"command": "cd . && echo commit now"}, id="e2")),
                      turns.text("ok"))
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, exclude_tools=("web_search", "fetch_url"),
                      hooks=[CommandHooks([spec], tmp_path, rule_matches=_rule_matcher(tmp_path))])
    asyncio.run(collect(agent, "go"))
    assert [r["tool_use_id"] for r in records(log)] == ["e2"]


def test_an_async_hook_does_not_hold_the_call_and_async_rewake_is_named(scripted, tmp_path: Path) -> None:
    marker = tmp_path / "hook-finished"
    notices: list[str] = []
    specs = specs_from_claude_json({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": f"sleep 30; touch {marker}; exit 2", "async": True}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "true", "asyncRewake": True}]}]}}, "s.json", notices)
    assert [s.background for s in specs] == [True, True]
    assert notices == ["s.json: hooks.PostToolUse: 'asyncRewake' is run as 'async' here: the hook runs in the "
                       "background and its exit code 2 does not wake the agent"]
    (tmp_path / "b.txt").write_text("bee\n")
    server = scripted(turns.tool_calls(turns.call("read_file", {"file_path": "b.txt"}, id="r1")), turns.text("ok"))
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, hooks=[CommandHooks(specs[:1], tmp_path)],
                      exclude_tools=("web_search", "fetch_url"))
    asyncio.run(collect(agent, "go"))
    # the call ran (its exit 2 came too late to block it) and the run ended before the hook did
    assert "bee" in tool_results(server.requests[1])["r1"]
    assert not marker.exists()


GUARD = f"""#!{sys.executable}
import json, re, sys
data = json.load(sys.stdin)
command = data.get("tool_input", {{}}).get("command", "")
if data.get("tool_name") == "Bash" and re.search(r"\\brm\\s+-[a-z]*r[a-z]*f|\\brm\\s+-[a-z]*f[a-z]*r", command):
    print("BLOCKED: dangerous rm command", file=sys.stderr)
    sys.exit(2)
"""


def test_a_hooks_projects_guard_blocks_rm_rf_under_yes(home: Path, tmp_path: Path, scripted) -> None:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (project / "build/out.o").write_text("object")
    guard = write(project / ".claude/hooks/pre_tool_use.py", GUARD)
    guard.chmod(0o755)
    log = tmp_path / "events.jsonl"
    write(project / ".claude/settings.json",
          json.dumps(hooks_settings('"$CLAUDE_PROJECT_DIR"/.claude/hooks/pre_tool_use.py', log), indent=2))
    (home / "trusted_projects.json").write_text(json.dumps({"trusted": [str(project.resolve())]}))
    server = scripted(turns.tool_calls(turns.call("execute", {"command": "rm -rf build"}, id="e1")),
                      turns.text("cleaned"))
    user_home = tmp_path / "user"
    user_home.mkdir()
    proc = run_cli([*model_args(server), "--yes", "-p", "clean the build"], cwd=project, home=home,
                   env=cli_env(home, HOME=str(user_home)))
    assert proc.returncode == 0, proc.stderr
    assert (project / "build/out.o").exists()
    assert "BLOCKED: dangerous rm command" in tool_results(server.requests[1])["e1"]
    assert proc.stderr.count("hooks.Setup: ignored") == 1 and proc.stderr.count("hooks.WorktreeCreate: ignored") == 1
    fired = [r["hook_event_name"] for r in records(log)]
    assert "SessionStart" in fired and "UserPromptSubmit" in fired and "Stop" in fired
