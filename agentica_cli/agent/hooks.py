"""Lifecycle hooks around tool calls, for library users (logging, metrics, policies).

A hook object has `before_tool_call(call)` and/or `after_tool_call(call)`, sync or async;
`call` is the FunctionCall with validated `.args` (and, after, `.result` / `.error`).
`before_tool_call` returning False (or a string, the reason) keeps the call from running;
one that raises blocks it too: a broken check must not let a call through.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from agentica_cli.tools.base import FunctionCall

BeforeHook = Callable[[FunctionCall], Any]
AfterHook = Callable[[FunctionCall], Any]


class ToolHooks:
    """Hooks from plain functions: `ToolHooks(before=log_call, after=record_result)`."""

    def __init__(self, before: BeforeHook | None = None, after: AfterHook | None = None):
        self._before = before
        self._after = after

    async def before_tool_call(self, call: FunctionCall) -> Any:
        return await call_maybe_async(self._before, call) if self._before else None

    async def after_tool_call(self, call: FunctionCall) -> Any:
        return await call_maybe_async(self._after, call) if self._after else None


async def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


def as_hook_list(hooks: Any) -> list[Any]:
    if hooks is None:
        return []
    if isinstance(hooks, (list, tuple)):
        return list(hooks)
    return [hooks]
