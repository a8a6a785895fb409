"""Start-up checks and notices, as data, for every front end.

`check_config` runs every check of the loaded settings that can stop a session before it
starts (MCP tables, toolkits, model limits, checkpoints, the sandbox backend) and raises
`ConfigError` with the one message each front end shows: `-p` and the REPL as "config error: ..."
and exit code 2, ACP as a JSON-RPC invalid-params error carrying the same text. It also builds
the run's sandbox, once (`settings.command_sandbox`).

`untrusted_notices` says what an untrusted project sets that this run ignores (project config
keys, its .mcp.json servers, its commands, agents, skills and hooks): -p writes it to stderr,
ACP to the editor's log and the session's first thoughts; the REPL asks about trust instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentica_cli.app.settings.config import ConfigError, Settings

__all__ = ["ConfigError", "Untrusted", "check_config", "untrusted", "untrusted_notices"]


def check_config(settings: Settings, work_dir: Path, allowed_dirs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Every start-up check of `settings`, in the order the user would fix them; a problem is a
    ConfigError naming the key and where it was set. Builds the run's sandbox (settings.command_sandbox)."""
    from agentica_cli.app.checkpoint_setup import checkpoint_options
    from agentica_cli.app.runtime import check_model_options, check_model_timeouts
    from agentica_cli.app.sandbox_settings import sandbox_for
    from agentica_cli.app.settings.config import check_mcp_servers
    from agentica_cli.app.toolkit_setup import check_toolkits

    check_mcp_servers(settings)
    check_toolkits(settings)
    check_model_timeouts(settings)
    check_model_options(settings)
    checkpoint_options(settings)
    sandbox_for(settings, work_dir, allowed_dirs)


@dataclass(frozen=True)
class Untrusted:
    """What an untrusted project sets that this run leaves out."""

    project_file: Path | None
    keys: list[str] = field(default_factory=list)  # its config file's keys
    mcp_json_file: Path | None = None
    mcp_servers: list[str] = field(default_factory=list)  # its .mcp.json servers
    extensions: list[str] = field(default_factory=list)  # "commands", "agents", "skills", "hooks"

    def __bool__(self) -> bool:
        return bool(self.keys or self.mcp_servers or self.extensions)


def untrusted(settings: Settings, work_dir: Path) -> Untrusted:
    from agentica_cli.app.extension_setup import untrusted_project_extensions

    return Untrusted(settings.project_file, sorted(settings.held_back), settings.mcp_json_file,
                     list(settings.mcp_json_held_back), untrusted_project_extensions(work_dir))


def untrusted_notices(settings: Settings, work_dir: Path, how_to_trust: str = "run with --trust") -> list[str]:
    """One line per thing an untrusted project sets and this run ignores (none once trusted)."""
    from agentica_cli.app.safe_text import safe_text

    found = untrusted(settings, work_dir)
    lines = [f"ignoring '{key}' from untrusted {found.project_file} ({how_to_trust} to use it)" for key in found.keys]
    if found.mcp_servers:
        lines.append(f"ignoring the MCP servers of untrusted {found.mcp_json_file} ({', '.join(found.mcp_servers)}) "
                     f"({how_to_trust} to use them)")
    if found.extensions:
        lines.append(f"ignoring this untrusted project's {', '.join(found.extensions)} ({how_to_trust} to use them)")
    return [safe_text(line, keep_newlines=False) for line in lines]
