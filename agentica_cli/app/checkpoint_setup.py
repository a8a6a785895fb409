"""The [checkpoints] settings, turned into the project's `Checkpoints` (or None when off)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.config import ConfigError, Settings


def checkpoint_options(settings: Settings) -> dict[str, Any]:
    """The [checkpoints] keys with their defaults; a negative number is a config error."""
    options: dict[str, Any] = dataclasses.asdict(settings.checkpoints)
    for key in ("max_file_size", "keep_sessions", "keep_days"):
        if not options[key] >= 0:
            where = settings.sources.get(f"checkpoints.{key}", "config")
            raise ConfigError(f"{where}: 'checkpoints.{key}' must be >= 0, got {options[key]}")
    return options


def checkpoints_from_settings(settings: Settings, work_dir: Path, session_id: str | None = None) -> Any:
    """The project's Checkpoints for `session_id` (None: a throwaway id), or None when
    [checkpoints] enabled = false. Without git: FileBackups (the file tools' edits only)."""
    options = checkpoint_options(settings)
    if not options["enabled"]:
        return None
    from agentica_cli.checkpoints import Checkpoints, git_available

    if not git_available():
        from agentica_cli.checkpoints.backups import FileBackups

        return FileBackups(work_dir, session_id=session_id)
    return Checkpoints(work_dir, session_id=session_id, max_file_size=int(options["max_file_size"]),
                       keep_sessions=int(options["keep_sessions"]), keep_days=float(options["keep_days"]))


def attach_checkpoints(agent: Any, checkpoints: Any) -> Any:
    """Give the agent its checkpoints; file backups (no git) also watch the file tools'
    calls as a hook. Returns `checkpoints`."""
    agent.checkpoints = checkpoints
    from agentica_cli.checkpoints.backups import FileBackups

    if isinstance(checkpoints, FileBackups) and checkpoints not in agent.hooks:
        agent.hooks.append(checkpoints)
    return checkpoints
