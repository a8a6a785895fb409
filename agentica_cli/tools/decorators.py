"""`@tool`: mark a function as a tool with a name, description and flags."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

from agentica_cli.tools.base import TOOL_SPEC_ATTR, ToolSpec

F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: bool = False,
    is_read_only: bool = False,
    is_destructive: bool = False,
    stop_after_tool_call: bool = False,
    show_result: bool = False,
    sanitize_arguments: bool = True,
) -> Callable[[F], F]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    concurrency_safe: bool = False,
    is_read_only: bool = False,
    is_destructive: bool = False,
    stop_after_tool_call: bool = False,
    show_result: bool = False,
    sanitize_arguments: bool = True,
) -> Any:
    """Usable bare (`@tool`) or with options (`@tool(name=..., concurrency_safe=True)`).

    The function itself is returned, unchanged and still callable (an `async def` stays a
    coroutine function); the options ride along as an attribute that `Function.from_callable`
    reads when the function is given to an agent.
    """
    spec = ToolSpec(
        name=name,
        description=description,
        concurrency_safe=concurrency_safe,
        is_read_only=is_read_only,
        is_destructive=is_destructive,
        stop_after_tool_call=stop_after_tool_call,
        show_result=show_result,
        sanitize_arguments=sanitize_arguments,
    )

    def mark(f: F) -> F:
        if not callable(f):
            raise TypeError(f"@tool needs a callable, got {type(f).__name__}")
        setattr(f, TOOL_SPEC_ATTR, spec)
        return f

    return mark(fn) if fn is not None else mark
