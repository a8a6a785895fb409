"""The approval contract between the loop and a UI: `approve(call) -> Decision`.

The loop calls the hook for `is_destructive` calls and waits for it; the UI decides how to
ask (a terminal prompt, a policy, a web dialog). The loop never asks anyone itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

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
