"""agentica's own folder (~/.agentica) and the private modes of what it keeps there.

That folder holds API keys (config.toml), every prompt typed (history), whole conversations
(sessions/) and MCP servers' stderr (logs/): nobody but the user may read them, whatever
the umask. Folders are 0700 and files 0600; a file or folder made by an older version with
looser modes is tightened the next time it is opened.

Standard library only: the tool framework (MCP logs), the CLI and its tests all use it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

DIR_MODE = 0o700
FILE_MODE = 0o600


def agentica_home() -> Path:
    """~/.agentica, or $AGENTICA_HOME (tests point it at a temporary folder)."""
    override = os.environ.get("AGENTICA_HOME")
    return Path(override).expanduser() if override else Path.home() / ".agentica"


def _tighten(path: Path | int, mode: int) -> None:
    """chmod to `mode` unless it already is; a path we do not own is left as it is."""
    try:
        current = os.stat(path).st_mode & 0o7777
        if current != mode:
            if isinstance(path, int):
                os.fchmod(path, mode)
            else:
                os.chmod(path, mode)
    except OSError:
        pass


def private_dir(path: Path) -> Path:
    """Create `path` (0700). Inside agentica's home, it and every folder between the home and
    it are made 0700 even if they exist (mkdir gives missing parents the umask's mode); a
    folder elsewhere (a log file the caller chose) keeps the mode its owner gave it."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    home = agentica_home()
    if home == path or home in path.parents:
        for folder in (path, *(p for p in path.parents if p == home or home in p.parents)):
            _tighten(folder, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Make sure `path` exists (empty if new) with mode 0600, its folder 0700; for files
    another library opens by name (prompt_toolkit's history)."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        _tighten(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def open_private(path: Path, mode: str = "a", *, exclusive: bool = False, folder_made: bool = False,
                 **kwargs: Any) -> IO[Any]:
    """`open(path, mode)` for writing a private file: created 0600 (never readable by others,
    not even for a moment), an existing one tightened to 0600, its folder 0700.

    `mode` is "a", "w" (truncates) or "x" (fails if it exists), text or binary; `exclusive`
    makes "a" fail if the file exists too. `folder_made`: the caller made the folder private
    already (a file written at every step need not check it again)."""
    if not folder_made:
        private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    if "a" in mode:
        flags |= os.O_APPEND
    elif "w" in mode:
        flags |= os.O_TRUNC
    if "x" in mode or exclusive:
        flags |= os.O_EXCL
    fd = os.open(path, flags, FILE_MODE)
    try:
        _tighten(fd, FILE_MODE)
        return os.fdopen(fd, mode.replace("x", "w"), **kwargs)
    except BaseException:
        os.close(fd)
        raise
