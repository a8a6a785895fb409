"""Project instructions for the system prompt: AGENTS.md files.

~/.agentica/AGENTS.md (the user's own, for every project) comes first, then AGENTS.md from
the git root down to the work dir, so the most specific file is read last and wins on
conflicts.

A project's AGENTS.md belongs to whoever wrote the repository, and what it says goes to the
model provider. A clone with `AGENTS.md -> /proc/self/environ` or `-> ../../.ssh/id_rsa`
would send the user's keys along, so a project's file is read under the file tools' rule: its
real path (after every symlink) must be inside the project, and it is opened beneath the
project's folder descriptor following no symlink (builtin_tools.safe_open: a swap after the
check is refused, not followed); only a regular file is read (not /proc, a device or a FIFO).
Each file is capped, and so is their total. A file left out is reported in one line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from agentica_cli.cli.config import agentica_home
from agentica_cli.cli.project_paths import find_git_root
from agentica_cli.cli.safe_text import safe_text

FILE_NAME = "AGENTS.md"
MAX_BYTES = 64_000  # per file: a runaway file must not eat the whole context window
MAX_TOTAL_BYTES = 128_000  # all of them together
# Kernel pseudo-files look like regular files (/proc/self/environ is S_IFREG, size 0).
PSEUDO_FILE_ROOTS = ("/proc", "/sys", "/dev")

Report = Callable[[str], None]


class SkippedFile(Exception):
    """An instruction file that is not read; str() says why."""


def instruction_files(work_dir: Path) -> list[tuple[Path, bool]]:
    """Candidate files in reading order, each with whether it is the user's own (personal)."""
    files: list[tuple[Path, bool]] = []
    personal = agentica_home() / FILE_NAME
    if personal.is_file():
        files.append((personal, True))
    root = find_git_root(work_dir)
    chain = [work_dir]
    if root is not None:
        chain += [p for p in work_dir.parents if p == root or root in p.parents]
    for folder in reversed(chain):
        candidate = folder / FILE_NAME
        if os.path.lexists(candidate):  # a dangling or outward symlink is still worth a word
            files.append((candidate, False))
    return files


def _project_root(work_dir: Path) -> Path:
    return Path(os.path.realpath(find_git_root(work_dir) or work_dir))


def _checked_real_path(path: Path, project_root: Path | None) -> str:
    """The real path to open; SkippedFile when it leads outside the project or to a pseudo-file."""
    real = os.path.realpath(path)
    if project_root is not None:
        from builtin_tools.paths import PathSandbox  # the file tools' containment rule

        if not PathSandbox(project_root).contains(real):
            raise SkippedFile(f"it leads outside the project (to {real})")
    if any(real == top or real.startswith(top + "/") for top in PSEUDO_FILE_ROOTS):
        raise SkippedFile(f"it leads to a system pseudo-file ({real})")
    return real


def _open_checked(real: str, project_root: Path | None) -> int:
    """A read descriptor for the checked real path: beneath the project's folder with no
    symlink on the way (like the file tools), or, for the user's own file, by its real path
    with no symlink at the last step. O_NONBLOCK: opening a FIFO would wait for a writer."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    if project_root is None:
        return os.open(real, flags)
    from builtin_tools.safe_open import open_beneath, open_root

    root_fd = open_root(project_root)
    try:
        parts = Path(real).relative_to(project_root).parts
        return open_beneath(root_fd, parts, flags, real)
    finally:
        os.close(root_fd)


def read_capped(real: str, limit: int, project_root: Path | None = None) -> tuple[bytes, int]:
    """Up to `limit` bytes of a regular file and its size; SkippedFile for anything else."""
    try:
        fd = _open_checked(real, project_root)
    except OSError as err:
        raise SkippedFile(f"cannot open it: {err.strerror or err}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkippedFile("it is not a regular file")
        chunks: list[bytes] = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), info.st_size
    except OSError as err:
        raise SkippedFile(f"cannot read it: {err.strerror or err}") from None
    finally:
        os.close(fd)


def load_project_instructions(work_dir: Path, report: Report | None = None) -> str:
    """The instruction files' text for the system prompt; `report` hears of each file left
    out or cut, in one line."""
    say = report or (lambda text: None)
    project_root = _project_root(work_dir)
    parts: list[str] = []
    seen: set[str] = set()
    budget = MAX_TOTAL_BYTES
    for path, personal in instruction_files(work_dir):
        shown = safe_text(str(path), keep_newlines=False)
        if budget <= 0:
            say(f"{shown} skipped: the instruction files before it already fill {MAX_TOTAL_BYTES:,} bytes")
            continue
        try:
            inside = None if personal else project_root
            real = _checked_real_path(path, inside)
            if real in seen:
                continue
            seen.add(real)
            data, size = read_capped(real, min(MAX_BYTES, budget), inside)
        except SkippedFile as why:
            say(f"{shown} skipped: {safe_text(str(why), keep_newlines=False)}")
            continue
        if size > len(data):
            say(f"{shown} is {size:,} bytes; only the first {len(data):,} are used")
        budget -= len(data)
        text = data.decode("utf-8", errors="replace").strip()
        if text:
            parts.append(f"Instructions from {path}:\n\n{text}")
    return "\n\n".join(parts)
