"""Checking a callback's shape where it enters (a constructor), not when it is first called.

A hook, a guardrail or an approval callable that takes the wrong arguments would otherwise
fail in the middle of a run, where the loop can only turn the TypeError into a blocked call.
`require_positional` raises at construction with the signature the caller should have written.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C callable without one: nothing to check
        return None


def accepts_positional(fn: Callable[..., Any], count: int) -> bool:
    """Whether `fn` can be called with `count` positional arguments (True when it cannot be told)."""
    signature = _signature(fn)
    if signature is None:
        return True
    try:
        signature.bind(*range(count))
    except TypeError:
        return False
    return True


def require_positional(fn: object, count: int, expected: str) -> None:
    """TypeError (naming `expected`, e.g. "approve(call) -> Decision") unless `fn` is callable
    with `count` positional arguments."""
    if not callable(fn):
        raise TypeError(f"expected {expected}, got {type(fn).__name__} {fn!r}, which is not callable")
    if not accepts_positional(fn, count):
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        raise TypeError(f"expected {expected}, got {name}{_signature(fn)}")
