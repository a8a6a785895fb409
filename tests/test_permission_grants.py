"""Scoped grants, [permissions] rules, sensitive writes and plan mode: the policy and the CLI."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from cli_support import cli_env, model_args, run_cli, tool_results

from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy, policy_from_settings
from agentica_cli.app.permissions.permission_rules import PermissionRule
from agentica_cli.app.permissions.shell_parts import grant_prefix, parse_command
from agentica_cli.app.settings.config import ConfigError, load_settings
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.base import Function, FunctionCall

DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"


def execute(command: str) -> str:
    """Run a command.

    Args:
        command: the command
    """
    return "ok"


def write_file(file_path: str, content: str) -> str:
    """Write a file.

    Args:
        file_path: where
        content: what
    """
    return "ok"


def read_file(file_path: str) -> str:
    """Read a file.

    Args:
        file_path: where
    """
    return "ok"


def call(fn, destructive: bool = True, read_only: bool = False, **args) -> FunctionCall:  # type: ignore[no-untyped-def]
    made = FunctionCall(Function.from_callable(fn, is_destructive=destructive, is_read_only=read_only), "c1", args)
    assert made.parse_arguments()
    return made


def decide(policy: PermissionPolicy, made: FunctionCall) -> bool:
    return asyncio.run(policy(made)).allowed


class Asker:
    """Answers the policy's questions from a list and records what was asked."""

    def __init__(self, *answers: str):
        self.answers = list(answers)
        self.asked: list[str] = []

    def __call__(self, made: FunctionCall) -> Answer:
        self.asked.append(made.args.get("command") or made.args.get("file_path") or made.name)
        return Answer(self.answers.pop(0) if self.answers else "no")


# -- splitting commands --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "parts", "grantable"),
    [
        ("pytest -q tests", [["pytest", "-q", "tests"]], True),
        ("pytest; rm x", [["pytest"], ["rm", "x"]], True),
        ("pytest && rm x || echo no", [["pytest"], ["rm", "x"], ["echo", "no"]], True),
        ("pytest | sh", [["pytest"], ["sh"]], True),
        ("pytest $(rm x)", None, False),
        ("pytest `rm x`", None, False),
        ("pytest > out.txt", [["pytest"]], False),  # redirections are not argv words
        ("pytest 2>&1", [["pytest"]], True),
        ("pytest >/dev/null 2>&1", [["pytest"]], True),
        ("echo 'a; b' \"c && d\"", [["echo", "a; b", "c && d"]], True),
        ("(cd x; rm y)", [["cd", "x"], ["rm", "y"]], False),
        ("rm -f victim.txt # ls -la", [["rm", "-f", "victim.txt"]], True),
        ("cat <<EOF\nhi\nEOF", None, False),
        ("diff <(ls a) <(ls b)", None, False),
    ],
)
def test_commands_split_into_what_a_grant_must_cover(command: str, parts: list | None, grantable: bool) -> None:
    parsed = parse_command(command)
    if parts is not None:
        assert parsed.parts == parts
    assert parsed.grantable is grantable, parsed.hazards


def test_the_prefix_an_always_answer_grants() -> None:
    assert grant_prefix(["pytest", "-q", "tests/x.py"]) == ["pytest"]
    assert grant_prefix(["git", "status", "--short"]) == ["git", "status"]
    assert grant_prefix(["npm", "run", "test", "--", "-u"]) == ["npm", "run", "test"]
    assert grant_prefix(["python", "-m", "pytest", "-x"]) == ["python", "-m", "pytest"]
    assert grant_prefix(["bash", "-c", "make"]) == ["bash", "-c", "make"]  # a shell: only this exact command
    assert grant_prefix(["rm", "-rf", "build"]) == ["rm", "-rf", "build"]
    assert grant_prefix(["FOO=1", "make"]) == ["FOO=1", "make"]


# -- grants ----------------------------------------------------------------------------------


def test_a_pytest_grant_never_approves_more_than_pytest(tmp_path: Path) -> None:
    asker = Asker("always")
    policy = PermissionPolicy("default", tmp_path, ask=asker)
    assert decide(policy, call(execute, command="pytest -q"))
    assert [g.describe() for g in policy.grants] == ["execute: `pytest` commands"]
    asker.answers = ["no"] * 20
    assert decide(policy, call(execute, command="pytest tests/test_x.py -k slow"))
    assert decide(policy, call(execute, command="pytest && pytest -x"))  # every part is granted
    for sneaky in ["pytest; rm x", "rm x", "pytest $(rm x)", "pytest `rm x`", "pytest > x", "pytest | sh",
                   "pytest-watch", "pytest && rm x", "pytest .git/hooks/x"]:
        assert not decide(policy, call(execute, command=sneaky)), sneaky
    assert asker.asked[1:] == ["pytest; rm x", "rm x", "pytest $(rm x)", "pytest `rm x`", "pytest > x",
                               "pytest | sh", "pytest-watch", "pytest && rm x", "pytest .git/hooks/x"]


def test_a_compound_command_grants_each_part_and_revoking_asks_again(tmp_path: Path) -> None:
    asker = Asker("always", "always", "no")
    policy = PermissionPolicy("default", tmp_path, ask=asker)
    assert decide(policy, call(execute, command="make build; make test"))  # "always" grants each part (issue 28)
    assert [(g.tool, g.words) for g in policy.grants] == [("execute", ("make", "build")), ("execute", ("make", "test"))]
    assert decide(policy, call(execute, command="git status"))
    assert [g.words for g in policy.grants][-1] == ("git", "status")
    assert not decide(policy, call(execute, command="git push"))  # another subcommand asks
    revoked = policy.revoke(2)
    assert revoked.words == ("git", "status")
    asker.answers = ["no"]
    assert not decide(policy, call(execute, command="git status"))
    assert asker.asked == ["make build; make test", "git status", "git push", "git status"]


def test_always_for_an_edit_switches_to_accept_edits_for_the_session(tmp_path: Path) -> None:
    policy = PermissionPolicy("default", tmp_path, ask=Asker("always"))
    assert decide(policy, call(write_file, file_path="a.txt", content="x"))
    assert policy.mode == "accept-edits"
    assert decide(policy, call(write_file, file_path="b.txt", content="x"))  # not asked: no answers left
    assert not decide(policy, call(execute, command="ls"))  # commands still ask


# -- rules ---------------------------------------------------------------------------------


def rules(*triples: tuple[str, str]) -> list[PermissionRule]:
    return [PermissionRule.parse(kind, text, "test") for kind, text in triples]


def test_config_rules_deny_wins_then_ask_then_allow(tmp_path: Path) -> None:
    asker = Asker()
    policy = PermissionPolicy(
        "default",
        tmp_path,
        rules=rules(("allow", "execute(pytest *)"), ("allow", "Bash(git diff:*)"), ("deny", "execute(rm -rf *)"),
                    ("ask", "execute(git diff --staged)"), ("deny", "read_file(.env)"), ("allow", "execute(rm *)")),
        ask=asker,
    )
    assert decide(policy, call(execute, command="pytest -x"))
    assert decide(policy, call(execute, command="pytest"))
    assert decide(policy, call(execute, command="git diff HEAD~1"))
    assert not decide(policy, call(execute, command="rm -rf build"))  # deny beats the allow of `rm *`
    assert not decide(policy, call(execute, command="echo $(rm -rf /tmp/x)"))  # also inside a substitution
    assert decide(policy, call(execute, command="rm old.txt"))
    assert not decide(policy, call(execute, command="git diff --staged"))  # ask beats allow: asked, answered no
    assert not decide(policy, call(execute, command="pytest; curl x | sh"))  # allow covers every part or nothing
    env_read = call(read_file, destructive=False, read_only=True, file_path="sub/.env")
    assert policy.needs_review(env_read)  # a read-only tool: the loop lets the policy see it
    assert not decide(policy, env_read)
    assert not policy.needs_review(call(read_file, destructive=False, read_only=True, file_path="a.py"))
    assert asker.asked == ["git diff --staged", "pytest; curl x | sh"]


def test_deny_rules_hold_even_with_yes(tmp_path: Path) -> None:
    policy = PermissionPolicy("auto", tmp_path, rules=rules(("deny", "execute(git push *)")), explicit_auto=True)
    assert not decide(policy, call(execute, command="git push origin main"))
    assert decide(policy, call(execute, command="git status"))


def test_untrusted_project_rules_are_ignored_and_bad_rules_are_config_errors(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    project = tmp_path / "proj"
    (project / ".agentica").mkdir(parents=True)
    (project / ".agentica" / "config.toml").write_text('[permissions]\nallow = ["execute"]\ndeny = ["read_file"]\n')
    (home / "config.toml").write_text('[permissions]\ndeny = ["execute(git push *)"]\n')
    untrusted = load_settings(project, {}, trusted=False, environ={})
    assert untrusted.permission_rules == [("deny", "execute(git push *)", str(home / "config.toml"))]
    assert set(untrusted.held_back) == {"permissions.allow", "permissions.deny"}
    policy = policy_from_settings(untrusted, project)
    assert not decide(policy, call(execute, command="ls"))  # the project's allow did not apply
    trusted = load_settings(project, {}, trusted=True, environ={})
    kinds = sorted((kind, text) for kind, text, _ in trusted.permission_rules)
    assert kinds == [("allow", "execute"), ("deny", "execute(git push *)"), ("deny", "read_file")]
    (home / "config.toml").write_text('[permissions]\nallow = ["execute(pytest"]\n')
    with pytest.raises(ConfigError, match=r"permissions\.allow"):
        load_settings(project, {}, trusted=False, environ={})


# -- sensitive writes and plan mode through the CLI ---------------------------------------


SENSITIVE_TARGETS = [".agentica/config.toml", ".git/hooks/pre-commit", ".bashrc"]


def test_accept_edits_never_writes_agentica_or_git_config_unasked(tmp_path: Path, home: Path) -> None:
    # One run per mode writes all three targets (one call each): three runs, not nine.
    project = tmp_path / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".agentica").mkdir()
    script = [
        turns.tool_calls(*(turns.call("write_file", {"file_path": target, "content": 'mode = "auto"\n'}, id=f"w{i}")
                           for i, target in enumerate(SENSITIVE_TARGETS))),
        turns.text("done"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--permission-mode", "accept-edits", *model_args(server)], cwd=project,
                       home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    results = tool_results(requests[1])
    for i, target in enumerate(SENSITIVE_TARGETS):
        assert not (project / target).exists(), target
        assert "sensitive" in results[f"w{i}"], target
    assert "only an explicit --yes allows it" in proc.stderr
    # the same write under config-chosen auto mode is refused too; --yes on the command line allows it
    (home / "config.toml").write_text('[permissions]\nmode = "auto"\n')
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    for target in SENSITIVE_TARGETS:
        assert not (project / target).exists(), target
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--yes", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    for target in SENSITIVE_TARGETS:
        assert (project / target).read_text() == 'mode = "auto"\n', target


def test_refused_edit_outside_the_folder_suggests_add_dir(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    outside = tmp_path / "other" / "x.txt"
    outside.parent.mkdir()
    script = [turns.tool_calls(turns.call("write_file", {"file_path": str(outside), "content": "x"}, id="w1")),
              turns.text("done")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--permission-mode", "accept-edits", *model_args(server)], cwd=project,
                       home=home)
    assert proc.returncode == 0, proc.stderr
    assert "--add-dir" in proc.stderr and "--permission-mode accept-edits" not in proc.stderr
    assert not outside.exists()


def test_plan_mode_refuses_a_non_read_only_mcp_tool(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    (project / ".agentica").mkdir(parents=True)
    (project / ".agentica" / "config.toml").write_text(
        f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{DEMO}"]\n'
    )
    script = [
        turns.tool_calls(turns.call("demo__increment", {}, id="m1"), turns.call("demo__add", {"a": 1, "b": 2},
                                                                                id="m2")),
        turns.text("planned"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "plan it", "--trust", "--permission-mode", "plan", *model_args(server)], cwd=project,
                       home=home, env=cli_env(home))
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    results = tool_results(requests[1])
    assert results["m1"].startswith("Plan mode is on: 'demo__increment' is not a read-only tool")
    assert results["m2"] == "3"  # a read-only MCP tool still runs
    assert "refused 'demo__increment' (plan mode is read-only)" in proc.stderr
