"""The path sandbox: every file tool resolves paths here and refuses what escapes the roots."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agentica_cli.tools.local.safe_open import changed_error, open_dir_beneath, open_root


class PathOutsideRootsError(PermissionError):
    """A path resolved (after `..` and symlinks) outside work_dir and the extra allowed dirs."""


class PathSandbox:
    """Resolves tool paths against `work_dir` and keeps them inside the allowed roots.

    Resolution uses `os.path.realpath`, so `..`, symlinks (also a symlinked parent) and
    absolute paths are judged by where they really lead. Containment compares whole path
    components, so `/work/proj-evil` is not inside `/work/proj`.

    A checked path is then opened with `open_parent`/`open_dir`: relative to a descriptor
    of its root and following no symlink (agentica_cli.tools.local.safe_open), so a folder swapped for a
    symlink after the check cannot redirect the read or write.
    """

    def __init__(self, work_dir: str | os.PathLike[str] = ".", allowed_dirs: Iterable[str | os.PathLike[str]] = ()):
        self.work_dir = Path(os.path.realpath(os.path.expanduser(os.fspath(work_dir))))
        roots = [self.work_dir]
        for extra in allowed_dirs:
            root = Path(os.path.realpath(os.path.expanduser(os.fspath(extra))))
            if root not in roots:
                roots.append(root)
        self.roots: tuple[Path, ...] = tuple(roots)

    def contains(self, real: str | os.PathLike[str]) -> bool:
        path = os.fspath(real)
        return any(self.contains_in(root, path) for root in self.roots)

    def resolve(self, path: str | os.PathLike[str] | None) -> Path:
        """The real absolute path for `path`, or PathOutsideRootsError naming the roots."""
        raw = os.fspath(path) if path not in (None, "") else "."
        expanded = os.path.expanduser(raw)
        joined = expanded if os.path.isabs(expanded) else os.path.join(self.work_dir, expanded)
        real = self._realpath(joined, raw)
        if not self.contains(real):
            shown = f"'{raw}'" if real == joined else f"'{raw}' (resolves to '{real}')"
            raise PathOutsideRootsError(
                f"path {shown} is outside the allowed directories: {self.describe_roots()}. "
                "Use a path inside one of them."
            )
        return Path(real)

    @staticmethod
    def _realpath(joined: str, raw: str) -> str:
        # realpath itself fails (readlink: EINVAL) when a symlink turns into a folder while
        # it looks at it; a folder tree that keeps changing is refused, not half-resolved.
        for _ in range(3):
            try:
                return os.path.realpath(joined)
            except OSError:
                continue
        raise changed_error(f"'{raw}'")

    def root_of(self, real: str | os.PathLike[str]) -> Path:
        """The allowed root holding `real` (the deepest one when roots are nested)."""
        path = os.fspath(real)
        holders = [root for root in self.roots if self.contains_in(root, path)]
        if not holders:
            raise PathOutsideRootsError(f"path '{path}' is outside the allowed directories: {self.describe_roots()}.")
        return max(holders, key=lambda root: len(os.fspath(root)))

    @staticmethod
    def contains_in(root: Path, path: str) -> bool:
        base = os.fspath(root)
        return path == base or path.startswith(base.rstrip(os.sep) + os.sep)

    def is_root(self, real: str | os.PathLike[str]) -> bool:
        return Path(real) in self.roots

    def open_dir(self, real: Path, *, create: bool = False) -> int:
        """A descriptor of the folder `real` (a resolved path), opened beneath its root without
        following symlinks; `create` makes missing folders (mkdir -p). The caller closes it."""
        root = self.root_of(real)
        root_fd = open_root(root)
        try:
            return open_dir_beneath(root_fd, Path(real).relative_to(root).parts, self.display(real), create=create)
        finally:
            os.close(root_fd)

    def open_parent(self, real: Path, *, create: bool = False) -> int:
        """A descriptor of the folder holding `real`, for operations on `real.name` with dir_fd.
        A root itself has no parent inside the sandbox: IsADirectoryError."""
        if self.is_root(real):
            raise IsADirectoryError(f"{self.display(real)} is a directory.")
        return self.open_dir(Path(real).parent, create=create)

    def display(self, real: str | os.PathLike[str]) -> str:
        """How a path is shown to the model: relative to work_dir when inside it."""
        path = os.fspath(real)
        base = os.fspath(self.work_dir)
        if path == base:
            return "."
        prefix = base.rstrip(os.sep) + os.sep
        return path[len(prefix):] if path.startswith(prefix) else path

    def describe_roots(self) -> str:
        return ", ".join(os.fspath(r) for r in self.roots)
