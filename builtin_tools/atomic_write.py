"""Atomic file replacement: readers see the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def _default_file_mode() -> int:
    """0o666 minus the process umask, read without changing it (os.umask would race threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder, fsync, then os.replace.

    An existing file keeps its permission bits (and owner, when we are allowed to set it).
    On any failure the original is untouched and the temp file is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
            if existing is not None:
                os.fchmod(tmp.fileno(), stat.S_IMODE(existing.st_mode))
                if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):
                        os.fchown(tmp.fileno(), existing.st_uid, existing.st_gid)
            else:
                os.fchmod(tmp.fileno(), _default_file_mode())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable; not every platform lets a directory be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
