"""Toolkits in the CLI: `--tools arxiv,weather` and `[tools] enable = [...]` add them to the session.

Names are checked at start-up (an unknown one is a config error); a toolkit whose extra or key is
missing is left out with a note, and /tools shows its state. Nothing here imports a toolkit's
heavy dependency: the classes import theirs when a tool runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentica_cli.cli.config import ConfigError, Settings


def parse_tools_flag(values: list[str] | None) -> list[str] | None:
    """`--tools a,b --tools c` -> ["a", "b", "c"] (None when the flag was not given)."""
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def enabled_names(settings: Settings) -> list[str]:
    return list(settings.get("tools.enable") or [])


def check_toolkits(settings: Settings) -> None:
    """Unknown toolkit names are a ConfigError naming where they came from."""
    from agentica_cli.toolkits.catalog import UnknownToolkitError, canonical_name

    for name in enabled_names(settings):
        try:
            canonical_name(name)
        except UnknownToolkitError as err:
            where = settings.sources.get("tools.enable", "config")
            raise ConfigError(f"{where}: 'tools.enable': {err}") from None


def build_enabled_toolkits(settings: Settings, report: Callable[[str], None] | None = None) -> list[Any]:
    """Instances of the enabled toolkits that are ready; a note for each one left out."""
    names = enabled_names(settings)
    if not names:
        return []
    from agentica_cli.toolkits.catalog import build_toolkits

    tools, statuses = build_toolkits(names)
    for state in statuses:
        if not state.ready and report is not None:
            report(f"toolkit {state.name} not loaded: {state.problem}")
    return tools


def status_lines(settings: Settings) -> list[str]:
    """One line per enabled toolkit for /tools: name, class, state."""
    names = enabled_names(settings)
    if not names:
        return []
    from agentica_cli.toolkits.catalog import status

    lines = []
    for name in names:
        try:
            state = status(name)
        except ValueError as err:
            lines.append(f"  {name:<12} {err}")
            continue
        lines.append(f"  {state.name:<12} {state.class_name:<18} {'loaded' if state.ready else 'not loaded'}: "
                     f"{state.describe()}")
    return lines
