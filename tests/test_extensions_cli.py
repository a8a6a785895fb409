"""Extensions through the real `agentica` command: custom commands and /init in the REPL (a
pseudo-terminal), and a project's extensions ignored until the project is trusted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import cli_env, last_user_message, model_args, run_cli
from extension_support import write
from screen_support import Repl

from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello notes\n")
    return path


@pytest.fixture
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    user_home = tmp_path / "user"  # HOME: no ~/.claude of the machine's user
    user_home.mkdir()
    return cli_env(home, HOME=str(user_home), PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color")


@pytest.fixture
def start(start_repl, env: dict[str, str]) -> Callable[[ScriptedModelServer], Repl]:
    """The REPL with this module's environment, right after its start (a trust question may come)."""
    return lambda server: start_repl(server, wait=False, env=env)


def test_project_command_expands_after_trust_and_wins_over_the_users(start, home: Path, project: Path) -> None:
    write(home / "commands/review.md", "User review of $1.")
    write(home / "commands/standup.md", "---\ndescription: Summarise yesterday\n---\nWhat did I do?")
    write(project / ".agentica/commands/review.md",
          "---\ndescription: Review one file\nargument-hint: FILE [FOCUS]\n---\n"
          "Review $1 carefully; focus on $2. Everything: $ARGUMENTS. See @notes.txt")
    write(project / ".agentica/agents/scout.md", "---\ndescription: Finds things fast\ntools: Read, Grep\n---\nFind.")
    log = project.parent / "hooks.jsonl"  # the user's own hooks (no trust needed) record every event
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    write(home / "settings.json", json.dumps({"hooks": {e: [{"hooks": [{"type": "command",
                                                                        "command": f"{{ cat; echo; }} >> {log}"}]}]
                                                        for e in events}}))
    with ScriptedModelServer([turns.text("user version ran"), turns.text("project version ran")]) as server:
        repl = start(server)
        repl.expect(r"This project has its own commands, agents")
        repl.expect(r"Trust this project\? \[y/N\]")
        repl.send_line("n")
        repl.expect_prompt()
        repl.send_line("/review app.py")  # untrusted: the user's own command of that name
        repl.expect("user version ran")
        repl.expect_prompt()
        assert last_user_message(server.requests[0]) == "User review of app.py."
        assert repl.exit() == 0

        repl = start(server)
        repl.expect(r"Trust this project\? \[y/N\]")
        repl.send_line("y")
        repl.expect(r"Extensions: 2 commands, 1 agent \(/help, /agents\)")
        repl.expect_prompt()
        repl.send_line("/help")
        repl.expect(r"/review\s+Review one file FILE \[FOCUS\]\s+\(project\)")
        repl.expect(r"/standup\s+Summarise yesterday\s+\(user\)")
        repl.expect_prompt()
        repl.send_line("/agents")
        repl.expect(r"scout\s+Finds things fast")
        repl.expect(r"tools: read_file, grep · model: inherit")
        repl.expect_prompt()
        repl.child.send("/revi\t")  # Tab completes a custom command too
        repl.expect(r"/revi(\x1b\[[0-9;?]*[A-Za-z])*ew")
        repl.send_line(' app.py "error handling"')
        repl.expect("project version ran")
        repl.expect_prompt()
        sent = last_user_message(server.requests[1])
        assert sent.startswith('Review app.py carefully; focus on error handling. Everything: app.py "error handling". '
                               "See @notes.txt")
        assert '<file path="notes.txt">\nhello notes\n' in sent  # @path attached
        assert repl.exit() == 0
    recorded = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [r["hook_event_name"] for r in recorded] == ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] * 2
    assert recorded[-1]["reason"] == "prompt_input_exit"
    first, second = recorded[0]["session_id"], recorded[-1]["session_id"]
    assert first != second and all(r["session_id"] == second for r in recorded[4:])
    assert Path(recorded[-1]["transcript_path"]).is_file()  # the session's JSONL


def test_init_writes_agents_md_only_after_approval(start, project: Path) -> None:
    write(project / "README.md", "# Demo\n\nRun `make test`.\n")
    document = "# AGENTS.md\n\n- Test: `make test`\n- Layout: src/ holds the code\n"
    script = [
        turns.tool_calls(turns.call("read_file", {"file_path": "README.md"}, id="r1")),
        turns.text(f"Here it is:\n\n```markdown\n{document}```\n"),
    ]
    with ScriptedModelServer(script) as server:
        repl = start(server)
        repl.expect_prompt()
        repl.send_line("/init")
        repl.expect(r"\+- Test: `make test`")
        repl.expect(r"Write AGENTS\.md\? \[y/N\]")
        assert not (project / "AGENTS.md").exists()  # the question is on screen: nothing written yet
        repl.send_line("y")
        repl.expect(r"Wrote AGENTS\.md")
        repl.expect_prompt()
        assert (project / "AGENTS.md").read_text() == document
        tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
        assert "write_file" not in tools and "execute" not in tools and "read_file" in tools
        assert repl.exit() == 0


def test_untrusted_projects_agents_skills_and_hooks_are_ignored_until_trust(env, home: Path,
                                                                            project: Path) -> None:
    write(project / ".agentica/agents/scout.md", "---\ndescription: Finds things fast\n---\nFind.")
    write(project / ".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the app\n---\nSteps")
    marker = project / "hook-ran.json"
    write(project / ".claude/settings.json", json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": f"cat > {marker}"}]}]}}))
    with ScriptedModelServer([turns.text("a"), turns.text("b")]) as server:
        untrusted = run_cli(["-p", "hello", *model_args(server)], cwd=project, home=home, env=env)
        trusted = run_cli(["-p", "hello", "--trust", *model_args(server)], cwd=project, home=home, env=env)
        assert untrusted.returncode == 0 and trusted.returncode == 0, untrusted.stderr + trusted.stderr
        assert "ignoring this untrusted project's agents, skills, hooks (run with --trust" in untrusted.stderr
        before, after = (json.dumps(r) for r in server.requests)
    assert "scout" not in before and "Deploy the app" not in before
    assert "scout" in after and "Deploy the app" in after and '"skill"' in after
    recorded = json.loads(marker.read_text())  # only the trusted run's hook ran
    assert (recorded["hook_event_name"], recorded["prompt"]) == ("UserPromptSubmit", "hello")


def test_print_mode_runs_a_custom_command_with_its_model_and_tools(env, home: Path, project: Path) -> None:
    write(project / ".agentica/commands/fix.md",
          "---\nmodel: command-model\nallowed-tools: Read, Grep\n---\nFix issue #$1 as described in @notes.txt")
    with ScriptedModelServer([turns.text("fixed")]) as server:
        result = run_cli(["-p", "/fix 42", "--trust", *model_args(server)], cwd=project, home=home, env=env)
        assert result.returncode == 0, result.stderr
        request = server.requests[0]
    assert result.stdout.strip() == "fixed"
    assert request["model"] == "command-model"
    assert {t["function"]["name"] for t in request["tools"]} == {"read_file", "grep"}
    sent = last_user_message(request)
    assert sent.startswith("Fix issue #42 as described in @notes.txt") and "hello notes" in sent
