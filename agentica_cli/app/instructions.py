"""Project instructions for the system prompt: AGENTS.md and Claude Code's CLAUDE.md files.

The user's own files come first (~/.agentica/AGENTS.md, then Claude Code's ~/.claude/CLAUDE.md),
then, in each folder from the git root down to the work dir, AGENTS.md, CLAUDE.md,
.claude/CLAUDE.md and CLAUDE.local.md, so the most specific file is read last and wins on
conflicts. A file is read once: a symlink to one already read (CLAUDE.md -> AGENTS.md), a copy
with the same text, or a file another one imported is not repeated. `@path` imports
(cli/instruction_imports.py) follow each file, up to five hops deep.

A project's files belong to whoever wrote the repository, and what they say goes to the model
provider. A clone with `AGENTS.md -> /proc/self/environ` or `-> ../../.ssh/id_rsa` (or a
CLAUDE.md that imports `@../../.ssh/id_rsa`) would send the user's keys along, so a project's
file is read under the file tools' rule: its real path (after every symlink) must be inside the
project, and it is opened beneath the project's folder descriptor following no symlink
(one component at a time: a swap after the check is refused, not followed); only a regular file
is read (not /proc, a device or a FIFO). A project file may also import a Markdown file of the
user's own places (`@~/.claude/my-notes.md`, as Claude Code's docs suggest), nothing else
outside the project; the user's own files may import from anywhere in their home folder. Like
AGENTS.md before them, these files are read in a project not trusted yet: they are text for the
model, never programs. Each file is capped, and so is their total. A file left out is reported
in one line.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentica_cli.app.instruction_imports import MAX_DEPTH
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.settings.config import agentica_home
from agentica_cli.app.settings.project_paths import find_git_root

FILE_NAME = "AGENTS.md"
# In each project folder, in reading order (CLAUDE.local.md, the personal one, last).
PROJECT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
MAX_BYTES = 64_000  # per file: a runaway file must not eat the whole context window
MAX_TOTAL_BYTES = 128_000  # all of them together
# Kernel pseudo-files look like regular files (/proc/self/environ is S_IFREG, size 0).
PSEUDO_FILE_ROOTS = ("/proc", "/sys", "/dev")

Report = Callable[[str], None]


class SkippedFile(Exception):
    """An instruction file that is not read; str() says why."""


def claude_home() -> Path:
    return Path.home() / ".claude"


def instruction_files(work_dir: Path) -> list[tuple[Path, bool]]:
    """Candidate files in reading order, each with whether it is the user's own (personal)."""
    files: list[tuple[Path, bool]] = []
    for personal in (agentica_home() / FILE_NAME, claude_home() / "CLAUDE.md"):
        if personal.is_file():
            files.append((personal, True))
    root = find_git_root(work_dir)
    chain = [work_dir]
    if root is not None:
        chain += [p for p in work_dir.parents if p == root or root in p.parents]
    for folder in reversed(chain):
        for name in PROJECT_FILE_NAMES:
            candidate = folder / name
            if os.path.lexists(candidate):  # a dangling or outward symlink is still worth a word
                files.append((candidate, False))
    return files


def _project_root(work_dir: Path) -> Path:
    return Path(os.path.realpath(find_git_root(work_dir) or work_dir))


def inside(real: str, root: Path) -> bool:
    """Is the resolved path `real` the real `root` or below it (whole components: /p-evil is
    not inside /p)? The file tools' rule (agentica_cli.tools.local.paths), without importing the builtin
    tools: the REPL reads these files before its first paint."""
    base = os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _checked_real_path(path: Path, project_root: Path | None) -> str:
    """The real path to open; SkippedFile when it leads outside the project or to a pseudo-file."""
    real = os.path.realpath(path)
    if project_root is not None and not inside(real, project_root):
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
    # places' light twin of agentica_cli.tools.local.safe_open (no builtin tools before the first paint)
    from agentica_cli.extensions.places import _open_beneath

    try:
        return _open_beneath(project_root, Path(real).relative_to(project_root).parts, flags)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):  # a folder or the file became a symlink
            raise OSError(err.errno, "a symlink is in the way (the path changed after it was checked)") from None
        raise


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


@dataclass
class InstructionFile:
    path: Path  # as found (the banner and `agentica doctor` name it so)
    personal: bool
    size: int  # bytes used
    imported_by: Path | None = None


@dataclass
class Instructions:
    """What was read: the text for the system prompt, the files in it, the files left out as
    repeats (a symlink or copy of one read, `why`) and the problems (cut or refused files)."""

    text: str = ""
    files: list[InstructionFile] = field(default_factory=list)
    repeats: list[tuple[Path, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # each file's text as in the prompt


class _Reader:
    """One reading of the instruction files: the budget, what was seen, the imports."""

    def __init__(self, work_dir: Path):
        self.project_root = _project_root(work_dir)
        self.found = Instructions()
        self.parts: list[str] = []
        self.seen_paths: dict[str, Path] = {}
        self.seen_texts: dict[str, Path] = {}
        self.budget = MAX_TOTAL_BYTES

    def say(self, text: str) -> None:
        self.found.problems.append(text)

    def read(self, path: Path, personal: bool, importer: Path | None = None, depth: int = 0) -> None:
        shown = safe_text(str(path), keep_newlines=False)
        try:
            inside = None if personal else self.project_root
            real = _checked_real_path(path, inside)
        except SkippedFile as why:
            self.say(f"{shown} skipped: {safe_text(str(why), keep_newlines=False)}")
            return
        if real in self.seen_paths:
            self.found.repeats.append((path, f"the same file as {self.seen_paths[real]}"))
            return
        if self.budget <= 0:
            self.say(f"{shown} skipped: the instruction files before it already fill {MAX_TOTAL_BYTES:,} bytes")
            return
        self.seen_paths[real] = path
        try:
            data, size = read_capped(real, min(MAX_BYTES, self.budget), inside)
        except SkippedFile as why:
            self.say(f"{shown} skipped: {safe_text(str(why), keep_newlines=False)}")
            return
        text = data.decode("utf-8", errors="replace").strip()
        if text and text in self.seen_texts:
            self.found.repeats.append((path, f"the same text as {self.seen_texts[text]}"))
            return
        if size > len(data):
            self.say(f"{shown} is {size:,} bytes; only the first {len(data):,} are used")
        self.budget -= len(data)
        self.found.files.append(InstructionFile(path, personal, len(data), importer))
        if text:
            self.seen_texts[text] = path
            heading = f"Instructions from {path}" + (f" (imported by {importer})" if importer else "")
            self.parts.append(f"{heading}:\n\n{text}")
            self.found.texts.append(text)
        if depth < MAX_DEPTH:
            self.follow_imports(path, text, personal, depth)

    def follow_imports(self, path: Path, text: str, personal: bool, depth: int) -> None:
        from agentica_cli.app.instruction_imports import candidate_paths, import_tokens

        for token in import_tokens(text):
            target = next((p for p in candidate_paths(token, path.parent) if os.path.isfile(p)), None)
            if target is None:
                continue  # names no file (a handle, a package scope): it stays text
            allowed, as_personal = self.import_allowed(target, personal)
            if not allowed:
                shown = safe_text(f"{path}: @{token}", keep_newlines=False)
                where = safe_text(os.path.realpath(target), keep_newlines=False)
                self.say(f"{shown} not imported: it leads outside the project (to {where})")
                continue
            self.read(target, as_personal, importer=path, depth=depth + 1)

    def import_allowed(self, target: Path, personal: bool) -> tuple[bool, bool]:
        """(may it be read, is it read as the user's own file)."""
        real = os.path.realpath(target)
        if not personal and inside(real, self.project_root):
            return True, False
        own_places = inside(real, agentica_home()) or inside(real, claude_home())
        if own_places and real.endswith(".md"):
            return True, True  # the user's own notes, which a project may point at (Claude Code's docs)
        if personal and inside(real, Path.home()):
            return True, True
        return False, False


def read_instructions(work_dir: Path) -> Instructions:
    """Every instruction file for `work_dir`, read once (see the module's docstring)."""
    reader = _Reader(work_dir)
    for path, personal in instruction_files(work_dir):
        reader.read(path, personal)
    reader.found.text = "\n\n".join(reader.parts)
    return reader.found


def load_project_instructions(work_dir: Path, report: Report | None = None) -> str:
    """The instruction files' text for the system prompt; `report` hears of each file left
    out or cut, in one line."""
    found = read_instructions(work_dir)
    for problem in found.problems:
        (report or (lambda text: None))(problem)
    return found.text


def loaded_summary(found: Instructions, work_dir: Path) -> str:
    """`AGENTS.md, CLAUDE.md (+2 imported)`: the files in the prompt, for the banner; "" for none."""
    def name(path: Path) -> str:
        try:
            return str(path.relative_to(work_dir))
        except ValueError:
            home = Path.home()
            return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) else str(path)

    top = [name(f.path) for f in found.files if f.imported_by is None]
    imported = sum(1 for f in found.files if f.imported_by is not None)
    text = ", ".join(top) + (f" (+{imported} imported)" if imported else "")
    return safe_text(text, keep_newlines=False)
