"""Checks around tool calls: block a call before it runs, or block/replace its result.

A guardrail that raises counts as a block (fail closed): a broken safety check must not
silently let a call through.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentica_cli.tools.callables import require_positional

InputCheck = Callable[[str, dict[str, Any]], Any]
OutputCheck = Callable[[str, str], Any]


@dataclass
class GuardrailVerdict:
    allowed: bool
    message: str = ""  # why it was blocked, or the replacement result
    replaced: bool = False


class _Failed:
    """The check raised: carries the message of the block it causes."""

    def __init__(self, message: str):
        self.message = message


async def _ask(fn: Callable[..., Any], name: str, *args: Any) -> Any:
    """The check's verdict, or `_Failed` when it raised (so the caller fails closed)."""
    try:
        value = await fn(*args) if inspect.iscoroutinefunction(fn) else fn(*args)
        if inspect.isawaitable(value):
            value = await value
        return value
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return _Failed(f"guardrail '{name}' failed ({type(exc).__name__}: {exc})")


def _name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


class _Guardrail:
    """A check and its name; SHAPE is the signature its check must have (checked when given)."""

    SHAPE = ""

    def __init__(self, check: Callable[..., Any], name: str | None = None):
        require_positional(check, 2, self.SHAPE)
        self.check = check
        self.name = name or _name(check)

    async def _answer(self, tool_name: str, value: Any) -> GuardrailVerdict | Any:
        """The check's answer; a GuardrailVerdict already where it raised (block) or passed."""
        verdict = await _ask(self.check, self.name, tool_name, value)
        if isinstance(verdict, _Failed):
            return GuardrailVerdict(False, verdict.message)
        if verdict is True or verdict is None:
            return GuardrailVerdict(True)
        return verdict


class ToolInputGuardrail(_Guardrail):
    """`check(tool_name, args) -> bool`; False blocks the call (a str return is the reason)."""

    SHAPE = "ToolInputGuardrail(check): check(tool_name: str, args: dict) -> bool | str"

    def __init__(self, check: InputCheck, name: str | None = None):
        super().__init__(check, name)

    async def run(self, tool_name: str, args: dict[str, Any]) -> GuardrailVerdict:
        verdict = await self._answer(tool_name, args)
        if isinstance(verdict, GuardrailVerdict):
            return verdict
        reason = verdict if isinstance(verdict, str) and verdict else f"guardrail '{self.name}'"
        return GuardrailVerdict(False, reason)


class ToolOutputGuardrail(_Guardrail):
    """`check(tool_name, result) -> bool | str`; False blocks, a string replaces the result."""

    SHAPE = "ToolOutputGuardrail(check): check(tool_name: str, result: str) -> bool | str"

    def __init__(self, check: OutputCheck, name: str | None = None):
        super().__init__(check, name)

    async def run(self, tool_name: str, result: str) -> GuardrailVerdict:
        verdict = await self._answer(tool_name, result)
        if isinstance(verdict, GuardrailVerdict):
            return verdict
        if isinstance(verdict, str):
            return GuardrailVerdict(True, verdict, replaced=True)
        return GuardrailVerdict(False, f"guardrail '{self.name}'")
