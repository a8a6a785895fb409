"""Extension files: front matter, custom commands, agents, skills; where they are found and
which wins a name clash; a project's only once it is trusted (Places.project)."""

from __future__ import annotations

from pathlib import Path

import pytest
from extension_support import write

from agentica_cli.extensions.agents import load_agents
from agentica_cli.extensions.commands import load_commands
from agentica_cli.extensions.frontmatter import FrontMatterError, split
from agentica_cli.extensions.hook_config import HOOK_EVENTS, HookConfigError, specs_from_claude_json
from agentica_cli.extensions.places import Places, project_extensions
from agentica_cli.extensions.skills import load_skills


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(~/.agentica, ~/.claude, the project)"""
    return tmp_path / "agentica-home", tmp_path / "claude-home", tmp_path / "project"


def places(homes: tuple[Path, Path, Path], trusted: bool = True) -> Places:
    user, claude, project = homes
    project.mkdir(parents=True, exist_ok=True)
    return Places(project=project if trusted else None, user_home=user, claude_home=claude)


def test_front_matter_subset() -> None:
    meta, body = split("---\ndescription: Review \"it\"\nallowed-tools: Bash(git diff:*), Read\n"
                       "tools: [read_file, 'grep']\nlist:\n  - a\n  - b\nlong: >\n  one\n  two\n"
                       "flag: true\n# a comment\n---\n\nBody $1\n")
    assert meta == {"description": 'Review "it"', "allowed-tools": "Bash(git diff:*), Read",
                    "tools": ["read_file", "grep"], "list": ["a", "b"], "long": "one two", "flag": True}
    assert body == "Body $1"
    assert split("no front matter\n") == ({}, "no front matter")
    with pytest.raises(FrontMatterError, match="line 3"):
        split("---\nok: 1\nnot a key\n---\n")
    with pytest.raises(FrontMatterError, match="never closed"):
        split("---\nok: 1\n")


def test_command_arguments_namespaces_and_defaults(homes) -> None:
    _, _, project = homes
    write(project / ".agentica/commands/fix.md",
          "---\ndescription: Fix an issue\nargument-hint: NUMBER [PRIORITY]\nmodel: big-model\n"
          "allowed-tools: Read, Bash(git diff:*)\n---\nFix issue #$1 with priority $2. All: $ARGUMENTS. $10 stays.")
    write(project / ".agentica/commands/frontend/review.md", "# Review the frontend\n\nLook at it.")
    commands = load_commands(places(homes))
    fix = commands["fix"]
    assert fix.expand('42 "very high"') == 'Fix issue #42 with priority very high. All: 42 "very high". $10 stays.'
    # a placeholder with no argument stays as written, as in Claude Code (issue 26, item 7)
    assert fix.expand("") == "Fix issue #$1 with priority $2. All: . $10 stays."
    assert (fix.description, fix.argument_hint, fix.model, fix.scope) == ("Fix an issue", "NUMBER [PRIORITY]",
                                                                          "big-model", "project")
    assert fix.tool_names == {"read_file", "execute"}
    review = commands["frontend:review"]
    assert review.description == "Review the frontend"  # no front matter: the first line
    assert review.tool_names is None
    # no placeholder: the arguments follow the body, as in Claude Code
    assert review.expand("src/app.tsx") == "# Review the frontend\n\nLook at it.\n\nARGUMENTS: src/app.tsx"


def test_project_command_wins_over_the_users_and_agentica_over_claude(homes) -> None:
    user, claude, project = homes
    write(claude / "commands/deploy.md", "claude user")
    write(user / "commands/deploy.md", "agentica user")
    write(user / "commands/mine.md", "only mine")
    write(project / ".claude/commands/deploy.md", "claude project")
    write(project / ".agentica/commands/deploy.md", "agentica project")
    commands = load_commands(places(homes))
    assert commands["deploy"].body == "agentica project"
    assert commands["deploy"].shadowed == [claude / "commands/deploy.md", user / "commands/deploy.md",
                                           project / ".claude/commands/deploy.md"]
    assert commands["mine"].scope == "user"
    # untrusted: the project's files are not read at all; the user's own still are
    untrusted = load_commands(places(homes, trusted=False))
    assert untrusted["deploy"].body == "agentica user"
    assert project_extensions(project) == ["commands"]


def test_a_project_file_linking_outside_is_refused(homes, tmp_path: Path) -> None:
    _, _, project = homes
    secret = write(tmp_path / "secret.txt", "TOKEN=abc")
    (project / ".agentica/commands").mkdir(parents=True)
    (project / ".agentica/commands/leak.md").symlink_to(secret)
    problems: list[str] = []
    assert "leak" not in load_commands(places(homes), problems)
    assert any("leak.md skipped" in p and "outside the project" in p for p in problems)


def test_agents_map_claude_tool_names_and_models(homes) -> None:
    _, _, project = homes
    write(project / ".claude/agents/reviewer.md",
          "---\nname: code-reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Glob, Bash, mcp__gh__issue\n"
          "model: sonnet\n---\nYou review code.")
    write(project / ".agentica/agents/scout.md", "---\ndescription: Finds things\nmodel: small-model\n---\nFind.")
    agents = load_agents(places(homes))
    reviewer = agents["code-reviewer"]
    assert reviewer.tools == ["read_file", "grep", "glob", "execute", "gh__issue"]
    assert reviewer.model is None  # Claude's alias names no model here: the parent's
    assert reviewer.prompt == "You review code."
    assert (agents["scout"].tools, agents["scout"].model) == (None, "small-model")


def test_skills_are_folders_with_skill_md(homes) -> None:
    user, _, project = homes
    write(project / ".agentica/skills/pdf/SKILL.md", "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\nSteps")
    write(project / ".agentica/skills/pdf/scripts/fill.py", "print('x')")
    write(user / "skills/notes/SKILL.md", "Take notes well.\n\nMore.")
    skills = load_skills(places(homes))
    assert sorted(skills) == ["notes", "pdf-tools"]
    assert skills["pdf-tools"].description == "Fill PDF forms"
    assert skills["pdf-tools"].files() == ["scripts/fill.py"]
    assert skills["notes"].description == "Take notes well."
    assert skills["pdf-tools"].instructions() == "Steps"


def test_claude_hooks_json_is_checked() -> None:
    specs = specs_from_claude_json({"hooks": {"PreToolUse": [
        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}]}]}}, "s.json")
    assert [(s.event, s.matcher, s.command, s.timeout) for s in specs] == [("PreToolUse", "Edit|Write", "check.sh", 5)]
    assert specs[0].matches("write_file", "Write") and not specs[0].matches("execute", "Bash")
    # an event agentica does not fire is ignored (and named in the notices), as Claude Code does (issue 26)
    notices: list[str] = []
    assert specs_from_claude_json({"hooks": {"BeforeEverything": []}}, "s.json", notices) == []
    assert notices == [f"s.json: hooks.BeforeEverything: ignored: agentica does not fire BeforeEverything hooks "
                       f"(it fires {', '.join(HOOK_EVENTS)})"]
    with pytest.raises(HookConfigError, match="timeout"):
        specs_from_claude_json({"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": -1}]}]}}, "s.json")


def test_the_event_lists_agree_and_loading_stays_light(tmp_path: Path) -> None:
    import subprocess
    import sys

    from agentica_cli.agent.hooks import HOOK_EVENTS
    from agentica_cli.app.settings.config import LIFECYCLE_HOOK_EVENTS
    from agentica_cli.extensions.hook_config import HOOK_EVENTS as CONFIG_EVENTS

    assert HOOK_EVENTS == LIFECYCLE_HOOK_EVENTS == CONFIG_EVENTS
    project = tmp_path / "project"
    write(project / ".agentica/commands/sub/review.md", "---\ndescription: x\n---\nReview")
    # the REPL loads extensions before its first paint: no agent loop, pydantic or openai then
    code = ("import sys; from pathlib import Path; from agentica_cli.extensions.places import Places; "
            "from agentica_cli.extensions.commands import load_commands; "
            "import agentica_cli.app.extension_setup; "
            "print(len(load_commands(Places(project=Path(sys.argv[1]))))); "
            "print(sorted(m for m in ('openai', 'pydantic', 'agentica_cli.agent', 'builtin_tools', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["1", "[]"]
