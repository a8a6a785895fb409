"""The approval contract between the loop and a UI: `approve(call) -> Decision`.

The loop calls the hook for `is_destructive` calls and waits for it; the UI decides how to
ask (a terminal prompt, a policy, a web dialog). The loop never asks anyone itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agentica_cli.tools.base import FunctionCall


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
    these only when the hook has all of them; a plain `ApproveHook` callable just decides."""

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
