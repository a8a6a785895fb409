"""Atomic file replacement: readers see the old file or the new one, never half of either.

The new bytes go to a temp file beside the target, are fsynced, then renamed over it. All of
it happens relative to a descriptor of the folder (see agentica_cli.tools.local.safe_open), never by
path, so the folder cannot be swapped for a symlink between the check and the write.

A process killed between creating the temp file and the rename leaves the temp file behind.
Temp names have a pattern of their own (`.<name>.agentica-<8 hex>.tmp`), so the first write
into a folder removes the ones older than STALE_TEMP_AGE_S (StaleTempCleaner).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
import time
from pathlib import Path

from agentica_cli.tools.local.safe_open import DIR_FLAGS, lstat_at

TEMP_MARK = ".agentica-"
TEMP_NAME = re.compile(r"\..+\.agentica-[0-9a-f]{8}\.tmp")
STALE_TEMP_AGE_S = 600  # far longer than any write takes; a younger one may be in use
_NAME_BYTES_KEPT = 200  # the temp name must stay under NAME_MAX (255 bytes)
_CREATE_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


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


def temp_name_for(name: str) -> str:
    base = os.fsdecode(os.fsencode(name)[:_NAME_BYTES_KEPT])
    return f".{base}{TEMP_MARK}{os.urandom(4).hex()}.tmp"


def _create_temp(dir_fd: int, name: str) -> tuple[int, str]:
    for _ in range(100):
        tmp_name = temp_name_for(name)
        try:
            return os.open(tmp_name, _CREATE_TEMP, 0o600, dir_fd=dir_fd), tmp_name
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temp file for {name}")


def atomic_write_at(dir_fd: int, name: str, data: bytes, existing: os.stat_result | None) -> os.stat_result:
    """Write `data` as `name` in the folder `dir_fd` through a temp file, fsync, then rename.

    `existing` (the current file's lstat, None for a new file) gives the permission bits
    (and owner, when we are allowed to set it) the new file keeps. Returns the new file's
    stat. On any failure the original is untouched and the temp file is removed.
    """
    fd, tmp_name = _create_temp(dir_fd, name)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            if existing is not None:
                os.fchmod(tmp.fileno(), stat.S_IMODE(existing.st_mode))
                if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):
                        os.fchown(tmp.fileno(), existing.st_uid, existing.st_gid)
            else:
                os.fchmod(tmp.fileno(), _default_file_mode())
            os.fsync(tmp.fileno())
            written = os.fstat(tmp.fileno())
        os.replace(tmp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        os.fsync(dir_fd)
    return written


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`atomic_write_at` by path, for callers outside the sandbox (their own files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(path.parent, DIR_FLAGS)
    try:
        atomic_write_at(dir_fd, path.name, data, lstat_at(dir_fd, path.name))
    finally:
        os.close(dir_fd)


def remove_stale_temps(dir_fd: int, max_age_s: float = STALE_TEMP_AGE_S) -> list[str]:
    """Delete our temp files in the folder `dir_fd` last modified over `max_age_s` ago
    (left by a process killed mid-write). Returns the names removed."""
    cutoff = time.time() - max_age_s
    removed: list[str] = []
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            if TEMP_MARK not in entry.name or not TEMP_NAME.fullmatch(entry.name):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                    os.unlink(entry.name, dir_fd=dir_fd)
                    removed.append(entry.name)
            except OSError:
                continue
    return removed


class StaleTempCleaner:
    """Runs remove_stale_temps once per folder (by device and inode) for the life of a tool,
    so the cost is one listing of a folder the first time something is written into it."""

    def __init__(self, max_age_s: float = STALE_TEMP_AGE_S):
        self.max_age_s = max_age_s
        self._done: set[tuple[int, int]] = set()
        self._lock = threading.Lock()

    def sweep_once(self, dir_fd: int) -> list[str]:
        info = os.fstat(dir_fd)
        key = (info.st_dev, info.st_ino)
        with self._lock:
            if key in self._done:
                return []
            self._done.add(key)
        try:
            return remove_stale_temps(dir_fd, self.max_age_s)
        except OSError:  # an unreadable folder: writing may still work, cleaning is a courtesy
            return []
