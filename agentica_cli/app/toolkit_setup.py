"""Toolkits in the CLI: `--tools arxiv,weather` and `[tools] enable = [...]` add them to the session.

Names are checked at start-up (an unknown one is a config error); a toolkit whose extra or key is
missing is left out with a note, and /tools shows its state. Nothing here imports a toolkit's
heavy dependency: the classes import theirs when a tool runs.

A toolkit's arguments come from its `[toolkits.NAME]` table (`[toolkits.sql] url = ...`), plus
what the session knows: toolkits that read or write files get the project folder (and --add-dir
folders) as their roots, ShellTool the CLI's command sandbox, and generated images go to
<project>/outputs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.config import TOOLKIT_OPTIONS, ConfigError, Settings


def parse_tools_flag(values: list[str] | None) -> list[str] | None:
    """`--tools a,b --tools c` -> ["a", "b", "c"] (None when the flag was not given)."""
    if not values:
        return None
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def enabled_names(settings: Settings) -> list[str]:
    return list(settings.tools.enable)


def check_toolkits(settings: Settings) -> None:
    """Unknown toolkit names are a ConfigError naming where they came from."""
    from agentica_cli.toolkits.catalog import UnknownToolkitError, canonical_name

    for name in enabled_names(settings):
        try:
            short = canonical_name(name)
        except UnknownToolkitError as err:
            where = settings.sources.get("tools.enable", "config")
            raise ConfigError(f"{where}: 'tools.enable': {err}") from None
        check_options(short, settings.toolkit_options(short))


def check_options(name: str, options: dict[str, Any]) -> None:
    """A [toolkits.NAME] key the toolkit does not take, or a missing one it needs, is a ConfigError."""
    from agentica_cli.toolkits.catalog import toolkit_class

    accepted = inspect.signature(toolkit_class(name)).parameters
    unknown = [key for key in options if key not in accepted]
    if unknown:
        takes = ", ".join(k for k in accepted if k in TOOLKIT_OPTIONS) or "none"
        raise ConfigError(f"toolkits.{name}: unknown option(s) {', '.join(unknown)} (it takes: {takes})")
    if name == "sql" and not options.get("url"):
        raise ConfigError("the sql toolkit needs a database: set [toolkits.sql] url = \"sqlite:///app.db\"")


def build_enabled_toolkits(settings: Settings, report: Callable[[str], None] | None = None, *,
                           work_dir: Path | None = None, allowed_dirs: list[Path] | tuple[Path, ...] = (),
                           sandbox: Any = None, model: Any = None) -> list[Any]:
    """Instances of the enabled toolkits that are ready; a note for each one left out.

    Raises ConfigError for a [toolkits.NAME] option the toolkit does not take, or a missing one
    it needs (the sql toolkit's url)."""
    names = enabled_names(settings)
    if not names:
        return []
    from agentica_cli.toolkits.catalog import build_toolkits, canonical_name

    shared = {}
    for name in names:
        short = canonical_name(name)
        shared[short] = toolkit_arguments(short, settings, work_dir, list(allowed_dirs), sandbox, model)
    try:
        tools, statuses = build_toolkits(names, **shared)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"toolkits: {err}") from None
    for state in statuses:
        if not state.ready and report is not None:
            report(f"toolkit {state.name} not loaded: {state.problem}")
    return tools


def toolkit_arguments(name: str, settings: Settings, work_dir: Path | None, allowed_dirs: list[Path],
                      sandbox: Any, model: Any = None) -> dict[str, Any]:
    """The keyword arguments for toolkit `name`: its [toolkits.NAME] table and the session's folders
    (`model`: the session's model, whose provider and key a named vision model uses)."""
    from agentica_cli.toolkits.catalog import toolkit_class

    options: dict[str, Any] = settings.toolkit_options(name)
    check_options(name, options)
    accepted = inspect.signature(toolkit_class(name)).parameters
    if name == "sql" and work_dir is not None:
        options["url"] = _project_relative_sqlite(options["url"], work_dir)
    if name == "image_analysis" and isinstance(options.get("model"), str):
        if model is None:
            raise ConfigError("toolkits.image_analysis: model needs the session's model client")
        options["model"] = _vision_model(model, options["model"])
    if name == "shell" and sandbox is not None:
        options.setdefault("sandbox", sandbox)
    if work_dir is not None:
        defaults = {"work_dir": str(work_dir), "allowed_dirs": tuple(str(p) for p in allowed_dirs),
                    "output_dir": str(work_dir / "outputs")}
        for key, value in defaults.items():
            if key in accepted and not (key == "work_dir" and name == "code"):  # code: its own scratch folder
                options.setdefault(key, value)
    return options


def _vision_model(session_model: Any, model_id: str) -> Any:
    """[toolkits.image_analysis] model = "gpt-4o": that model, on the session's provider and key."""
    import copy

    model = copy.copy(session_model)
    model.id = model_id
    model.vision = True
    if hasattr(model, "_client"):  # its own HTTP client, not a share of the session's
        model._client = None
    return model


def _project_relative_sqlite(url: str, work_dir: Path) -> str:
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/") and url[len(prefix):] not in ("", ":memory:"):
        return prefix + str(work_dir / url[len(prefix):])
    return url


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
