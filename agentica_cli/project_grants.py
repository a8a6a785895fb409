""""Always in this project" answers: kept per project in a file of the user's, not the project's.

A repository cannot ship them (a project's own [permissions] wait for the trust question, and a
cloned `.claude/settings.local.json` is the repository's too): they live in
`~/.agentica/project_permissions.json`, `{"/real/path/of/project": [grant, ...]}`, 0600, where
a grant is `{"tool": "execute", "words": ["pytest"], "exact": false, "domain": ""}`. /permissions
lists them and revokes them; `agentica` in that folder (REPL or -p) applies them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict


class StoredGrant(TypedDict):
    tool: str
    words: list[str]
    exact: bool
    domain: str


FILE_NAME = "project_permissions.json"


def _key(work_dir: Path) -> str:
    return os.path.realpath(work_dir)


def _read(path: Path) -> dict[str, list[StoredGrant]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _valid(entry: object) -> StoredGrant | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("tool"), str):
        return None
    words = entry.get("words", [])
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return None
    return StoredGrant(tool=entry["tool"], words=list(words), exact=bool(entry.get("exact", False)),
                       domain=str(entry.get("domain", "") or ""))


def grants_file(home: Path | None = None) -> Path:
    from agentica_cli.private_files import agentica_home

    return (home or agentica_home()) / FILE_NAME


def load_project_grants(work_dir: Path, home: Path | None = None) -> list[StoredGrant]:
    """This project's saved grants (an unreadable or hand-broken file: none, never an error)."""
    entries = _read(grants_file(home)).get(_key(work_dir), [])
    found = [_valid(e) for e in entries] if isinstance(entries, list) else []
    return [g for g in found if g is not None]


def save_project_grants(work_dir: Path, grants: list[StoredGrant], home: Path | None = None) -> Path:
    """Replace this project's grants (other projects' are kept), atomically; returns the file."""
    from agentica_cli.private_files import private_dir

    path = grants_file(home)
    data = _read(path)
    if grants:
        data[_key(work_dir)] = grants
    else:
        data.pop(_key(work_dir), None)
    private_dir(path.parent)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(temporary, path)
    return path
