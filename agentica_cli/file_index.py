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
from collections.abc import Iterator
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
    searchable: Searchable = field(default_factory=lambda: Searchable([]))  # files and folders (ending with /)
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

            spec = pathspec.GitIgnoreSpec.from_lines(ignore.read_text(errors="replace").splitlines())
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


def _name_of(lowered_path: str) -> str:
    return lowered_path[lowered_path.rstrip("/").rfind("/") + 1:]


class Searchable:
    """A listing as two strings, `\n` before each path (or name), so each tier of a match is a
    C-level scan (str.find, one regex) instead of a Python loop over 20,000 entries."""

    def __init__(self, paths: list[str]):
        self.paths = paths
        lowered = [p.lower() for p in paths]
        names = [_name_of(p) for p in lowered]
        self.joined_paths = "".join("\n" + p for p in lowered)
        self.joined_names = "".join("\n" + n for n in names)
        self.starts = _line_starts(lowered)  # where each path's line starts in joined_paths
        self.name_starts = _line_starts(names)


def _line_starts(lines: list[str]) -> list[int]:
    starts: list[int] = []
    position = 1
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    return starts


def fuzzy_matches(query: str, listing: Searchable | list[str], limit: int = 50) -> list[Match]:
    """The paths holding `query`'s letters in order (case-insensitive), best first: a name that
    starts with the query, then a name holding it, then a path holding it, then the letters in
    order anywhere; within each, in the listing's order (FileIndex keeps it shortest first)."""
    from bisect import bisect_right

    found = listing if isinstance(listing, Searchable) else Searchable(listing)
    q = query.lower()
    if not q:
        top = [p for p in found.paths if p.count("/") == 0 or (p.endswith("/") and p.count("/") == 1)]
        return [Match(p, 0.0) for p in top[:limit]]
    names, paths, name_starts, starts = found.joined_names, found.joined_paths, found.name_starts, found.starts
    letters = "".join(c for c in q if c != "\n")
    subsequence = re.compile(_subsequence_pattern(letters))
    tiers = (
        (400.0, names, name_starts, _occurrences(names, "\n" + letters, 1)),
        (300.0, names, name_starts, _occurrences(names, letters)),
        (200.0, paths, starts, _occurrences(paths, letters)),
        (100.0, paths, starts, (m.start() for m in subsequence.finditer(paths))),
    )
    matches: list[Match] = []
    seen: set[int] = set()
    for score, _text, line_starts, positions in tiers:
        for position in positions:
            index = bisect_right(line_starts, position) - 1
            if index in seen or index < 0:
                continue
            seen.add(index)
            path = found.paths[index]
            matches.append(Match(path, score - len(path) / 1000))
            if len(matches) >= limit:
                return matches
    return matches


def _subsequence_pattern(letters: str) -> str:
    """`letters` in order on one line: each gap skips only what is not the next letter, so the
    leftmost way is the only way and a failed line is given up without backtracking (possessive
    where Python has it, 3.11+)."""
    import sys

    star = "*+" if sys.version_info >= (3, 11) else "*"
    parts = [re.escape(letters[0])]
    for c in letters[1:]:
        parts.append(f"[^\\n{re.escape(c)}]{star}{re.escape(c)}")
    return "".join(parts)


def _occurrences(text: str, needle: str, shift: int = 0) -> Iterator[int]:
    """Where `needle` occurs in `text` (str.find: C speed), each + `shift`."""
    at = text.find(needle)
    while at >= 0:
        yield at + shift
        at = text.find(needle, at + 1)


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
        paths = sorted(with_folders(files), key=lambda p: (len(p), p))  # the order matches are offered in
        self.listing = Listing(Searchable(paths), time.monotonic())

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
        return fuzzy_matches(query, listing.searchable, limit)
