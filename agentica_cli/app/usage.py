"""One token counter per session, for every front end's /cost (and the REPL's status line).

Every `usage` event counts, a sub-agent's (`source` "task:...") included: the task tool's
requests are paid for like the agent's own. The stored session keeps each request's usage
(a `{"type": "usage", ...}` line, app/sessions.py), so a session continued with --continue,
--resume or ACP's session/load counts what earlier processes used too.
"""

from __future__ import annotations

from typing import Any, Protocol

KEYS = ("input_tokens", "output_tokens", "total_tokens")


class UsageStore(Protocol):
    """Where a session's usage is kept (app/sessions.Session)."""

    usage: dict[str, int]

    def record_usage(self, usage: dict[str, int]) -> None: ...


class UsageCounter(dict[str, int]):
    """The session's tokens so far, as a plain mapping of KEYS (what the status line command
    and its JSON get), counted by `add` and written through to `store`."""

    def __init__(self, earlier: dict[str, int] | None = None, store: UsageStore | None = None):
        super().__init__({key: int((earlier or {}).get(key, 0) or 0) for key in KEYS})
        self.store = store

    @classmethod
    def for_session(cls, stored: UsageStore | None) -> UsageCounter:
        """A counter starting from what `stored` (a sessions.Session, or None) recorded."""
        return cls(getattr(stored, "usage", None), stored)

    def add(self, event: Any) -> None:
        """Count one `usage` event (anything else is ignored)."""
        if getattr(event, "type", "") != "usage":
            return
        counted = {key: int(getattr(event, key, 0) or 0) for key in KEYS}
        for key, value in counted.items():
            self[key] += value
        if self.store is not None:
            self.store.record_usage(counted)

    def describe(self) -> str:
        """/cost, in every front end."""
        return (f"tokens this session: {self['input_tokens']:,} in · {self['output_tokens']:,} out · "
                f"{self['total_tokens']:,} total")
