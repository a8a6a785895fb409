"""The REPL at start, in a project trusted at its question: which instruction files it read,
every file it skipped (before the first message, not at it), and /skills."""

from __future__ import annotations

from pathlib import Path

from cli_support import cli_env
from extension_support import write

from agentica_cli.testing import ScriptedModelServer, turns


def test_trusting_at_start_names_the_instructions_and_skipped_files_and_skills_lists_them(
        start_repl, home: Path, project: Path, tmp_path: Path) -> None:
    user_home = tmp_path / "user"  # HOME: no ~/.claude of the machine's user
    user_home.mkdir()
    write(project / "AGENTS.md", "Use make.\n")
    write(project / "CLAUDE.md", "Read @docs/testing.md first.\n")
    write(project / "docs/testing.md", "Tests: make test.\n")
    write(project / ".claude/skills/release-notes/SKILL.md",
          "---\nname: release-notes\ndescription: Write release notes from the git log\n---\nSteps.\n")
    write(project / ".claude/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill in PDF forms\n---\nSteps.\n")
    write(project / ".claude/skills/agent-dev/SKILL.md",  # a name as Anthropic's plugin-dev writes it
          "---\nname: Agent Development\ndescription: Build agents\n---\nSteps.\n")
    write(home / "skills/standup/SKILL.md",  # no description: the body's first line is, escape and all
          "---\nname: standup\n---\nSummarise yesterday \x1b[31min red\n\nSteps.\n")
    write(tmp_path / "outside.md", "not for the model\n")
    (project / ".claude/commands").mkdir(parents=True)
    (project / ".claude/commands/leak.md").symlink_to(tmp_path / "outside.md")
    with ScriptedModelServer([turns.text("unused")]) as server:
        repl = start_repl(server, wait=False, env=cli_env(home, HOME=str(user_home)))
        repl.expect(r"Trust this project\? \[y/N\]")
        repl.send_line("y")
        repl.expect(r"Extensions: 4 skills \(/skills\)\.")
        repl.expect(r"Instructions: AGENTS\.md, CLAUDE\.md \(\+1 imported\)\.")
        skipped = repl.expect(r"leak\.md skipped:\s+it\s+leads\s+outside\s+the\s+project")  # wrapped between words
        repl.expect_prompt()  # all of it before the first prompt: nothing was sent yet
        assert "\x1b[31m" not in skipped
        assert server.requests == []
        repl.send_line("/skills")
        # a path too long for what is left of its row starts the next one
        shown = repl.expect(r"standup\s+Summarise yesterday .*?\n(.*\n)*?.*user:\s+\S*SKILL\.md")
        assert "\x1b[31min red" not in shown  # the escape from the file is shown, not obeyed
        assert "pdf" in shown and "Fill in PDF forms" in shown and "project:" in shown  # a long path wraps to its row
        assert "release-notes" in shown and "Write release notes from the git log" in shown
        # a usable name (its folder's), and the name as written beside it
        assert "agent-dev " in shown and "name: 'Agent Development'" in shown
        repl.expect_prompt()
        assert repl.exit() == 0
