"""A checkout's git folder read as files, with no git process (so nothing of the repository's
config runs): for worktrees (worktrees/manager.py) and checkpoints (checkpoints/shadow.py)."""

from __future__ import annotations

from pathlib import Path


def git_dir_of(top: Path) -> Path | None:
    """The git folder of the checkout whose top is `top`: its `.git` folder, or where its `.git`
    file points (`gitdir: ...`, a worktree's or a submodule's). None when `top` has neither."""
    dot = top / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    folder = Path(text.removeprefix("gitdir:").strip())
    return folder if folder.is_absolute() else (top / folder).resolve()
