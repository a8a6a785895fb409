"""The permission policy with the command sandbox: fewer prompts where the sandbox makes a
command as safe as an edit, never weaker ones; escalation out of it is always asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentica_cli.app.permissions.approvals import Answer, Grant, PermissionPolicy, Verdict, refusal_hint
from agentica_cli.app.permissions.permission_rules import PermissionRule
from agentica_cli.sandbox import Sandbox, SandboxPolicy, best_backend
from agentica_cli.tools.base import Function, FunctionCall

pytestmark = pytest.mark.skipif(best_backend() is None, reason="no sandbox backend (bubblewrap or Landlock) here")


def execute(command: str, sandbox: bool = True, network: bool = False, reason: str = "") -> str:
    """Run a command.

    Args:
        command: the command
        sandbox: confined
        network: with the network
        reason: why not
    """
    return "ok"


def call(**args: object) -> FunctionCall:
    made = FunctionCall(Function.from_callable(execute, is_destructive=True), "c1", dict(args))
    assert made.parse_arguments()
    return made


def policy(mode: str, work: Path, *, network: bool = False, sandbox_mode: str = "workspace-write",
           **kwargs: object) -> PermissionPolicy:
    made = PermissionPolicy(mode, work, **kwargs)  # type: ignore[arg-type]
    made.sandbox = Sandbox(SandboxPolicy.build(sandbox_mode, work, network=network))
    return made


def test_accept_edits_runs_a_sandboxed_command_without_asking(tmp_path: Path) -> None:
    assert policy("accept-edits", tmp_path).evaluate(call(command="pytest -q")).kind == "allow"


def test_without_a_confining_sandbox_accept_edits_still_asks(tmp_path: Path) -> None:
    unconfined = PermissionPolicy("accept-edits", tmp_path)
    assert unconfined.evaluate(call(command="pytest -q")).kind == "ask"
    off = policy("accept-edits", tmp_path, sandbox_mode="off")
    assert off.evaluate(call(command="pytest -q")).kind == "ask"
    networked = policy("accept-edits", tmp_path, network=True)  # it could send the project away
    assert networked.evaluate(call(command="pytest -q")).kind == "ask"


def test_default_mode_still_asks_and_rules_and_sensitive_paths_come_first(tmp_path: Path) -> None:
    assert policy("default", tmp_path).evaluate(call(command="pytest -q")).kind == "ask"
    rules = [PermissionRule.parse("deny", "execute(rm *)", ""), PermissionRule.parse("ask", "execute(git push *)", "")]
    strict = policy("accept-edits", tmp_path, rules=rules)
    assert strict.evaluate(call(command="rm -rf build")).kind == "deny"
    assert strict.evaluate(call(command="git push origin main")).why == "rule"
    sensitive = strict.evaluate(call(command="echo x >> .git/hooks/pre-commit"))
    assert (sensitive.kind, sensitive.why) == ("ask", "sensitive")


@pytest.mark.parametrize("mode", ["default", "accept-edits"])
def test_escalation_is_asked_with_its_reason_in_every_mode(tmp_path: Path, mode: str) -> None:
    made = policy(mode, tmp_path, always_allow=["execute"])  # even an allow rule does not skip it
    made.grants.append(Grant("execute"))  # nor a session grant
    verdict = made.evaluate(call(command="docker ps", sandbox=False, reason="needs the docker socket"))
    assert verdict == Verdict("ask", why="escalation", note="runs OUTSIDE the sandbox: needs the docker socket")


def test_escalation_reason_is_shown_safely(tmp_path: Path) -> None:
    verdict = policy("default", tmp_path).evaluate(call(command="x", sandbox=False, reason="ok\x1b[2J\nnext"))
    assert "\x1b" not in verdict.note and "\n" not in verdict.note


def test_escalation_under_auto_is_refused_and_says_how_to_lift_the_sandbox(tmp_path: Path) -> None:
    made = policy("auto", tmp_path, explicit_auto=True)
    verdict = made.evaluate(call(command="curl http://127.0.0.1:1", sandbox=False, reason="fetch"))
    assert verdict.kind == "deny" and verdict.why == "escalation"
    assert "--sandbox off" in verdict.message
    assert "--sandbox off" in refusal_hint("execute", "auto", "escalation")
    # an ordinary sandboxed command still runs under auto
    assert made.evaluate(call(command="pytest -q")).kind == "allow"


def test_escalation_nobody_can_answer_is_refused(tmp_path: Path) -> None:
    made = policy("accept-edits", tmp_path)  # no `ask`: a -p run
    decision = asyncio.run(made(call(command="make deploy", sandbox=False, reason="deploy")))
    assert not decision.allowed
    assert "outside the sandbox" in decision.message and "--sandbox off" in decision.message


def test_an_always_answer_to_an_escalation_grants_nothing(tmp_path: Path) -> None:
    made = policy("default", tmp_path, ask=lambda c, v: Answer("always"))
    assert asyncio.run(made(call(command="make deploy", sandbox=False, reason="deploy"))).allowed
    assert made.grants == []
    assert made.evaluate(call(command="make deploy", sandbox=False, reason="again")).why == "escalation"


def test_sandbox_false_without_a_confining_sandbox_is_an_ordinary_call(tmp_path: Path) -> None:
    off = policy("auto", tmp_path, sandbox_mode="off", explicit_auto=True)
    assert off.evaluate(call(command="ls", sandbox=False, reason="x")).kind == "allow"


def test_tools_listing_says_sandboxed_commands_run(tmp_path: Path) -> None:
    function = call(command="x").function
    assert policy("accept-edits", tmp_path).describe_tool(function) == (
        "runs in the sandbox; asks to run outside it or with network")
    assert PermissionPolicy("accept-edits", tmp_path).describe_tool(function) == "asks"


@pytest.mark.parametrize("mode", ["default", "accept-edits"])
def test_a_network_request_is_asked_with_its_reason_in_every_mode(tmp_path: Path, mode: str) -> None:
    made = policy(mode, tmp_path, always_allow=["execute"])
    made.grants.append(Grant("execute"))
    if not made.sandbox.network_confined:
        pytest.skip("this backend cannot keep the network out here (Landlock ABI < 4): nothing to ask")
    verdict = made.evaluate(call(command="pip download six", network=True, reason="fetch the wheel"))
    note = "uses the NETWORK (still sandboxed for files): fetch the wheel"
    assert verdict == Verdict("ask", why="network", note=note)
    assert made.evaluate(call(command="pip download six", network=False)).kind == "allow"  # the grant, as before
    raw = FunctionCall(call(command="x").function, "c2", {"command": "x", "network": "true"})  # not yet coerced
    assert made.evaluate(raw).why == "network"


def test_a_network_request_nobody_can_answer_is_refused_and_always_grants_nothing(tmp_path: Path) -> None:
    auto = policy("auto", tmp_path, explicit_auto=True)
    if not auto.sandbox.network_confined:
        pytest.skip("this backend cannot keep the network out here (Landlock ABI < 4): nothing to ask")
    verdict = auto.evaluate(call(command="curl http://127.0.0.1:1", network=True, reason="fetch"))
    assert (verdict.kind, verdict.why) == ("deny", "network") and "asked for the network" in verdict.message
    assert "network = true" in refusal_hint("execute", "auto", "network")
    no_one = policy("accept-edits", tmp_path)  # a -p run: no `ask`
    decision = asyncio.run(no_one(call(command="npm install", network=True, reason="deps")))
    assert not decision.allowed and "asked for the network" in decision.message
    always = policy("default", tmp_path, ask=lambda c, v: Answer("always"))
    assert asyncio.run(always(call(command="npm install", network=True, reason="deps"))).allowed
    assert always.grants == []


def test_no_network_question_when_the_config_lets_commands_connect(tmp_path: Path) -> None:
    networked = policy("auto", tmp_path, network=True, explicit_auto=True)
    assert networked.evaluate(call(command="npm install", network=True, reason="deps")).kind == "allow"
    off = policy("auto", tmp_path, sandbox_mode="off", explicit_auto=True)
    assert off.evaluate(call(command="npm install", network=True)).kind == "allow"
