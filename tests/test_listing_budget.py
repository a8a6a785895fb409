"""Hundreds of installed sub-agents and skills: their listings are held to a share of the
context window, what is left out is said, and a left-out one still works by name."""

from __future__ import annotations

import json
import random
from pathlib import Path

from cli_support import cli_env, model_args, run_cli, tool_results
from extension_support import write

from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.listing import DESCRIPTION_CHARS, fit_listing, listing_budget, matching_names

AGENTS, SKILLS = 409, 766  # the counts of two large public collections installed together
WORDS = ["review", "test", "deploy", "kubernetes", "python", "rust", "frontend", "backend", "database", "security",
         "audit", "performance", "docs", "api", "graphql", "terraform", "migration", "accessibility"]


def agent_description(rng: random.Random, name: str) -> str:
    """Shaped like the community agents' descriptions: a 'use when' line and <example> blocks."""
    topic = " ".join(rng.sample(WORDS, 3))
    example = ("<example>Context: the user asks for help with " + " ".join(rng.choices(WORDS, k=40))
               + f". assistant: I'll use the {name} agent.</example>")
    return f"Use this agent when you need {topic} expertise. " + example * 3


def install(project: Path) -> None:
    rng = random.Random(26)
    for n in range(AGENTS):
        name = f"agent-{n:03d}-{rng.choice(WORDS)}"
        write(project / f".claude/agents/{name}.md",
              f"---\nname: {name}\ndescription: \"{agent_description(rng, name)}\"\nmodel: sonnet\n---\n"
              f"You are {name} (PROMPT-OF-{name}).\n")
    for n in range(SKILLS):
        name = f"skill-{n:03d}-{rng.choice(WORDS)}"
        write(project / f".claude/skills/{name}/SKILL.md",
              f"---\nname: {name}\ndescription: {' '.join(rng.choices(WORDS, k=45))}\n---\nSteps of {name}.\n")


def test_the_first_request_stays_small_and_left_out_ones_work_by_name(home: Path, project: Path,
                                                                      tmp_path: Path) -> None:
    install(project)
    last_agent = sorted(p.stem for p in (project / ".claude/agents").iterdir())[-1]
    last_skill = sorted(p.name for p in (project / ".claude/skills").iterdir())[-1]
    script = [
        turns.tool_calls(turns.call("task", {"description": "check", "prompt": "Check it.", "agent": last_agent},
                                    id="t1"),
                         turns.call("skill", {"name": last_skill}, id="s1")),
        turns.text("sub-agent done"),
        turns.text("all done"),
    ]
    user_home = tmp_path / "user"
    user_home.mkdir()
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--trust", *model_args(server)], cwd=project, home=home,
                       env=cli_env(home, HOME=str(user_home)))
        first, sub, last = server.requests
    assert proc.returncode == 0, proc.stderr
    size = len(json.dumps(first).encode())
    assert size < 64 * 1024, size
    system = first["messages"][0]["content"]
    task = next(t for t in first["tools"] if t["function"]["name"] == "task")["function"]
    listing = task["parameters"]["properties"]["agent"]["description"]
    assert last_agent not in listing and "enum" not in task["parameters"]["properties"]["agent"]
    left_agents = int(listing.split(" more not listed here")[0].rsplit("- ", 1)[1])
    assert 0 < left_agents < AGENTS
    assert last_skill not in system and " more skills are not listed here" in system
    assert f"{left_agents} of {AGENTS} sub-agents are not listed to the model" in proc.stderr
    assert f"of {SKILLS} skills are not listed to the model" in proc.stderr
    assert all(len(line) <= DESCRIPTION_CHARS + 80 for line in listing.splitlines())  # each cut
    assert sub["messages"][0]["content"].startswith(f"You are {last_agent} (PROMPT-OF-{last_agent}).")
    results = tool_results(last)
    assert results["t1"] == "sub-agent done"
    assert f"Steps of {last_skill}." in results["s1"]


def test_an_unknown_name_answers_with_the_names_that_match() -> None:
    entries = [(f"skill-{n:03d}", "writes release notes" if n == 417 else "other work") for n in range(500)]
    assert matching_names("release notes", entries) == ["skill-417"]
    assert matching_names("skil-417", entries)[0] == "skill-417"  # a near miss first


def test_the_budget_is_a_share_of_the_window_within_bounds() -> None:
    assert listing_budget(128_000) == 10_240
    assert listing_budget(8_000) == 4_000 and listing_budget(2_000_000) == 16_000
    listing = fit_listing([("a", "x" * 1000), ("b", "short"), ("c", "")], budget=260)
    assert listing.lines == ["a: " + "x" * (DESCRIPTION_CHARS - 1) + "…"] and listing.left_out == ["b", "c"]
