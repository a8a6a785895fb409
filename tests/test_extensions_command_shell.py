"""Custom commands' !`command` lines: run before the prompt is sent, under the same approval
rules as execute (allowed-tools grants them), their output inlined and bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import last_user_message, model_args, run_cli
from conftest import scripted_model
from screen_support import started_repls

from agentica_cli.agent import ToolConfig
from agentica_cli.app.command_shell import expand_command
from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy
from agentica_cli.app.permissions.permission_rules import PermissionRule
from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.commands import CustomCommand
from agentica_cli.testing import ScriptedModelServer, turns


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def command(body: str, allowed: list[str] | None, path: Path) -> CustomCommand:
    return CustomCommand("ctx", body, path, "project", allowed_tools=allowed)


def test_granted_asked_and_denied_commands_and_nothing_else_runs(scripted, tmp_path: Path) -> None:
    (tmp_path / "keep").mkdir()
    write(tmp_path / "evil.txt", "attached text with !`touch from-the-file` in it\n")
    asked: list[str] = []

    def ask(call: Any, verdict: Any) -> Answer:
        asked.append(call.args["command"])
        return Answer("once")

    policy = PermissionPolicy("default", tmp_path, rules=[PermissionRule.parse("deny", "Bash(rm:*)")], ask=ask)
    agent = DeepAgent(scripted_model(scripted()), work_dir=tmp_path, approve=policy,
                      exclude_tools=("web_search", "fetch_url"))
    body = ("Granted: !`echo granted-$1`\nAsked: !`printf 'asked-%s' x`\nDenied: !`rm -rf keep`\n"
            "Failed: !`echo oops >&2; exit 3`\nSee @evil.txt")
    shown: list[str] = []
    text, attached = asyncio.run(expand_command(command(body, ["Read", "Bash(echo:*)"], tmp_path / "ctx.md"),
                                                "one", agent, tmp_path, shown.append))
    lines = text.splitlines()
    assert lines[0] == "Granted: granted-one"  # $1 substituted first; allowed-tools granted it: no question
    assert lines[1] == "Asked: asked-x"
    assert lines[2].startswith("Denied: [`rm -rf keep` was not run: a permission rule denies it")
    assert lines[3:5] == ["Failed: oops", "[`echo oops >&2; exit 3` ended with exit code 3]"]
    assert asked == ["printf 'asked-%s' x", "echo oops >&2; exit 3"]  # the grant covers no compound command
    assert (tmp_path / "keep").is_dir()
    assert attached == ["evil.txt"] and "!`touch from-the-file`" in text  # attached text is not run
    assert not (tmp_path / "from-the-file").exists()
    assert shown[0] == "! echo granted-one  (exit code 0, 1 line)" and shown[1] == "  granted-one"


def test_output_is_held_to_the_result_budget(scripted, tmp_path: Path) -> None:
    agent = DeepAgent(scripted_model(scripted()), work_dir=tmp_path, tool_config=ToolConfig(max_result_tokens=100),
                      exclude_tools=("web_search", "fetch_url"))  # no approve: a library agent runs it
    text, _ = asyncio.run(expand_command(command("Log: !`seq 1 5000`", None, tmp_path / "c.md"), "", agent,
                                         tmp_path, lambda line: None))
    assert text.startswith("Log: [Result too large for the context")
    assert len(text) < 12_000 and "\n5000" in text  # head and tail kept
    saved = Path(text.split("The whole result was saved to ", 1)[1].split(":", 1)[0])
    assert saved.read_text().splitlines()[-1] == "5000"


def test_print_mode_runs_granted_commands_and_refuses_the_others(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / ".agentica/commands/status.md",
          "---\nallowed-tools: Bash(echo:*)\n---\nGranted: !`echo from-echo`\nOther: !`printf from-printf`")
    with ScriptedModelServer([turns.text("ok")]) as server:
        result = run_cli(["-p", "/status", "--trust", *model_args(server)], cwd=project, home=home)
        assert result.returncode == 0, result.stderr
        sent = last_user_message(server.requests[0])
    assert sent.splitlines()[0] == "Granted: from-echo"
    assert sent.splitlines()[1].startswith("Other: [`printf from-printf` was not run: it needs the user's permission")
    assert "! echo from-echo  (exit code 0, 1 line)" in result.stderr


@pytest.mark.skipif(not hasattr(pexpect, "spawn"), reason="needs a pseudo-terminal")
def test_the_repl_asks_before_an_ungranted_command(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(home / "commands/ctx.md", "Branch: !`printf asked-and-run`")
    project.mkdir()
    user_home = tmp_path / "user"
    user_home.mkdir()
    with ScriptedModelServer([turns.text("answered")]) as server, started_repls(home, project) as start:
        repl = start(server, HOME=str(user_home))
        repl.send_line("/ctx")
        repl.expect("printf asked-and-run")  # the question shows the command
        repl.expect(r"\[y\]")
        repl.child.send("y")
        repl.expect("answered")
        repl.expect_prompt()
        assert last_user_message(server.requests[0]) == "Branch: asked-and-run"
        assert repl.exit() == 0
