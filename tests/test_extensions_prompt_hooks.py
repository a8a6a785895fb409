"""Claude Code's "prompt" hooks: the session's model (the scripted server here) decides."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import collect, scripted_model

from agentica_cli.agent.events import Notice, TurnFinished
from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.hook_config import HookConfigError, specs_from_claude_json, specs_from_toml
from agentica_cli.extensions.hooks import CommandHooks
from agentica_cli.testing import turns


def agent_with(server: Any, work: Path, settings: dict[str, Any]) -> DeepAgent:
    agent = DeepAgent(scripted_model(server), work_dir=work, exclude_tools=("web_search", "fetch_url"))
    agent.hooks.append(CommandHooks(specs_from_claude_json(settings, "settings.json"), work,
                                    model=lambda: agent.model))
    return agent


def test_a_stop_prompt_hook_keeps_the_agent_working_until_the_model_says_ok(scripted, tmp_path: Path) -> None:
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "prompt",
                                               "prompt": "Did the agent run the tests? Event: $ARGUMENTS"}]}]}}
    server = scripted(turns.text("first"), turns.text('{"ok": false, "reason": "run the tests"}'),
                      turns.text("tests pass"), turns.text('```json\n{"ok": true}\n```'))
    events = asyncio.run(collect(agent_with(server, tmp_path, settings), "fix it"))
    asked = server.requests[1]
    assert "tools" not in asked or not asked["tools"]
    assert asked["messages"][0]["role"] == "system" and '{"ok": true}' in asked["messages"][0]["content"]
    question = asked["messages"][1]["content"]
    assert question.startswith("Did the agent run the tests? Event: {")
    event = json.loads(question.split("Event: ", 1)[1])
    assert (event["hook_event_name"], event["stop_hook_active"]) == ("Stop", False)
    assert server.requests[2]["messages"][-1] == {"role": "user",
                                                  "content": "[A Stop hook asks you to continue: run the tests]"}
    again = json.loads(server.requests[3]["messages"][1]["content"].split("Event: ", 1)[1])
    assert again["stop_hook_active"] is True
    assert [e.content for e in events if isinstance(e, TurnFinished)] == ["tests pass"]


def test_a_pretooluse_prompt_hook_with_its_own_model_ends_the_turn(scripted, tmp_path: Path) -> None:
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "Is this command safe to run?", "model": "judge-model", "timeout": 20}]}]}}
    server = scripted(turns.tool_calls(turns.call("execute", {"command": "touch made"}, id="x1")),
                      turns.text('I think not. {"ok": false, "reason": "it writes files"}'))
    events = asyncio.run(collect(agent_with(server, tmp_path, settings), "go"))
    judge = server.requests[1]
    assert judge["model"] == "judge-model"  # the hook's model; the session's model otherwise
    sent = json.loads(judge["messages"][1]["content"].split("\n\n", 1)[1])  # no $ARGUMENTS: the JSON follows
    assert (sent["tool_name"], sent["tool_input"]["command"]) == ("Bash", "touch made")
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert [(e.content, e.stop_reason) for e in finished] == [("Stopped by a hook: it writes files", "stopped_by_tool")]
    assert not (tmp_path / "made").exists() and len(server.requests) == 2


def test_an_unusable_answer_is_a_warning_and_the_prompt_goes_on(scripted, tmp_path: Path) -> None:
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "prompt", "prompt": "Judge: $ARGUMENTS"}]}]}}
    server = scripted(turns.text("sure, looks fine"), turns.text("answer"))
    events = asyncio.run(collect(agent_with(server, tmp_path, settings), "hello"))
    assert any(isinstance(e, Notice) and "was not {\"ok\": ..., \"reason\": ...} JSON" in e.message for e in events)
    assert server.requests[1]["messages"][-1]["content"] == "hello"
    assert [e.content for e in events if isinstance(e, TurnFinished)] == ["answer"]


def test_prompt_hooks_are_read_from_json_and_toml_and_refused_where_nothing_is_decided(
        scripted, tmp_path: Path) -> None:
    spec, = specs_from_toml({"Stop": [{"type": "prompt", "prompt": "Done?", "model": "m"}]}, "config.toml")
    assert (spec.kind, spec.prompt, spec.model, spec.timeout) == ("prompt", "Done?", "m", 30.0)
    with pytest.raises(HookConfigError, match="nothing to decide"):
        specs_from_claude_json({"hooks": {"SessionStart": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}, "s")
    with pytest.raises(HookConfigError, match="needs a 'prompt' string"):
        specs_from_claude_json({"hooks": {"Stop": [{"hooks": [{"type": "prompt"}]}]}}, "s")
    kept = specs_from_claude_json({"hooks": {"Stop": [{"hooks": [{"type": "agent", "prompt": "x"}]}]}}, "s")
    assert [(s.kind, s.prompt, s.timeout) for s in kept] == [("agent", "x", 60.0)]  # agent hooks run too:
    server = scripted(turns.text('{"ok": false, "reason": "not yet"}'))  # (test_extensions_agent_hooks.py)
    outcome = asyncio.run(CommandHooks(kept, tmp_path, model=scripted_model(server)).hook_event("Stop", {}))
    assert outcome is not None and (outcome.block, outcome.reason) == (True, "not yet")
    assert server.requests[0]["messages"][0]["content"].startswith("You are a hook")
    assert "read_file" in [tool["function"]["name"] for tool in server.requests[0]["tools"]]
