"""Commands, agents, skills and .mcp.json as real repositories write them (issue 26): full YAML
front matter, names with spaces and dots, which file wins a name, Claude model names, Claude
Code's argument placeholders, `@folder/`, sub-folder commands by their short name, agents'
tool lists in other tools' names, unknown .mcp.json keys and `headersHelper`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from extension_support import write

from agentica_cli.app.extension_setup import dropped_agent_tools
from agentica_cli.app.settings.mcp_json import parse, read_project
from agentica_cli.extensions.agents import load_agents
from agentica_cli.extensions.commands import find, load_commands
from agentica_cli.extensions.frontmatter import read
from agentica_cli.extensions.model_names import ModelNames
from agentica_cli.extensions.places import Places
from agentica_cli.extensions.skills import load_skills
from agentica_cli.tools.mcp.servers import McpServerConfig
from agentica_cli.tui.prompt_input import attach_mentions


@pytest.fixture
def places(tmp_path: Path) -> Places:
    (tmp_path / "project").mkdir()
    return Places(project=tmp_path / "project", user_home=tmp_path / "home", claude_home=tmp_path / "claude")


def project(places: Places) -> Path:
    assert places.project is not None
    return places.project


# -- 2: front matter is YAML ---------------------------------------------------------------


def test_front_matter_is_full_yaml(places: Places) -> None:
    write(project(places) / ".claude/skills/pdf/SKILL.md",
          "---\nname: pdf\ndescription: Fill PDF forms and\n  merge documents when asked\nmetadata:\n"
          "  version: \"1.2\"\n  tags: [pdf, forms]\nallowed-tools:\n  [Read, Bash]\n---\nSteps")
    write(project(places) / ".claude/agents/guard.md",
          "---\nname: guard\ndescription: Guards\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
          "        - type: command\n          command: ./check.sh\n---\nGuard.")
    problems: list[str] = []
    skill = load_skills(places, problems)["pdf"]
    assert skill.description == "Fill PDF forms and merge documents when asked"
    assert read((skill.folder / "SKILL.md").read_text()).meta["metadata"] == {"version": "1.2",
                                                                            "tags": ["pdf", "forms"]}
    assert load_agents(places, problems)["guard"].description == "Guards"
    assert problems == []


def test_front_matter_that_is_not_yaml_loads_with_a_notice(places: Places) -> None:
    # `: ` inside a plain value is not YAML; Claude Code still loads such files
    write(project(places) / ".claude/agents/helper.md",
          "---\nname: helper\ndescription: Use this agent when: the user asks. Example: fix it\n---\nHelp.")
    write(project(places) / ".claude/commands/broken.md", "---\n- a list\n- not a map\n---\nDo it.")
    problems: list[str] = []
    agent = load_agents(places, problems)["helper"]
    assert agent.description == "Use this agent when: the user asks. Example: fix it"
    command = load_commands(places, problems)["broken"]
    assert command.body == "Do it." and command.description == "Do it."
    assert len(problems) == 2
    assert problems[0].startswith(f"{project(places) / '.claude/agents/helper.md'}: the front matter is not valid YAML")
    assert problems[0].endswith("read as plain 'key: value' lines")
    assert problems[1].startswith(f"{project(places) / '.claude/commands/broken.md'}: the front matter is not valid")
    assert problems[1].endswith("loaded with no metadata")


# -- 3 and 5: names --------------------------------------------------------------------------


def test_names_with_spaces_get_a_usable_name_and_dots_are_fine(places: Places) -> None:
    write(project(places) / ".claude/skills/agent-development/SKILL.md",
          "---\nname: Agent Development\ndescription: Write agents\n---\nHow.")
    write(project(places) / ".claude/skills/x/SKILL.md", "---\nname: Hook Writing\ndescription: Hooks\n---\nHow.")
    write(project(places) / ".claude/agents/dotnet.md",
          "---\nname: dotnet-framework-4.8-expert\ndescription: .NET 4.8\n---\nYou know .NET.")
    write(project(places) / ".claude/agents/reviewer.md", "---\nname: Code Reviewer\ndescription: Reviews\n---\nR.")
    problems: list[str] = []
    skills = load_skills(places, problems)
    assert sorted(skills) == ["agent-development", "x"]  # the folder's name where it is usable
    assert skills["agent-development"].display_name == "Agent Development"
    agents = load_agents(places, problems)
    assert sorted(agents) == ["code-reviewer", "dotnet-framework-4.8-expert"]
    assert agents["code-reviewer"].display_name == "Code Reviewer"
    assert problems == []


def test_two_files_with_the_same_name_say_which_wins(places: Places) -> None:
    first = write(project(places) / ".claude/agents/a.md", "---\nname: reviewer\ndescription: one\n---\nOne.")
    second = write(project(places) / ".claude/agents/b.md", "---\nname: reviewer\ndescription: two\n---\nTwo.")
    skill_one = write(project(places) / ".claude/skills/one/SKILL.md", "---\nname: pdf\ndescription: 1\n---\n1")
    skill_two = write(project(places) / ".agentica/skills/two/SKILL.md", "---\nname: pdf\ndescription: 2\n---\n2")
    problems: list[str] = []
    assert load_agents(places, problems)["reviewer"].description == "two"
    assert load_skills(places, problems)["pdf"].description == "2"
    assert problems == [f"{first}: the agent 'reviewer' is also defined by {second}, which wins",
                        f"{skill_one}: the skill 'pdf' is also defined by {skill_two}, which wins"]


# -- 6: Claude model names -----------------------------------------------------------------


def test_claude_model_names_mean_the_sessions_model_unless_mapped_or_served(places: Places) -> None:
    write(project(places) / ".claude/commands/c.md", "---\nmodel: claude-sonnet-4-0\n---\nC")
    write(project(places) / ".claude/commands/own.md", "---\nmodel: deepseek-reasoner\n---\nO")
    write(project(places) / ".claude/agents/a.md", "---\nname: a\nmodel: claude-opus-4-1\n---\nA")
    write(project(places) / ".claude/agents/b.md", "---\nname: b\nmodel: opus\n---\nB")
    commands, agents = load_commands(places), load_agents(places)
    assert (commands["c"].model, commands["own"].model) == (None, "deepseek-reasoner")
    assert (agents["a"].model, agents["b"].model) == (None, None)
    table = ModelNames(aliases={"opus": "glm-4.6", "claude-sonnet-4-0": "glm-4.5"}, session_model="glm-4.5-air")
    assert load_commands(places, models=table)["c"].model == "glm-4.5"
    assert load_agents(places, models=table)["b"].model == "glm-4.6"
    assert load_agents(places, models=table)["a"].model is None
    # a gateway that serves Claude: the session's model is one, so the ids are kept
    gateway = ModelNames(session_model="anthropic/claude-sonnet-4")
    assert load_agents(places, models=gateway)["a"].model == "claude-opus-4-1"
    assert ModelNames(served={"claude-opus-4-1"}).resolve("claude-opus-4-1") == "claude-opus-4-1"
    assert ModelNames().resolve("inherit") is None and ModelNames().resolve("haiku") is None


# -- 7, 9: arguments and sub-folders -------------------------------------------------------


def test_placeholders_without_a_value_stay_and_zero_based_forms_work(places: Places) -> None:
    # Anthropic's clean_gone.md: the `$1` is awk's, not an argument
    write(project(places) / ".claude/commands/clean_gone.md",
          "---\ndescription: Clean gone branches\n---\nRun git branch -v | grep '\\[gone\\]' | awk '{print $1}'")
    write(project(places) / ".claude/commands/migrate.md", "Migrate the $0 component from $1 to $ARGUMENTS[2].")
    write(project(places) / ".claude/commands/fix.md", "Fix issue #$1 (priority $2) in $ARGUMENTS[0].")
    commands = load_commands(places)
    assert commands["clean_gone"].expand("") == "Run git branch -v | grep '\\[gone\\]' | awk '{print $1}'"
    assert commands["migrate"].expand("SearchBar React Vue") == "Migrate the SearchBar component from React to Vue."
    assert commands["migrate"].expand("SearchBar") == "Migrate the SearchBar component from $1 to $ARGUMENTS[2]."
    # $ARGUMENTS[N] in the body: $N counts from 0 as in current Claude Code
    assert commands["fix"].expand("12 high") == "Fix issue #high (priority $2) in 12."


def test_a_command_in_a_sub_folder_answers_to_its_short_name_too(places: Places) -> None:
    write(project(places) / ".claude/commands/frontend/component.md", "Make a component.")
    write(project(places) / ".claude/commands/backend/api.md", "Make an API.")
    write(project(places) / ".claude/commands/api.md", "Top-level API.")
    write(project(places) / ".claude/commands/a/review.md", "Review A.")
    write(project(places) / ".claude/commands/b/review.md", "Review B.")
    commands = load_commands(places)
    assert find(commands, "frontend:component") is find(commands, "component") is commands["frontend:component"]
    assert commands["frontend:component"].help_line() == "Make a component.  (project:frontend)"
    assert find(commands, "api") is commands["api"]  # a command of that very name wins
    assert find(commands, "review") is None  # two of them: only by the full name
    assert find(commands, "a:review") is commands["a:review"]


# -- 8: @folder/ ---------------------------------------------------------------------------


def test_a_folder_mention_attaches_its_listing(tmp_path: Path) -> None:
    write(tmp_path / "src/app.py", "print(1)")
    write(tmp_path / "src/lib/util.py", "x = 1")
    (tmp_path / "src/__pycache__").mkdir()
    text, attached = attach_mentions("look at @src/ please", tmp_path)
    assert attached == ["src/"]
    assert text == 'look at @src/ please\n\n<directory path="src/">\napp.py\nlib/\n</directory>'


# -- 13: agents' tool lists ----------------------------------------------------------------


def test_agent_tools_map_equivalents_and_name_what_is_dropped(places: Places) -> None:
    path = write(project(places) / ".claude/agents/nb.md",
                 "---\nname: nb\ntools: Read, NotebookRead, KillBash, AskUserQuestion, codebase, editFiles, "
                 "mcp__gh__issue\n---\nN.")
    write(project(places) / ".claude/agents/none.md", "---\nname: none\ntools: [AskUserQuestion]\n---\nN.")
    agents = load_agents(places)
    assert agents["nb"].tools == ["read_file", "stop_background", "AskUserQuestion", "grep", "edit_file", "gh__issue"]
    have = {"read_file", "stop_background", "grep", "edit_file", "execute"}
    assert dropped_agent_tools(agents, have) == [
        f"{path}: the agent 'nb' lists tools agentica does not have (AskUserQuestion): dropped; it gets "
        "read_file, stop_background, grep, edit_file, gh__issue",
        f"{project(places) / '.claude/agents/none.md'}: the agent 'none' lists tools agentica does not have "
        "(AskUserQuestion): dropped; it gets no tools"]


# -- 4: .mcp.json --------------------------------------------------------------------------


def test_a_projects_mcp_json_ignores_unknown_keys_and_takes_dotted_names(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", json.dumps({"mcpServers": {
        "kb": {"command": "python3", "args": ["kb.py"], "description": "Knowledge base", "alwaysAllow": ["search"]},
        "docs.site": {"url": "https://docs.example/mcp", "disabledTools": ["x"]},
        "GSD-2 Code": {"url": "https://gitmcp.example/gsd"},
    }}))
    found = read_project(path)
    assert found.problems == []
    assert sorted(found.servers) == ["GSD-2 Code", "docs.site", "kb"]
    assert found.servers["kb"] == {"command": "python3", "args": ["kb.py"], "cwd": str(tmp_path.resolve())}
    assert found.notices == [
        f"{path}: server 'kb': ignored 'description', 'alwaysAllow' (not part of the format agentica reads: "
        "type, command, args, env, url, headers, headersHelper, cwd)",
        f"{path}: server 'docs.site': ignored 'disabledTools' (not part of the format agentica reads: "
        "type, command, args, env, url, headers, headersHelper, cwd)"]
    for name, table in found.servers.items():
        McpServerConfig.from_dict(name, table)
    # --mcp-config (the user's own command line) stays strict
    assert parse(path.read_text(), "--mcp-config x").problems[0].startswith(
        "--mcp-config x: server 'kb': unknown key 'description'")


def test_headers_helper_output_becomes_the_request_headers(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", json.dumps({"mcpServers": {"deals": {
        "type": "http", "url": "https://mcp.example/mcp", "headers": {"X-Static": "1"},
        "headersHelper": "printf '{\"Authorization\": \"Bearer %s\"}' \"$CLAUDE_CODE_MCP_SERVER_NAME\""}}}))
    table = read_project(path).servers["deals"]
    assert table["headers_helper"].startswith("printf")
    tool = McpServerConfig.from_dict("deals", table).build_tool(base_dir=tmp_path)
    assert dict(tool.target.headers) == {"X-Static": "1", "Authorization": "Bearer deals"}
    bad = McpServerConfig.from_dict("deals", {**table, "headers_helper": "echo not json"})
    with pytest.raises(ValueError, match="must print a JSON object of strings"):
        bad.build_tool(base_dir=tmp_path)
