"""The approval contract between the loop and a UI: `approve(call) -> Decision`.

The loop calls the hook for `is_destructive` calls and waits for it; the UI decides how to
ask (a terminal prompt, a policy, a web dialog). The loop never asks anyone itself.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agentica_cli.tools.base import FunctionCall
from agentica_cli.tools.callables import require_positional


@dataclass(frozen=True)
class Decision:
    allowed: bool
    message: str = ""  # for a denial: why, or what the user wants instead; the model reads it

    @classmethod
    def allow(cls) -> Decision:
        return cls(True)

    @classmethod
    def deny(cls, message: str = "") -> Decision:
        return cls(False, message)


ApproveHook = Callable[[FunctionCall], "Decision | Awaitable[Decision]"]


@runtime_checkable
class ApprovalPolicy(Protocol):
    """An approve hook that is a whole permission policy (agentica_cli.app.permissions'
    PermissionPolicy): besides deciding a destructive call, it says which other calls it must
    see, answers a PreToolUse hook's "ask" and rechecks a hook's "allow". The executor uses
    these only when the hook has all of them; a plain `ApproveHook` callable is made one by
    `as_approval_policy` (a `CallableApproval`) when it is given to the agent."""

    def __call__(self, call: FunctionCall) -> Awaitable[Decision]: ...

    def needs_review(self, call: FunctionCall) -> bool:
        """Whether a call the loop would run unasked (not destructive) needs a decision."""
        ...

    def confirm(self, call: FunctionCall, reason: str) -> Awaitable[Decision]:
        """A PreToolUse hook said "ask" (with `reason`): the user decides, whatever the mode."""
        ...

    def hook_allowed(self, call: FunctionCall) -> Awaitable[Decision]:
        """A hook said "allow": what the policy still refuses or asks (deny rules, plan mode,
        leaving the sandbox)."""
        ...


APPROVE_SHAPE = "approve(call) -> Decision (sync or async)"
POLICY_MEMBERS = ("needs_review", "confirm", "hook_allowed")


class CallableApproval:
    """A plain `approve(call)` callable as an ApprovalPolicy: it decides destructive calls and
    a hook's "ask" (a person answers it, so the loop fires the Notification hooks first); it
    reviews no other call, and a hook's "allow" stands."""

    def __init__(self, decide: ApproveHook):
        require_positional(decide, 1, APPROVE_SHAPE)
        self.decide = decide

    async def __call__(self, call: FunctionCall) -> Decision:
        value = self.decide(call)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, Decision):
            return value
        if isinstance(value, bool):
            return Decision(value)
        raise TypeError(f"approve returned {type(value).__name__}; expected {APPROVE_SHAPE} (or a bool)")

    def needs_review(self, call: FunctionCall) -> bool:
        return False

    async def confirm(self, call: FunctionCall, reason: str) -> Decision:
        return await self(call)

    async def hook_allowed(self, call: FunctionCall) -> Decision:
        return Decision.allow()


def as_approval_policy(approve: ApproveHook | ApprovalPolicy | None) -> ApprovalPolicy | None:
    """`Agent(approve=...)` as the policy the executor calls: a whole ApprovalPolicy as it is, a
    plain callable wrapped; TypeError for what is neither (or a policy missing some members)."""
    if approve is None or isinstance(approve, ApprovalPolicy):
        return approve
    has = [name for name in POLICY_MEMBERS if callable(getattr(approve, name, None))]
    if has:
        missing = ", ".join(name for name in POLICY_MEMBERS if name not in has)
        raise TypeError(f"approve= has {', '.join(has)} but not {missing}: an ApprovalPolicy needs "
                        f"__call__(call), needs_review(call), confirm(call, reason) and hook_allowed(call); "
                        f"a plain hook is {APPROVE_SHAPE}")
    return CallableApproval(approve)
