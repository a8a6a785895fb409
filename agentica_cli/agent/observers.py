"""Run observers: code that watches every run's events without being a front end.

Every front end (REPL, -p, ACP, batch, `mcp serve`) consumes `Agent.run_stream`; an observer
registered here sees the same events from all of them, in the order they are yielded, without
any front end knowing. OpenTelemetry (agentica_cli/telemetry) is one. An observer never breaks a
run: what it raises is swallowed, once reported on stderr.

    add_run_observer(factory)   # factory(agent) -> RunObserver | None, called as each run starts
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentica_cli.agent.events import Event


class RunObserver(Protocol):
    """Watches one run (one prompt): each event as it is yielded, then the end of the run."""

    def event(self, event: Event) -> None: ...

    def finished(self, error: BaseException | None) -> None:
        """The run is over: `error` is what ended it abnormally (a cancellation included)."""
        ...


class ObservedAgent(Protocol):
    """What a factory may read of the agent that starts a run."""

    session_id: str
    is_subagent: bool


ObserverFactory = Callable[[ObservedAgent], "RunObserver | None"]

_factories: list[ObserverFactory] = []
_reported: set[str] = set()


def add_run_observer(factory: ObserverFactory) -> None:
    if factory not in _factories:
        _factories.append(factory)


def remove_run_observer(factory: ObserverFactory) -> None:
    if factory in _factories:
        _factories.remove(factory)


def start_observers(agent: ObservedAgent) -> list[RunObserver]:
    """The observers of a run that starts now (none when nothing is registered: the common case)."""
    if not _factories:
        return []
    found: list[RunObserver] = []
    for factory in list(_factories):
        try:
            observer = factory(agent)
        except Exception as exc:
            _report(exc)
            continue
        if observer is not None:
            found.append(observer)
    return found


def notify(observers: list[RunObserver], event: Event) -> None:
    for observer in observers:
        try:
            observer.event(event)
        except Exception as exc:
            _report(exc)


def notify_finished(observers: list[RunObserver], error: BaseException | None) -> None:
    for observer in observers:
        try:
            observer.finished(error)
        except Exception as exc:
            _report(exc)


def _report(exc: Exception) -> None:
    """Said once per kind of failure: a broken exporter must not flood the terminal."""
    key = f"{type(exc).__name__}: {exc}"[:200]
    if key not in _reported:
        _reported.add(key)
        sys.stderr.write(f"agentica: a run observer failed (the run goes on): {key}\n")
