"""`.gitignore` rules for the Python-side walks (ls, glob and the grep fallback).

Each `.gitignore` applies to paths below its folder; deeper files and later lines win,
as in git. `.git` itself is always skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ALWAYS_SKIPPED = frozenset({".git"})


class IgnoreRules:
    def __init__(self, root: str | os.PathLike[str]):
        self.root = os.fspath(root)
        self._specs: dict[str, Any] = {}

    def _spec(self, directory: str) -> Any:
        if directory not in self._specs:
            spec = None
            try:
                with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                lines = []
            if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
                import pathspec  # local: only folders with a .gitignore pay for it

                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            self._specs[directory] = spec
        return self._specs[directory]

    def is_ignored(self, path: str | os.PathLike[str], is_dir: bool) -> bool:
        path = os.fspath(path)
        name = os.path.basename(path)
        if name in ALWAYS_SKIPPED:
            return True
        rel = os.path.relpath(path, self.root)
        if rel.startswith(".."):
            return False
        parts = rel.split(os.sep)
        verdict: bool | None = None
        directory = self.root
        for depth in range(len(parts)):
            spec = self._spec(directory)
            if spec is not None:
                sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
                result = spec.check_file(sub)
                if result.include is not None:
                    verdict = result.include
            directory = os.path.join(directory, parts[depth])
        return bool(verdict)

    def walk_files(self, top: str | os.PathLike[str]) -> Iterator[str]:
        """Every non-ignored regular file under `top` (symlinks are not followed).

        A `top` that is itself ignored was asked for by name, so it is searched, as ripgrep
        searches a path it is given; only the .gitignore files inside it apply there.
        """
        top = os.fspath(top)
        if top != self.root and self.is_ignored(top, True):
            yield from IgnoreRules(top).walk_files(top)
            return
        stack = [top]
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in sorted(entries, key=lambda e: e.name, reverse=True):
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if self.is_ignored(entry.path, is_dir):
                    continue
                if is_dir:
                    stack.append(entry.path)
                elif is_file:
                    yield entry.path


def root_for(path: Path, roots: tuple[Path, ...]) -> Path:
    """The allowed root a path lives in (the deepest one), where .gitignore lookup starts."""
    best = roots[0]
    for root in roots:
        if (path == root or root in path.parents) and len(root.parts) >= len(best.parts):
            best = root
    return best
