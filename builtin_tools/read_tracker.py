"""Which files the model has read this session, and whether they changed on disk since."""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

# Up to this size the content hash is kept: it catches a same-size change within one
# mtime tick, and forgives a `touch` that changed nothing.
HASH_LIMIT_BYTES = 16 << 20


class FileNotReadError(PermissionError):
    """An existing file is written or edited without having been read first."""


class FileModifiedError(PermissionError):
    """The file changed on disk after the model read it."""


@dataclass(frozen=True)
class FileSnapshot:
    mtime_ns: int
    size: int
    sha256: str | None


def _snapshot(path: Path, data: bytes | None = None, info: os.stat_result | None = None) -> FileSnapshot:
    info = info if info is not None else os.stat(path)
    digest = None
    if data is not None:
        digest = hashlib.sha256(data).hexdigest()
    elif info.st_size <= HASH_LIMIT_BYTES:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    return FileSnapshot(info.st_mtime_ns, info.st_size, digest)


class ReadTracker:
    def __init__(self) -> None:
        self._seen: dict[str, FileSnapshot] = {}
        self._lock = threading.Lock()

    def record(self, path: Path, data: bytes | None = None, info: os.stat_result | None = None) -> None:
        """Remember the file as the model now knows it (after a read or our own write).
        `info`: its stat when the caller has it from an open descriptor (no lookup by path)."""
        snapshot = _snapshot(path, data, info)
        with self._lock:
            self._seen[os.fspath(path)] = snapshot

    def was_read(self, path: Path) -> bool:
        with self._lock:
            return os.fspath(path) in self._seen

    def check_current(self, path: Path, data: bytes, shown: str, info: os.stat_result | None = None) -> None:
        """Raise unless `path` was read and `data` (its current bytes) is what was read."""
        with self._lock:
            snapshot = self._seen.get(os.fspath(path))
        if snapshot is None:
            raise FileNotReadError(
                f"{shown} has not been read in this session; read_file it first, then edit or overwrite it."
            )
        if snapshot.sha256 is not None:
            unchanged = hashlib.sha256(data).hexdigest() == snapshot.sha256
        else:
            info = info if info is not None else os.stat(path)
            unchanged = (info.st_mtime_ns, info.st_size) == (snapshot.mtime_ns, snapshot.size)
        if not unchanged:
            raise FileModifiedError(
                f"{shown} was modified since read (changed on disk by something else); "
                "read it again with read_file, then redo the change."
            )
