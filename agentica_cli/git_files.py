"""A checkout's git folder read as files, with no git process (so nothing of the repository's
config runs): for worktrees (worktrees/manager.py) and checkpoints (checkpoints/shadow.py)."""

from __future__ import annotations

import re
from pathlib import Path

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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


def common_dir_of(git_dir: Path) -> Path:
    """The folder a worktree's git folder shares with the repository (objects, refs): where its
    `commondir` file points; the git folder itself for a main checkout."""
    common_file = git_dir / "commondir"
    if common_file.is_file():
        return (git_dir / common_file.read_text(encoding="utf-8").strip()).resolve()
    return git_dir


def head_commit(git_dir: Path, common: Path) -> str | None:
    """The commit HEAD names, read from the files (a detached HEAD, a loose or a packed ref);
    None when it cannot be read so (a reftable, an unborn branch): then ask git."""
    head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    if _OBJECT_ID.fullmatch(head):
        return head
    ref = head.removeprefix("ref: ").strip()
    if not ref.startswith("refs/") or ".." in ref:
        return None
    for base in (git_dir, common):
        loose = base / ref
        if loose.is_file():
            value = loose.read_text(encoding="utf-8").strip()
            return value if _OBJECT_ID.fullmatch(value) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            value, _, name = line.partition(" ")
            if name == ref and _OBJECT_ID.fullmatch(value):
                return value
    return None


def checkout_head(top: Path) -> str | None:
    """The commit HEAD names in the checkout whose top is `top`; None when that cannot be read
    as files."""
    git_dir = git_dir_of(top)
    if git_dir is None:
        return None
    try:
        return head_commit(git_dir, common_dir_of(git_dir))
    except (OSError, UnicodeDecodeError):
        return None
