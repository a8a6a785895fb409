"""Where extension files are found, and reading them safely.

A project's files (commands, agents, skills, hooks) belong to whoever wrote the repository:
they are read only once the user trusts the project (`Places.project` is None until then),
and like AGENTS.md they are opened beneath the project folder following no symlink, so a
`.claude/commands/x.md -> ~/.ssh/id_rsa` is refused rather than sent to the model.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agentica_cli.private_files import agentica_home

MAX_FILE_BYTES = 256_000
KINDS = ("commands", "agents", "skills")


class UnreadableFile(Exception):
    """An extension file that is not read; str() says why."""


@dataclass
class Folder:
    path: Path
    scope: str  # "user" or "project"
    root: Path | None  # the project root files must stay inside; None for the user's own


@dataclass
class Places:
    """project: the trusted project's root (None: untrusted or none). user_home: ~/.agentica;
    claude_home: ~/.claude (None to leave the user's Claude Code files out)."""

    project: Path | None = None
    user_home: Path = field(default_factory=agentica_home)
    claude_home: Path | None = field(default_factory=lambda: Path.home() / ".claude")

    def folders(self, kind: str) -> list[Folder]:
        """The folders of one kind, lowest precedence first."""
        found = []
        if self.claude_home is not None:
            found.append(Folder(self.claude_home / kind, "user", None))
        found.append(Folder(self.user_home / kind, "user", None))
        if self.project is not None:
            root = Path(os.path.realpath(self.project))
            found += [Folder(root / ".claude" / kind, "project", root),
                      Folder(root / ".agentica" / kind, "project", root)]
        return found


def project_extensions(root: Path) -> list[str]:
    """What a project defines (for the trust question): e.g. ['commands', 'hooks']."""
    present = [kind for kind in KINDS if any((root / d / kind).is_dir() for d in (".agentica", ".claude"))]
    for name in (".agentica/settings.json", ".claude/settings.json", ".claude/settings.local.json"):
        try:
            if '"hooks"' in (root / name).read_text(encoding="utf-8", errors="replace"):
                present.append("hooks")
                break
        except OSError:
            continue
    return present


def read_text(path: Path, root: Path | None, limit: int = MAX_FILE_BYTES) -> str:
    """A regular file's text (capped). Under a project root: its real path must be inside the
    root and it is opened beneath it with no symlink on the way (agentica_cli.tools.local.safe_open)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    real = os.path.realpath(path)
    try:
        if root is None:
            fd = os.open(real, flags)
        else:
            if real != str(root) and not real.startswith(str(root).rstrip("/") + "/"):
                raise UnreadableFile(f"it leads outside the project (to {real})")
            fd = _open_beneath(root, Path(real).relative_to(root).parts, flags)
    except OSError as err:
        raise UnreadableFile(f"cannot open it: {err.strerror or err}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnreadableFile("it is not a regular file")
        data = os.read(fd, limit)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _open_beneath(root: Path, parts: tuple[str, ...], flags: int) -> int:
    """Open root/parts... one component at a time, following no symlink (a path swapped for a
    symlink after the realpath check is refused, not followed). Like agentica_cli.tools.local.safe_open,
    without importing the builtin tools, which the REPL must not load before its first paint."""
    folder_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, folder_flags, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def markdown_files(folder: Path, *, recursive: bool) -> list[Path]:
    """`*.md` files under a folder, sorted; hidden folders skipped."""
    if not folder.is_dir():
        return []
    pattern = "**/*.md" if recursive else "*.md"
    return sorted(p for p in folder.glob(pattern)
                  if not any(part.startswith(".") for part in p.relative_to(folder).parts))
