"""Custom sub-agents through the task tool, and skills, against the scripted model server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from conftest import collect, scripted_model, tool_results

from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.agents import AgentSpec, load_agents
from agentica_cli.extensions.places import Places
from agentica_cli.extensions.skill_tool import SkillTool
from agentica_cli.extensions.skills import load_skills
from agentica_cli.testing import turns
from builtin_tools import BuiltinTaskTool


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or ()}


def with_agents(agent: DeepAgent, *specs: AgentSpec) -> DeepAgent:
    task = next(t for t in agent.tools if isinstance(t, BuiltinTaskTool))
    task.set_agents({s.name: s for s in specs})
    return agent


def test_an_agent_file_sets_the_sub_agents_tools_prompt_and_model(scripted, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    agents_dir = tmp_path / ".claude/agents"  # a Claude Code agent file, unchanged
    agents_dir.mkdir(parents=True)
    (agents_dir / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code without changing it\n"
        "tools: Read, Grep\nmodel: reviewer-model\n---\nYou are a strict reviewer.\n")
    reviewer = load_agents(Places(project=tmp_path, user_home=tmp_path / "home", claude_home=None))["reviewer"]
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "review", "prompt": "Review notes.txt",
                                             "agent": "reviewer"}, id="t1")),
        turns.tool_calls(turns.call("write_file", {"file_path": "notes.txt", "content": "changed"}, id="w1"),
                         turns.call("read_file", {"file_path": "notes.txt"}, id="r1")),
        turns.text("notes.txt says alpha"),
        turns.text("Reviewed."),
    )
    agent = with_agents(DeepAgent(scripted_model(server), work_dir=tmp_path), reviewer)
    asyncio.run(collect(agent, "review it"))

    parent_first, sub_first, sub_second, parent_last = server.requests
    task_schema = next(t for t in parent_first["tools"] if t["function"]["name"] == "task")["function"]
    assert task_schema["parameters"]["properties"]["agent"]["enum"] == ["general", "reviewer"]
    assert "Reviews code without changing it" in task_schema["parameters"]["properties"]["agent"]["description"]
    assert parent_first["model"] == "scripted-model"
    assert sub_first["model"] == sub_second["model"] == "reviewer-model"  # its own model
    assert sub_first["messages"][0]["content"].startswith("You are a strict reviewer.")
    assert tool_names(sub_first) == {"read_file", "grep"}
    refused = tool_results(sub_second)
    assert refused["w1"].startswith("Error: unknown tool 'write_file'")  # outside its list: refused
    assert (tmp_path / "notes.txt").read_text() == "alpha\n"
    assert "alpha" in refused["r1"]
    assert parent_last["model"] == "scripted-model"
    assert tool_results(parent_last)["t1"] == "notes.txt says alpha"


def test_an_unknown_agent_name_is_an_error_the_model_reads(scripted, tmp_path: Path) -> None:
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "x", "prompt": "x", "agent": "nobody"}, id="t1")),
        turns.text("ok"),
    )
    agent = with_agents(DeepAgent(scripted_model(server), work_dir=tmp_path), AgentSpec("scout", "Finds", "Find."))
    asyncio.run(collect(agent, "go"))
    assert tool_results(server.requests[1])["t1"] == \
        "Error: no sub-agent named 'nobody'. Choose one of: general, scout."


def test_two_task_calls_in_one_reply_run_at_the_same_time(scripted, tmp_path: Path) -> None:
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "a", "prompt": "job A"}, id="t1"),
                         turns.call("task", {"description": "b", "prompt": "job B"}, id="t2")),
        turns.text("one done", delay=0.5),  # each sub-agent's answer takes a while
        turns.text("other done", delay=0.5),
        turns.text("both done"),
    )
    asyncio.run(collect(DeepAgent(scripted_model(server), work_dir=tmp_path), "two jobs"))
    first, second = server.request_log[1], server.request_log[2]
    # the second sub-agent asked before the first one had its answer: they overlapped in time
    assert second.received_at < first.finished_at
    assert {server.requests[1]["messages"][-1]["content"], server.requests[2]["messages"][-1]["content"]} == \
        {"job A", "job B"}
    assert sorted(tool_results(server.requests[3]).values()) == ["one done", "other done"]


def test_only_a_skills_description_is_sent_until_it_is_loaded(scripted, tmp_path: Path) -> None:
    skill_dir = tmp_path / "skills/release-notes"
    (skill_dir / "scripts").mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write release notes from git log\n"
                                        "---\nRun scripts/collect.sh, then group by UNIQUE-BODY-MARKER.\n")
    (skill_dir / "scripts/collect.sh").write_text("git log --oneline\n")
    skills = load_skills(Places(project=None, user_home=tmp_path, claude_home=None))
    server = scripted(
        turns.tool_calls(turns.call("skill", {"name": "release-notes"}, id="s1")),
        turns.text("ok"),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, tools=[SkillTool(skills)])
    asyncio.run(collect(agent, "write release notes"))
    first = server.requests[0]
    system = first["messages"][0]["content"]
    assert "- release-notes: Write release notes from git log" in system
    assert "UNIQUE-BODY-MARKER" not in str(first)
    loaded = tool_results(server.requests[1])["s1"]
    assert "UNIQUE-BODY-MARKER" in loaded and "scripts/collect.sh" in loaded and str(skill_dir) in loaded
