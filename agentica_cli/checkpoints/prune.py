"""Pruning: checkpoints never grow ~/.agentica without bound.

In a project's shadow repository, a session is forgotten (its journal, its index and its racy mark, its ref)
when it is not among the newest `keep_sessions` or was last used more than `keep_days`
ago; `git gc` then drops the snapshots nothing refers to any more. A whole project's shadow
repository goes when it was last used more than `keep_days` ago. A folder that is removed on
purpose (a worktree, by `agentica worktrees rm`) has its shadow repositories removed with it
(`forget_folder`): nothing can be restored into it any more.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from agentica_cli.checkpoints.shadow import ShadowRepo, checkpoints_root, racy_mark

# Objects younger than this survive gc even when unreferenced: another agentica may be
# between writing a snapshot and recording it in its journal.
GRACE = "1.hour.ago"


def _used(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def prune(repo: ShadowRepo, *, keep_sessions: int, keep_days: float, current: str = "") -> list[str]:
    """Forget old sessions here and old projects elsewhere; returns the sessions forgotten."""
    cutoff = time.time() - keep_days * 86400
    journals = sorted((repo.git_dir / "sessions").glob("*.json"), key=_used, reverse=True)
    gone: list[str] = []
    for rank, journal in enumerate(journals):
        session = journal.stem
        if session == current or (rank < keep_sessions and _used(journal) >= cutoff):
            continue
        journal.unlink(missing_ok=True)
        (repo.git_dir / f"index-{session}").unlink(missing_ok=True)
        racy_mark(repo.git_dir, f"index-{session}").unlink(missing_ok=True)
        repo.delete_ref(f"refs/agentica/{session}")
        gone.append(session)
    if gone:
        repo.git("gc", "--quiet", f"--prune={GRACE}", check=False)
    for other in checkpoints_root().iterdir():
        if other.is_dir() and other != repo.git_dir and _used(other / "HEAD") < cutoff:
            shutil.rmtree(other, ignore_errors=True)
    return gone


def forget_folder(folder: Path) -> list[Path]:
    """Remove the shadow repositories of `folder` and of every folder inside it (each one's
    `project` file names its folder), e.g. a removed worktree's, whose tasks may have run in
    a subfolder; the shadow repositories removed. Done before `folder` itself goes, or after:
    its real path is worked out from its parents either way."""
    root = checkpoints_root()
    real = os.path.realpath(folder)
    gone: list[Path] = []
    try:
        shadows = list(root.iterdir())
    except OSError:
        return gone
    for shadow in shadows:
        try:
            project = (shadow / "project").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if project == real or project.startswith(real.rstrip(os.sep) + os.sep):
            shutil.rmtree(shadow, ignore_errors=True)
            gone.append(shadow)
    return gone
