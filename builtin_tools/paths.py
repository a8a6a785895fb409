"""The path sandbox: every file tool resolves paths here and refuses what escapes the roots."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


class PathOutsideRootsError(PermissionError):
    """A path resolved (after `..` and symlinks) outside work_dir and the extra allowed dirs."""


class PathSandbox:
    """Resolves tool paths against `work_dir` and keeps them inside the allowed roots.

    Resolution uses `os.path.realpath`, so `..`, symlinks (also a symlinked parent) and
    absolute paths are judged by where they really lead. Containment compares whole path
    components, so `/work/proj-evil` is not inside `/work/proj`.
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
        for root in self.roots:
            base = os.fspath(root)
            if path == base or path.startswith(base.rstrip(os.sep) + os.sep):
                return True
        return False

    def resolve(self, path: str | os.PathLike[str] | None) -> Path:
        """The real absolute path for `path`, or PathOutsideRootsError naming the roots."""
        raw = os.fspath(path) if path not in (None, "") else "."
        expanded = os.path.expanduser(raw)
        joined = expanded if os.path.isabs(expanded) else os.path.join(self.work_dir, expanded)
        real = os.path.realpath(joined)
        if not self.contains(real):
            roots = ", ".join(os.fspath(r) for r in self.roots)
            shown = f"'{raw}'" if real == joined else f"'{raw}' (resolves to '{real}')"
            raise PathOutsideRootsError(
                f"path {shown} is outside the allowed directories: {roots}. "
                "Use a path inside one of them."
            )
        return Path(real)

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
