"""Where a project is: its root and the folders its own files are looked for in. Standard
library only, so the config loader, the trust list and the `.mcp.json` reader share it."""

from __future__ import annotations

from pathlib import Path


def find_git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def project_root(work_dir: Path) -> Path:
    """The git root, or the work dir outside git: what trust is given to."""
    return find_git_root(work_dir) or work_dir


def project_folders(work_dir: Path) -> list[Path]:
    """Where a project's files are looked for, nearest first: the work dir and its parents
    up to the git root (just the work dir outside git)."""
    root = find_git_root(work_dir)
    if root is None:
        return [work_dir]
    return [work_dir, *(p for p in work_dir.parents if p == root or root in p.parents)]
