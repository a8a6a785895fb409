"""--allowed-tools / --disallowed-tools (and Claude Code's --allowedTools / --disallowedTools):
permission rules for one run, through the real `agentica` command against the scripted model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_support import model_args, run_cli, tool_results

from agentica_cli.app.permissions.permission_rules import RuleError, split_rule_list
from agentica_cli.testing import ScriptedModelServer, turns


def test_rule_lists_split_on_commas_and_spaces_outside_brackets() -> None:
    assert split_rule_list("Read, Bash(git diff:*)  execute(echo a, b),mcp__git__*") == [
        "Read", "Bash(git diff:*)", "execute(echo a, b)", "mcp__git__*"
    ]
    assert split_rule_list(" , ") == []
    for bad, named in (("Bash(git diff", "'Bash(git diff'"), ("Read)", "'Read)'"), ("foo(x)y", "'foo(x)y'")):
        with pytest.raises(RuleError, match=re.escape(named)):
            split_rule_list(bad)


def test_an_allowed_command_runs_in_print_mode_without_yes(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[permissions]\nallow = ["execute(pwd)"]\n')
    before = (home / "config.toml").read_text()
    script = [
        turns.tool_calls(
            turns.call("execute", {"command": "echo allowed-ran"}, id="x1"),
            turns.call("execute", {"command": "pwd"}, id="x2"),  # the config's own rule still holds
            turns.call("execute", {"command": "touch other.txt"}, id="x3"),  # no rule: refused, as before
        ),
        turns.text("done"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--allowed-tools", "Read, execute(echo *)", *model_args(server)],
                       cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    results = tool_results(requests[1])
    assert "allowed-ran" in results["x1"] and "not run" not in results["x1"]
    assert str(project) in results["x2"]
    assert "'execute' was not run" in results["x3"]
    assert not (project / "other.txt").exists()
    assert "refused 'execute'" in proc.stderr  # only the third call
    assert proc.stderr.count("refused") == 1
    assert (home / "config.toml").read_text() == before  # for this run only: nothing is saved
    assert not (project / ".agentica").exists()


def test_a_disallowed_call_is_refused_even_with_yes_and_the_model_is_told_why(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(
            turns.call("execute", {"command": "touch denied.txt"}, id="x1"),
            turns.call("read_file", {"file_path": "notes.txt"}, id="r1"),
            turns.call("execute", {"command": "echo still-fine"}, id="x2"),
        ),
        turns.text("done"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(
            ["-p", "go", "--yes", "--disallowed-tools", "execute(touch *)", "--disallowedTools", "Read",
             *model_args(server)],
            cwd=project, home=home,
        )
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert not (project / "denied.txt").exists()
    results = tool_results(requests[1])
    assert results["x1"].startswith(
        "'execute' was not run: a permission rule denies it: execute(touch *) (--disallowed-tools)."
    )
    assert results["r1"].startswith("'read_file' was not run: a permission rule denies it: Read (--disallowed-tools).")
    assert "hello from the notes" not in results["r1"]
    assert "still-fine" in results["x2"]
    assert "agentica: refused 'execute': a deny rule matches it" in proc.stderr
    assert "--disallowed-tools" in proc.stderr


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [
        ("--allowed-tools", "Read Bash(git diff", "'Bash(git diff'"),
        ("--allowedTools", "execute(echo *), Read)", "'Read)'"),
        ("--disallowed-tools", "foo(x)y", "'foo(x)y'"),
    ],
)
def test_a_malformed_rule_exits_2_naming_it(home: Path, project: Path, flag: str, value: str, named: str) -> None:
    with ScriptedModelServer([turns.text("never")]) as server:
        proc = run_cli(["-p", "go", flag, value, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "agentica: error: argument --" in proc.stderr and named in proc.stderr
    assert "Traceback" not in proc.stderr
    assert requests == []


def test_in_the_repl_an_allowed_call_is_not_asked_and_permissions_shows_the_flags(start_repl) -> None:
    script = [
        turns.tool_calls(turns.call("execute", {"command": "echo repl-allowed"}, id="x1")),
        turns.text("Echoed it."),
    ]
    with ScriptedModelServer(script) as server:
        repl = start_repl(server, "--allowedTools", "Bash(echo:*)", "--disallowed-tools", "execute(touch *)",
                          "--append-system-prompt", "REPL-APPEND-MARK")
        repl.send_line("echo something")
        screen = repl.expect("Echoed it.")  # an "Allow?" question here would wait for an answer instead
        assert "Allow?" not in screen
        repl.expect_prompt()
        assert "repl-allowed" in tool_results(server.requests[1])["x1"]
        assert server.requests[0]["messages"][0]["content"].endswith("REPL-APPEND-MARK")
        repl.send_line("/permissions")
        screen = repl.expect(r"allowed without asking this session")
        assert "deny  execute(touch *)  (--disallowed-tools)" in screen
        assert "allow Bash(echo:*)  (--allowed-tools)" in screen
        repl.expect_prompt()
        assert repl.exit() == 0
