"""The callbacks a user hands the library are checked where they enter (issue 27: informal
contracts). Each documented shape (docs/library.md: approve, hooks, ToolHooks, guardrails; the
permission policy's ask and on_refusal) still works; a callable of no documented shape is a
TypeError at construction that names the expected signature, never a TypeError caught (or a
silently ignored hook) in the middle of a run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentica_cli.agent import Agent, Decision, ToolHooks
from agentica_cli.agent.approval import CallableApproval
from agentica_cli.agent.hooks import AgentHook, HookList
from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy, Reason, Verdict
from agentica_cli.testing.fake_model import ScriptedModel
from agentica_cli.testing.turns import call, text, tool_calls
from agentica_cli.tools import ToolInputGuardrail, ToolOutputGuardrail, tool
from agentica_cli.tools.base import Function, FunctionCall


@tool(is_destructive=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"Deleted {path}"


def _one_call_model() -> ScriptedModel:
    return ScriptedModel([tool_calls(call("delete_file", {"path": "a.txt"}, id="c1")), text("done")])


def _tool_result(agent: Agent) -> str:
    return next(m["content"] for m in agent.messages if m.get("role") == "tool")


def _function_call() -> FunctionCall:
    fn = Function.from_callable(delete_file)
    made = FunctionCall(fn, "c1", '{"path": "a.txt"}')
    assert made.parse_arguments()
    return made


# -- approve ------------------------------------------------------------------------------


def test_the_documented_approve_shapes_decide_the_call() -> None:
    def deny(made: Any) -> Decision:
        return Decision.deny("not that one")

    async def allow(made: Any) -> Decision:
        return Decision.allow()

    denied = Agent(_one_call_model(), tools=[delete_file], approve=deny)
    denied.run_sync("go")
    assert _tool_result(denied) == "not that one"
    allowed = Agent(_one_call_model(), tools=[delete_file], approve=allow)
    allowed.run_sync("go")
    assert _tool_result(allowed) == "Deleted a.txt"
    assert isinstance(allowed.approve, CallableApproval)  # wrapped once, when it was given


def test_approve_that_takes_no_call_fails_at_construction() -> None:
    with pytest.raises(TypeError, match=r"approve\(call\) -> Decision"):
        Agent(_one_call_model(), approve=lambda: True)  # type: ignore[arg-type,misc]
    with pytest.raises(TypeError, match=r"approve\(call\) -> Decision.*not callable"):
        Agent(_one_call_model(), approve="yes")  # type: ignore[arg-type]
    agent = Agent(_one_call_model())
    with pytest.raises(TypeError, match=r"approve\(call\)"):
        agent.approve = lambda first, second: True  # type: ignore[assignment]  # set later: checked too


def test_half_a_policy_is_refused_rather_than_used_as_a_plain_callable() -> None:
    class HalfPolicy:
        async def __call__(self, made: Any) -> Decision:
            return Decision.allow()

        def needs_review(self, made: Any) -> bool:
            return True

    # Before, its needs_review was silently ignored (it lacked confirm and hook_allowed).
    with pytest.raises(TypeError, match="has needs_review but not confirm, hook_allowed"):
        Agent(_one_call_model(), approve=HalfPolicy())  # type: ignore[arg-type]


def test_an_approve_that_returns_something_else_denies_the_call() -> None:
    agent = Agent(_one_call_model(), tools=[delete_file], approve=lambda made: "sure")  # type: ignore[arg-type,return-value]
    agent.run_sync("go")
    result = _tool_result(agent)
    assert result.startswith("Permission denied: the approval check failed")
    assert "approve(call) -> Decision" in result


# -- hooks --------------------------------------------------------------------------------


def test_hook_objects_of_every_documented_shape_are_called() -> None:
    seen: list[str] = []

    class Blocker:  # sync before_tool_call returning a reason
        def before_tool_call(self, made: FunctionCall) -> str:
            seen.append("before")
            return "no deleting today"

    class Watcher:  # async after_tool_call and hook_event
        async def after_tool_call(self, made: FunctionCall) -> None:
            seen.append("after")

        async def hook_event(self, event: str, payload: dict[str, Any]) -> None:
            seen.append(event)

    agent = Agent(_one_call_model(), tools=[delete_file],
                  hooks=[Watcher(), Blocker(), ToolHooks(on_event=lambda event, payload: None)])
    assert all(isinstance(h, AgentHook) for h in agent.hooks)
    agent.run_sync("go")
    assert _tool_result(agent) == "Blocked: the call to 'delete_file' was not run (no deleting today)."
    assert seen == ["SessionStart", "UserPromptSubmit", "PreToolUse", "before", "Stop"]
    allowed = Agent(_one_call_model(), tools=[delete_file], hooks=Watcher())  # one hook, not in a list
    allowed.run_sync("go")
    assert _tool_result(allowed) == "Deleted a.txt" and seen[-3:] == ["PostToolUse", "after", "Stop"]


def test_a_hook_of_no_documented_shape_fails_at_construction() -> None:
    model = _one_call_model()
    with pytest.raises(TypeError, match=r"before_tool_call\(call\), after_tool_call\(call\) and/or hook_event"):
        Agent(model, hooks=lambda made: None)  # a bare function was ignored before
    with pytest.raises(TypeError, match="got object"):
        Agent(model, hooks=[object()])

    class NoCall:
        def before_tool_call(self) -> None: ...

    with pytest.raises(TypeError, match=r"NoCall\.before_tool_call\(call\).*got .*before_tool_call\(\)"):
        Agent(model, hooks=NoCall())

    class OneArgEvent:
        def hook_event(self, event: str) -> None: ...

    with pytest.raises(TypeError, match=r"hook_event\(event: str, payload: dict\)"):
        Agent(model, hooks=[OneArgEvent()])


def test_hooks_added_later_are_checked_when_added() -> None:
    agent = Agent(_one_call_model())
    assert isinstance(agent.hooks, HookList)
    watcher = ToolHooks(after=lambda made: None)
    agent.hooks.append(watcher)
    assert watcher in agent.hooks and agent.hooks[0].source is watcher
    with pytest.raises(TypeError, match="an agent hook must be"):
        agent.hooks.append(42)
    with pytest.raises(TypeError, match="an agent hook must be"):
        agent.hooks += ["not a hook"]
    with pytest.raises(TypeError, match="an agent hook must be"):
        agent.hooks.insert(0, None)
    assert len(agent.hooks) == 1


def test_tool_hooks_check_their_functions() -> None:
    with pytest.raises(TypeError, match=r"ToolHooks\(before=fn\): fn\(call\)"):
        ToolHooks(before=lambda: None)  # type: ignore[arg-type,misc]
    with pytest.raises(TypeError, match=r"ToolHooks\(on_event=fn\): fn\(event: str, payload: dict\)"):
        ToolHooks(on_event=lambda event: None)  # type: ignore[arg-type,misc]
    ToolHooks(before=print, after=lambda made, *rest: None, on_event=lambda *args: None)  # these fit


# -- guardrails -----------------------------------------------------------------------------


def test_guardrails_check_their_function_at_construction() -> None:
    with pytest.raises(TypeError, match=r"check\(tool_name: str, args: dict\) -> bool \| str"):
        ToolInputGuardrail(lambda args: True)  # type: ignore[arg-type,misc]
    with pytest.raises(TypeError, match=r"check\(tool_name: str, result: str\) -> bool \| str"):
        ToolOutputGuardrail(lambda result: result)  # type: ignore[arg-type,misc]
    verdict = asyncio.run(ToolInputGuardrail(lambda name, args: name != "delete_file").run("delete_file", {}))
    assert not verdict.allowed


# -- the permission policy's ask and on_refusal ---------------------------------------------


def test_policy_ask_in_either_shape_is_asked(tmp_path: Path) -> None:
    seen: list[tuple[Any, ...]] = []

    def with_verdict(made: Any, verdict: Verdict) -> Answer:
        seen.append(("two", verdict.why))
        return Answer("once")

    async def call_only(made: Any) -> Answer:
        seen.append(("one", made.name))
        return Answer("no")

    assert asyncio.run(PermissionPolicy("default", tmp_path, ask=with_verdict)(_function_call())).allowed
    assert not asyncio.run(PermissionPolicy("default", tmp_path, ask=call_only)(_function_call())).allowed
    assert seen == [("two", Reason.PLAIN), ("one", "delete_file")]


def test_policy_ask_of_no_shape_fails_when_given(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"ask\(call, verdict\) -> Answer"):
        PermissionPolicy("default", tmp_path, ask=lambda: Answer("once"))
    policy = PermissionPolicy("default", tmp_path)
    with pytest.raises(TypeError, match=r"ask\(call, verdict\) -> Answer"):
        policy.ask = lambda a, b, c: Answer("once")  # assigned later (mcp serve, the SDK protocol): checked too


def test_on_refusal_in_either_shape_is_told_once(tmp_path: Path) -> None:
    told: list[tuple[Any, ...]] = []
    for callback in (lambda name, mode, why: told.append((name, mode, why)),
                     lambda name, mode: told.append((name, mode))):
        policy = PermissionPolicy("plan", tmp_path, on_refusal=callback)
        assert not asyncio.run(policy(_function_call())).allowed
    assert told == [("delete_file", "plan", Reason.PLAN), ("delete_file", "plan")]
    with pytest.raises(TypeError, match=r"on_refusal\(name, mode, why\) -> None"):
        PermissionPolicy("plan", tmp_path, on_refusal=lambda name: None)


def test_a_type_error_inside_on_refusal_is_not_mistaken_for_an_old_shape(tmp_path: Path) -> None:
    # Before, any TypeError from the three-argument call retried it with two arguments: a bug
    # inside the callback ran it twice (and hid the bug behind a second, misleading call).
    calls: list[tuple[Any, ...]] = []

    def broken(*args: Any) -> None:
        calls.append(args)
        raise TypeError("a bug in the callback")

    policy = PermissionPolicy("plan", tmp_path, on_refusal=broken)
    with pytest.raises(TypeError, match="a bug in the callback"):
        asyncio.run(policy(_function_call()))
    assert calls == [("delete_file", "plan", Reason.PLAN)]
