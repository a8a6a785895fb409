"""Rules and grants are checked against what bash really runs (issue 25, item 1).

The attacks are the review's own: a `$'...'` quote that the old splitter read as a plain word
(so `; echo X > PWNED; rm -rf important` hid inside "one argument"), and a no-break space
before `#` that made the rest of the line look like a comment. They run through the real
`agentica -p` against the scripted model server; the fuzz test below has bash itself judge
the parser on random command lines.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import model_args, run_cli, tool_results
from shell_oracle import fuzz

from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy
from agentica_cli.app.permissions.permission_rules import PermissionRule
from agentica_cli.app.permissions.shell_parts import parse_command
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.base import Function, FunctionCall

ANSI_C_ATTACK = "git status $'\\''; echo X > PWNED; rm -rf important #'"
NBSP_ATTACK = "ls\u00a0# list; touch PWNED"


def _project(project: Path) -> Path:
    (project / "important").mkdir()
    (project / "important" / "keep.txt").write_text("precious\n")
    return project


def _run(home: Path, project: Path, commands: list[str], *flags: str) -> tuple[dict[str, str], str]:
    """One -p run whose model calls execute once per command; (results by call id, stderr)."""
    calls = [turns.tool_calls(turns.call("execute", {"command": c}, id=f"x{i}")) for i, c in enumerate(commands)]
    with ScriptedModelServer([*calls, turns.text("done")]) as server:
        proc = run_cli(["-p", "go", *flags, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    return tool_results(requests[-1]), proc.stderr


def test_an_ansi_c_quote_does_not_ride_on_an_allow_rule(home: Path, project: Path) -> None:
    project = _project(project)
    results, stderr = _run(home, project, ["git status --short", ANSI_C_ATTACK],
                           "--allowed-tools", "execute(git status *)")
    assert not (project / "PWNED").exists()
    assert (project / "important" / "keep.txt").read_text() == "precious\n"
    assert "was not run" not in results["x0"]  # the rule still allows what it names
    assert "'execute' was not run" in results["x1"]
    assert "refused 'execute'" in stderr


def test_hidden_commands_are_caught_by_deny_rules_even_with_yes(home: Path, project: Path) -> None:
    project = _project(project)
    results, _ = _run(home, project, [ANSI_C_ATTACK, NBSP_ATTACK, "echo fine"],
                      "--yes", "--disallowed-tools", "execute(rm *), execute(touch *)")
    assert not (project / "PWNED").exists()
    assert (project / "important" / "keep.txt").read_text() == "precious\n"
    for call_id in ("x0", "x1"):
        assert "a permission rule denies it" in results[call_id]
        assert "could not be fully checked" in results[call_id]  # and says why, so it can be rewritten
    assert "fine" in results["x2"]


# -- grants (the REPL's "always" answers, on the policy the REPL uses) -----------------------


def execute(command: str) -> str:
    """Run a command.

    Args:
        command: the command
    """
    return "ok"


def _call(command: str) -> FunctionCall:
    made = FunctionCall(Function.from_callable(execute, is_destructive=True), "c1", {"command": command})
    assert made.parse_arguments()
    return made


def test_a_git_status_grant_does_not_cover_the_attacks(tmp_path: Path) -> None:
    asked: list[str] = []

    def ask(call: FunctionCall) -> Answer:
        asked.append(call.args["command"])
        return Answer("always" if len(asked) == 1 else "no")

    policy = PermissionPolicy("default", tmp_path, ask=ask)
    assert asyncio.run(policy(_call("git status"))).allowed
    assert [g.describe() for g in policy.grants] == ["execute: `git status` commands"]
    assert asyncio.run(policy(_call("git status --short"))).allowed
    for attack in (ANSI_C_ATTACK, NBSP_ATTACK, "git status <<EOF\nx\nEOF", "git status $(touch PWNED)",
                   "git status\u2003; touch PWNED", "git status `touch PWNED`", "git status\\\n; touch PWNED"):
        assert not asyncio.run(policy(_call(attack))).allowed, attack
    assert asked[1:] == [ANSI_C_ATTACK, NBSP_ATTACK, "git status <<EOF\nx\nEOF", "git status $(touch PWNED)",
                         "git status\u2003; touch PWNED", "git status `touch PWNED`", "git status\\\n; touch PWNED"]
    # and "always" is not even offered for a line the grammar cannot account for
    assert policy.grant_for(_call(NBSP_ATTACK)) is None
    assert policy.grant_for(_call(ANSI_C_ATTACK)) is None


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (ANSI_C_ATTACK, "ANSI-C"),
        (NBSP_ATTACK, "U+00A0"),
        ("cat <<'EOF'\nhi\nEOF", "here-document"),
        ("echo $(id)", "command substitution"),
        ("diff <(ls a) b", "process substitution"),
        ("echo $((1+2))", "arithmetic"),
        ('echo $"x"', "does not know"),
        ("echo a\\\nb", "line continuation"),
        ("ls\u200b-la", "U+200B"),
        ("echo 'unterminated", "cannot parse"),
        ("zq;\\ x", "did not read"),
        ("{ ls; }#c", "comment"),
        # found by the bash-oracle fuzz test: tree-sitter-bash reads these differently from bash
        ("zq.y | { zq=; }|zq \t\\#\nzq.y >out#c", "line break"),
        ("ls | [ab]", "[ that bash"),
        ("ls | {}", "{ that bash"),
        ("ls | ! rm x", "! inside a pipeline"),
        ("zq= --opt=v", "assignment"),
        ('zq1 a" "b', "did not read"),
        ("zqa  {x=y,  }  ]", "differently from bash"),
    ],
)
def test_what_the_grammar_cannot_account_for_is_opaque(command: str, reason: str) -> None:
    _assert_opaque(command, reason)


def test_words_bash_expands_keep_a_command_out_of_allow_rules() -> None:
    for command in ("zqa {a},b}", "echo ~/x", "a=~/x zq", "echo $HOME", "echo ${x}"):
        parsed = parse_command(command)
        assert not parsed.opaque and not parsed.grantable, command
        assert not PermissionRule.parse("allow", "execute(* *)").matches("execute", {"command": command}, Path("."))


def _assert_opaque(command: str, reason: str) -> None:
    parsed = parse_command(command)
    assert parsed.opaque and reason in parsed.opaque, parsed.opaque
    assert not parsed.grantable
    allow = PermissionRule.parse("allow", "execute(* *)")  # matches any words: not a line it cannot read
    deny = PermissionRule.parse("deny", "execute(something-else *)")
    assert not allow.matches("execute", {"command": command}, Path("."))
    assert deny.matches("execute", {"command": command}, Path("."))


@pytest.mark.parametrize(
    "command",
    ["sudo rm -rf x", "timeout 5 rm x", "env A=1 rm x", "xargs rm", "find . -exec rm {} ;", "bash -c 'rm x'",
     "sh -ec 'ls; rm x'", "eval rm x", "$CMD x", '"r"m x', "r\\m x", "git status; rm x", "(rm x)",
     "for f in a; do rm $f; done", "bash -c \"$(echo rm)\""],
)
def test_a_deny_rule_sees_through_quotes_wrappers_and_shells(command: str) -> None:
    deny = PermissionRule.parse("deny", "execute(rm *)")
    assert deny.matches("execute", {"command": command}, Path(".")), command


@pytest.mark.parametrize("command", ["ls -la", "git commit -m 'rm old files'", "echo $HOME", "grep -r rm .",
                                     "git log HEAD~1", "cat <<'EOF' > x"])
def test_a_deny_rule_does_not_match_what_merely_mentions_it(command: str) -> None:
    deny = PermissionRule.parse("deny", "execute(rm *)")
    # (a here-document is opaque, so it is matched: the last one shows the rule fails closed)
    assert deny.matches("execute", {"command": command}, Path(".")) is command.startswith("cat <<")


def test_words_are_what_bash_passes() -> None:
    assert parse_command("\"git\" 'status' --short").parts == [["git", "status", "--short"]]
    assert parse_command("echo \"a\\\"b\" c\\ d 'e f'").parts == [["echo", 'a"b', "c d", "e f"]]
    assert parse_command("A=1 make -j2 && ls | wc -l").parts == [["A=1", "make", "-j2"], ["ls"], ["wc", "-l"]]
    parsed = parse_command("echo ~/x $HOME {a,b}")
    assert not parsed.grantable and parsed.commands[0].known == 1  # only `echo` is known before it runs


# -- bash as the oracle -----------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_parser_agrees_with_bash_on_random_command_lines() -> None:
    """A bounded sample (tests/shell_oracle.py runs longer: SHELL_FUZZ_CASES=20000)."""
    seed = int(os.environ.get("SHELL_FUZZ_SEED", str(random.randrange(1 << 30))))
    total, checked, failures = fuzz(int(os.environ.get("SHELL_FUZZ_CASES", "1500")), seed)
    assert checked >= total // 20, f"seed {seed}: only {checked} of {total} lines were understood"
    assert not failures, f"seed {seed}: " + "\n".join(f"{text!r}: {problem}" for text, problem in failures[:10])


def test_the_grammar_is_not_loaded_before_the_first_check() -> None:
    code = ("import sys, agentica_cli.cli.app, agentica_cli.app.permissions.approvals, "
            "agentica_cli.app.permissions.permission_rules, agentica_cli.app.permissions.shell_parts; "
            "print('tree_sitter' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr
