"""The project's files, for `@` completion: listed once (git-aware), matched fuzzily per key.

In a git work tree the list is `git ls-files --cached --others --exclude-standard`: tracked
files plus untracked ones that no .gitignore, .git/info/exclude or core.excludesFile rule
ignores. Elsewhere a walk of the folder that skips the usual build and tool folders and
honours a top-level .gitignore. Folders are derived from the files (an `@src/` suggestion).

The list is made off the event loop (`refresh_in_background`) and reused for a few seconds:
matching 20,000 paths is a few milliseconds, listing them is not.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".ruff_cache",
                          ".pytest_cache", ".tox", "dist", "build"})
MAX_FILES = 200_000  # a home folder opened by mistake: stop listing, never hang
STALE_AFTER = 5.0  # seconds a listing is reused before the next `@` lists again (in the background)


@dataclass(frozen=True)
class Match:
    path: str  # relative, `/`-separated; a folder ends with `/`
    score: float


@dataclass
class Listing:
    paths: list[str] = field(default_factory=list)  # files, then folders (ending with /)
    lowered: list[str] = field(default_factory=list)
    made: float = 0.0


def list_git_files(root: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under `root`; None when it is not a git work tree."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, timeout=10, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = [n for n in done.stdout.decode("utf-8", errors="replace").split("\0") if n]
    return list(dict.fromkeys(names))[:MAX_FILES]  # a conflicted file is listed once per stage


def walk_files(root: Path) -> list[str]:
    """Files under `root` without git: SKIPPED_DIRS and the top-level .gitignore left out."""
    spec = None
    ignore = root / ".gitignore"
    if ignore.is_file():
        try:
            import pathspec

            spec = pathspec.PathSpec.from_lines("gitwildmatch", ignore.read_text(errors="replace").splitlines())
        except (OSError, ImportError, ValueError):
            spec = None
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS
                         and not (spec is not None and spec.match_file(prefix + d + "/")))
        for name in sorted(files):
            path = prefix + name
            if spec is None or not spec.match_file(path):
                found.append(path)
        if len(found) >= MAX_FILES:
            break
    return found[:MAX_FILES]


def with_folders(files: list[str]) -> list[str]:
    """The files and every folder above them (`a/b/`), folders after files."""
    folders: dict[str, None] = {}
    for path in files:
        end = path.rfind("/")
        while end > 0:
            folder = path[: end + 1]
            if folder in folders:
                break
            folders[folder] = None
            end = path.rfind("/", 0, end)
    return files + list(folders)


def _score(query: str, path: str, lowered: str) -> float:
    """Higher is better: the name holding the query whole beats the path holding it, which
    beats the query's letters in order; shorter paths first among equals."""
    slash = lowered.rstrip("/").rfind("/")
    name = lowered[slash + 1:]
    if name.startswith(query):
        score = 400.0
    elif query in name:
        score = 300.0
    elif query in lowered:
        score = 200.0
    else:
        score = 100.0
    return score - len(path) / 1000


def fuzzy_matches(query: str, paths: list[str], lowered: list[str] | None = None, limit: int = 50) -> list[Match]:
    """The paths holding `query`'s letters in order (case-insensitive), best first."""
    lowered = lowered if lowered is not None else [p.lower() for p in paths]
    q = query.lower()
    if not q:
        top = [p for p in paths if p.count("/") == 0 or (p.endswith("/") and p.count("/") == 1)]
        return [Match(p, 0.0) for p in sorted(top)[:limit]]
    pattern = re.compile(".*?".join(re.escape(c) for c in q))
    search = pattern.search
    found = [Match(paths[i], _score(q, paths[i], low)) for i, low in enumerate(lowered) if search(low)]
    found.sort(key=lambda m: (-m.score, m.path))
    return found[:limit]


class FileIndex:
    """One project's file list, made at most once at a time in a worker thread."""

    def __init__(self, root: Path):
        self.root = root
        self.listing: Listing | None = None
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def _make(self) -> None:
        files = list_git_files(self.root)
        if files is None:
            files = walk_files(self.root)
        paths = with_folders(files)
        self.listing = Listing(paths, [p.lower() for p in paths], time.monotonic())

    def refresh_in_background(self) -> None:
        """List again in a worker thread unless one is already listing."""
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return
            self._worker = threading.Thread(target=self._make, name="agentica-file-index", daemon=True)
            self._worker.start()

    def paths(self, wait: float = 2.0) -> Listing:
        """The listing; the first call waits for it (up to `wait` seconds), later ones get the
        last listing at once and start a new one when it is STALE_AFTER old."""
        listing = self.listing
        if listing is None:
            self.refresh_in_background()
            worker = self._worker
            if worker is not None:
                worker.join(wait)
            return self.listing or Listing()
        if time.monotonic() - listing.made > STALE_AFTER:
            self.refresh_in_background()
        return listing

    def match(self, query: str, limit: int = 50) -> list[Match]:
        listing = self.paths()
        return fuzzy_matches(query, listing.paths, listing.lowered, limit)
