"""Which project folders the user trusts to start programs from their own config.

A project's `.agentica/config.toml` or `.mcp.json` may define MCP servers (programs agentica
would start), and its config may loosen permissions; a cloned repository must not do that
behind the user's back. The user trusts a folder once (asked in the REPL, or `--trust`), and
it is remembered in ~/.agentica/trusted_projects.json.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentica_cli.app.settings.project_paths import project_root
from agentica_cli.private_files import agentica_home, open_private

__all__ = ["is_trusted", "project_root", "trust", "trusted_projects"]


def _store() -> Path:
    return agentica_home() / "trusted_projects.json"


def trusted_projects() -> list[str]:
    try:
        data = json.loads(_store().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [p for p in data.get("trusted", []) if isinstance(p, str)] if isinstance(data, dict) else []


def is_trusted(work_dir: Path) -> bool:
    return str(project_root(work_dir).resolve()) in trusted_projects()


def trust(work_dir: Path) -> Path:
    root = str(project_root(work_dir).resolve())
    known = trusted_projects()
    if root not in known:
        known.append(root)
        path = _store()
        tmp = path.with_suffix(".tmp")
        with open_private(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"trusted": known}, indent=2) + "\n")
        tmp.replace(path)
    return project_root(work_dir)
