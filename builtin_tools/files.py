"""BuiltinFileTool: ls, read_file, write_file, edit_file, multi_edit_file, glob, grep."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Optional

from typing_extensions import NotRequired, TypedDict

from agentica_cli.tools.base import Tool
from agentica_cli.tools.local.file_read import (
    DEFAULT_LIMIT,
    WHOLE_FILE_LIMIT,
    FileReadError,
    human_size,
    open_readable_file,
    read_image,
    read_page,
    render_page,
)
from agentica_cli.tools.local.paths import PathSandbox
from agentica_cli.tools.local.safe_open import changed_error, lstat_at
from agentica_cli.tools.local.text_format import decode_text
from builtin_tools import search
from builtin_tools.atomic_write import StaleTempCleaner, atomic_write_at
from builtin_tools.file_access import FileAccess, content_stat, page_of
from builtin_tools.file_edit import Edit, FileEditError, apply_edits, short_diff
from builtin_tools.glob_pattern import has_magic
from builtin_tools.ignore_rules import IgnoreRules, root_for
from builtin_tools.read_tracker import HASH_LIMIT_BYTES, ReadTracker

MAX_LS_ENTRIES = 500
MAX_GLOB_RESULTS = 200
# edit_file/multi_edit_file hold a file several times in memory (bytes, text, edited text,
# diff): a 190 MB file took 931 MB. Bigger files are refused before they are read.
MAX_EDIT_BYTES = 20 * 1024 * 1024

_AUTO = object()


class EditOperation(TypedDict):
    """One exact-string replacement.

    Args:
        old_string: Exact text to replace.
        new_string: Replacement text.
        replace_all: Replace every occurrence (default false: old_string must be unique).
    """

    old_string: str
    new_string: str
    replace_all: NotRequired[bool]


class BuiltinFileTool(Tool):
    """File tools confined to `work_dir` and `allowed_dirs`, with read-before-write tracking."""

    def __init__(
        self,
        work_dir: str | os.PathLike[str] = ".",
        *,
        allowed_dirs: Iterable[str | os.PathLike[str]] = (),
        rg_path: str | object | None = _AUTO,
        max_edit_bytes: int = MAX_EDIT_BYTES,
        file_access: FileAccess | None = None,
    ):
        super().__init__(name="files")
        # Content of read_file/write_file/edits from somewhere other than the disk (an
        # editor's buffers, see file_access.py); None: the disk.
        self.file_access = file_access
        self.sandbox = PathSandbox(work_dir, allowed_dirs)
        self.tracker = ReadTracker()
        self.max_edit_bytes = max_edit_bytes
        self.temp_cleaner = StaleTempCleaner()
        # rg_path=None forces the pure-Python search (also used when no rg binary is found).
        self.rg_path: str | None = search.find_rg() if rg_path is _AUTO else rg_path  # type: ignore[assignment]
        self.register(self.ls, is_read_only=True, concurrency_safe=True)
        self.register(self.read_file, is_read_only=True, concurrency_safe=True)
        self.register(self.write_file, is_destructive=True)
        self.register(self.edit_file, is_destructive=True)
        self.register(self.multi_edit_file, is_destructive=True)
        self.register(self.glob, is_read_only=True, concurrency_safe=True)
        self.register(self.grep, is_read_only=True, concurrency_safe=True)

    @property
    def work_dir(self) -> Path:
        return self.sandbox.work_dir

    def get_system_prompt(self) -> str:
        text = ("Files: paths are relative to the working directory "
                f"({self.sandbox.work_dir}); only paths inside {self.sandbox.describe_roots()} are allowed. ")
        if not any(name in self.functions for name in ("write_file", "edit_file", "multi_edit_file")):
            return text + "Find code with grep/glob before reading."  # a read-only copy
        return text + (
            "Find code with grep/glob before reading; read a file before editing or overwriting it. "
            "Prefer edit_file/multi_edit_file over rewriting whole files. Edits keep the file's "
            "line endings, BOM and final newline."
        )

    def read_only_copy(self) -> BuiltinFileTool:
        """A fresh tool for the same folders and content source with only the read-only functions
        this one offers (ls, read_file, glob, grep): for an agent that may look but not change
        anything. Fresh, so what it reads does not count as read for this tool's edits."""
        copy = BuiltinFileTool(self.sandbox.work_dir, allowed_dirs=self.sandbox.roots[1:], rg_path=self.rg_path,
                               max_edit_bytes=self.max_edit_bytes, file_access=self.file_access)
        for name, function in list(copy.functions.items()):
            if not function.is_read_only or name not in self.functions:
                del copy.functions[name]
        return copy

    # -- listing --------------------------------------------------------------------------

    def ls(self, path: str = ".") -> str:
        """List a directory: subdirectories first (ending in "/"), then files with sizes.

        Skips .git and what .gitignore ignores. At most 500 entries.

        Args:
            path: Directory to list (default: the working directory).
        """
        real = self.sandbox.resolve(path)
        shown = self.sandbox.display(real)
        try:
            dir_fd = self.sandbox.open_dir(real)
        except FileNotFoundError:
            raise FileNotFoundError(f"{shown} does not exist.") from None
        except NotADirectoryError:
            try:
                parent_fd = self.sandbox.open_parent(real)
            except NotADirectoryError:  # a file on the way: a/file.txt/x
                raise FileNotFoundError(f"{shown} does not exist.") from None
            try:
                info = lstat_at(parent_fd, real.name)
            finally:
                os.close(parent_fd)
            size = human_size(info.st_size) if info else "?"
            raise NotADirectoryError(f"{shown} is a file ({size}), not a directory.") from None
        try:
            return self._list(real, dir_fd)
        finally:
            os.close(dir_fd)

    def _list(self, real: Path, dir_fd: int) -> str:
        shown = self.sandbox.display(real)
        rules = IgnoreRules(root_for(real, self.sandbox.roots))
        filter_ignored = real == rules.root or not rules.is_ignored(real, True)
        dirs: list[str] = []
        files: list[str] = []
        hidden = 0
        for entry in os.scandir(dir_fd):
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = entry.is_symlink()
            except OSError:
                continue
            if entry.name == ".git" or (filter_ignored and rules.is_ignored(os.path.join(real, entry.name), is_dir)):
                hidden += 1
                continue
            if is_link:
                files.append(f"{entry.name} -> {os.readlink(entry.name, dir_fd=dir_fd)}")
            elif is_dir:
                dirs.append(entry.name + "/")
            else:
                try:
                    size = entry.stat(follow_symlinks=False).st_size
                except OSError:
                    size = 0
                files.append(f"{entry.name}  {human_size(size)}")
        entries = sorted(dirs, key=str.lower) + sorted(files, key=str.lower)
        notes = [f"{len(entries)} entries in {shown}"]
        if hidden:
            notes.append(f"{hidden} hidden (.git or .gitignore)")
        if len(entries) > MAX_LS_ENTRIES:
            notes.append(f"showing the first {MAX_LS_ENTRIES}; use glob to narrow down")
            entries = entries[:MAX_LS_ENTRIES]
        if not entries:
            return f"({shown} is empty" + (f"; {notes[1]}" if hidden else "") + ")"
        return "\n".join(entries) + "\n[" + "; ".join(notes) + "]"

    # -- reading --------------------------------------------------------------------------

    def read_file(self, file_path: str, offset: Optional[int] = None, limit: Optional[int] = None) -> Any:
        """Read a text file as numbered lines (like cat -n), or look at an image (PNG, JPEG, GIF, WebP).

        Shows up to 2000 lines from offset; the footer says which lines of how many were
        shown and the offset of the next page.
        Files over 256 KB must be read in pages (give offset/limit) or searched with grep.
        Lines over 2000 chars are cut. Binary files are refused.

        Args:
            file_path: Path of the file.
            offset: First line to show, 1-based (default 1).
            limit: Number of lines to show (default and max 2000).
        """
        real = self.sandbox.resolve(file_path)
        shown = self.sandbox.display(real)
        if self.sandbox.is_root(real):
            raise FileReadError(f"{shown} is a directory; use ls to list it.")
        if self.file_access is not None:
            return self._read_through_access(real, shown, offset, limit)
        try:
            dir_fd = self.sandbox.open_parent(real)
        except (FileNotFoundError, NotADirectoryError):
            raise FileReadError(f"{shown} does not exist.") from None
        from agentica_cli.images import is_image_path

        image = is_image_path(real.name)
        try:
            f = open_readable_file(dir_fd, real.name, shown, binary_ok=image)
        finally:
            os.close(dir_fd)
        if image:
            with f:
                return read_image(f, shown)
        with f:
            info = os.fstat(f.fileno())
            if offset is None and limit is None and info.st_size > WHOLE_FILE_LIMIT:
                raise FileReadError(
                    f"{shown} is {human_size(info.st_size)}, over the {WHOLE_FILE_LIMIT // 1024} KB limit for "
                    "reading a whole file. Read it in pages: read_file(file_path, offset=1, limit=2000), then "
                    "offset=2001 and so on; or grep for the lines you need."
                )
            page = read_page(f, *page_bounds(offset, limit))
            if info.st_size <= HASH_LIMIT_BYTES:  # the tracker hashes what was read, from this descriptor
                f.seek(0)
                self.tracker.record(real, f.read(), info)
            else:
                self.tracker.record(real, None, info)
        return render_page(page, shown)

    def _access_read(self, real: Path, shown: str) -> bytes:
        assert self.file_access is not None
        try:
            return self.file_access.read_text(real).encode("utf-8")
        except FileNotFoundError:
            raise FileReadError(f"{shown} does not exist.") from None

    def _read_through_access(self, real: Path, shown: str, offset: int | None, limit: int | None) -> str:
        data = self._access_read(real, shown)
        if offset is None and limit is None and len(data) > WHOLE_FILE_LIMIT:
            raise FileReadError(
                f"{shown} is {human_size(len(data))}, over the {WHOLE_FILE_LIMIT // 1024} KB limit for reading a "
                "whole file. Read it in pages (offset/limit) or grep for the lines you need."
            )
        page = page_of(data, *page_bounds(offset, limit))
        self.tracker.record(real, data, content_stat(data))
        return render_page(page, shown)

    def _write_through_access(self, real: Path, shown: str, content: str) -> str:
        assert self.file_access is not None
        try:
            data = self.file_access.read_text(real).encode("utf-8")
        except FileNotFoundError:
            data = None
        if data is None:
            new_data, verb = content.encode("utf-8"), "Created"
        else:
            self.tracker.check_current(real, data, shown, content_stat(data))
            _, fmt = decode_text(data, shown)
            new_data, verb = fmt.encode(fmt.apply(content)), "Overwrote"
        self.file_access.write_text(real, new_data.decode("utf-8"))
        self.tracker.record(real, new_data, content_stat(new_data))
        return _written(verb, shown, new_data)

    def _apply_through_access(self, real: Path, shown: str, edits: list[Edit]) -> str:
        assert self.file_access is not None
        try:
            data = self.file_access.read_text(real).encode("utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(f"{shown} does not exist; use write_file to create it.") from None
        self.tracker.check_current(real, data, shown, content_stat(data))
        text, fmt = decode_text(data, shown)
        new_text, replaced = apply_edits(text, fmt, edits)
        new_text = fmt.keep_final_newline(new_text)
        new_data = fmt.encode(new_text)
        self.file_access.write_text(real, new_data.decode("utf-8"))
        self.tracker.record(real, new_data, content_stat(new_data))
        plural = "" if replaced == 1 else "s"
        return f"Edited {shown}: {replaced} replacement{plural}.\n{short_diff(text, new_text, shown)}"

    # -- writing --------------------------------------------------------------------------

    def _existing_regular(self, dir_fd: int, name: str, shown: str) -> os.stat_result | None:
        """The lstat of the file to be replaced, None if there is none; refuses what is not a
        regular file (a symlink here appeared after the path was checked)."""
        info = lstat_at(dir_fd, name)
        if info is None:
            return None
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{shown} is a directory.")
        if stat.S_ISLNK(info.st_mode):
            raise changed_error(shown)
        if not stat.S_ISREG(info.st_mode):
            raise PermissionError(f"{shown} is not a regular file; refusing to write it.")
        return info

    @staticmethod
    def _read_at(dir_fd: int, name: str) -> tuple[bytes, os.stat_result]:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as f:
            return f.read(), os.fstat(fd)

    def _write_at(self, dir_fd: int, real: Path, new_data: bytes, existing: os.stat_result | None) -> None:
        self.temp_cleaner.sweep_once(dir_fd)
        written = atomic_write_at(dir_fd, real.name, new_data, existing)
        self.tracker.record(real, new_data, written)

    def write_file(self, file_path: str, content: str) -> str:
        """Create a file, or overwrite one you have read in this session.

        Creates parent directories. To change part of a file use edit_file instead.

        Args:
            file_path: Path of the file.
            content: The complete new content.
        """
        real = self.sandbox.resolve(file_path)
        shown = self.sandbox.display(real)
        created = content.encode("utf-8")  # text that cannot be encoded fails before any folder is made
        if self.file_access is not None:
            return self._write_through_access(real, shown, content)
        try:
            dir_fd = self.sandbox.open_parent(real, create=True)
        except NotADirectoryError:
            raise NotADirectoryError(f"{shown} cannot be created: part of its path is a file, not a folder.") from None
        try:
            existing = self._existing_regular(dir_fd, real.name, shown)
            if existing is not None:
                data, info = self._read_at(dir_fd, real.name)
                self.tracker.check_current(real, data, shown, info)
                _, fmt = decode_text(data, shown)
                new_data = fmt.encode(fmt.apply(content))
                verb = "Overwrote"
            else:
                new_data = created
                verb = "Created"
            self._write_at(dir_fd, real, new_data, existing)
        finally:
            os.close(dir_fd)
        return _written(verb, shown, new_data)

    def _apply(self, file_path: str, edits: list[Edit]) -> str:
        real = self.sandbox.resolve(file_path)
        shown = self.sandbox.display(real)
        missing = f"{shown} does not exist; use write_file to create it."
        if self.file_access is not None:
            return self._apply_through_access(real, shown, edits)
        try:
            dir_fd = self.sandbox.open_parent(real)
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundError(missing) from None
        try:
            existing = self._existing_regular(dir_fd, real.name, shown)
            if existing is None:
                raise FileNotFoundError(missing)
            if existing.st_size > self.max_edit_bytes:
                raise FileEditError(
                    f"{shown} is {human_size(existing.st_size)}, over the {human_size(self.max_edit_bytes)} "
                    "limit for edit_file/multi_edit_file (an edit holds the whole file in memory several "
                    "times). Change it with execute instead (e.g. sed -i 's/old/new/' FILE, or a short "
                    "python script), or split it into smaller files."
                )
            data, info = self._read_at(dir_fd, real.name)
            self.tracker.check_current(real, data, shown, info)
            text, fmt = decode_text(data, shown)
            new_text, replaced = apply_edits(text, fmt, edits)
            new_text = fmt.keep_final_newline(new_text)
            new_data = fmt.encode(new_text)
            self._write_at(dir_fd, real, new_data, existing)
        finally:
            os.close(dir_fd)
        plural = "" if replaced == 1 else "s"
        return f"Edited {shown}: {replaced} replacement{plural}.\n{short_diff(text, new_text, shown)}"

    def edit_file(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
        """Replace exact text in a file you have read in this session.

        old_string must match the file exactly (indentation included, without read_file's line-number prefix) and
        be unique unless replace_all is true; add surrounding lines to make it unique.
        Fails if the file changed on disk since your read (read it again). Returns a diff.

        Args:
            file_path: Path of the file.
            old_string: Exact text to replace (not empty).
            new_string: Replacement text (must differ).
            replace_all: Replace every occurrence (default false).
        """
        return self._apply(file_path, [Edit(old_string, new_string, replace_all)])

    def multi_edit_file(self, file_path: str, edits: list[EditOperation]) -> str:
        """Apply several edit_file replacements to one file, in order, written once.

        If any fails, none is applied. Each edit sees the result of the previous ones.

        Args:
            file_path: Path of the file.
            edits: The replacements, in order.
        """
        if not edits:
            raise FileEditError("edits is empty; give at least one {old_string, new_string}.")
        return self._apply(
            file_path,
            [Edit(e["old_string"], e["new_string"], bool(e.get("replace_all", False))) for e in edits],
        )

    # -- searching ------------------------------------------------------------------------

    def glob(self, pattern: str, path: str = ".") -> str:
        """Find files by glob pattern, newest first.

        "**/*.py" matches at any depth, "*.py" only directly in path; {a,b} works.
        Respects .gitignore. At most 200 results.

        Args:
            pattern: Glob relative to path, e.g. "src/**/*.ts".
            path: Directory to search (default: the working directory).
        """
        segments = pattern.replace(os.sep, "/").split("/")
        static: list[str] = []
        while len(segments) > 1 and not has_magic(segments[0]):
            static.append(segments.pop(0))
        prefix = "/".join(static) if static else ""
        if pattern.startswith("/"):
            prefix = "/" + prefix.lstrip("/")
        base = self.sandbox.resolve(os.path.join(path, prefix) if prefix else path)
        shown_base = self.sandbox.display(base)
        if not base.is_dir():
            raise NotADirectoryError(f"{shown_base} is not a directory.")
        rest = "/".join(segments)
        found = search.glob_files(rest, base, root_for(base, self.sandbox.roots), self.rg_path)
        if not found:
            return f"No files match {pattern!r} in {self.sandbox.display(self.sandbox.resolve(path))}."
        shown = [self.sandbox.display(base / rel) for rel, _ in found[:MAX_GLOB_RESULTS]]
        note = f"[{len(found)} files, newest first"
        if len(found) > MAX_GLOB_RESULTS:
            note += f"; showing the first {MAX_GLOB_RESULTS}, narrow the pattern or path"
        return "\n".join(shown) + "\n" + note + "]"

    def grep(
        self,
        pattern: str,
        path: str = ".",
        glob: Optional[str] = None,
        ignore_case: bool = False,
        output_mode: Literal["content", "files_with_matches", "count"] = "content",
        context: int = 0,
        max_results: int = 200,
    ) -> str:
        """Search file contents with a regular expression (ripgrep syntax).

        Output is file:line:text; long lines are shown around the match. Respects .gitignore and
        skips binary files. Results are capped at max_results (a note says when).

        Args:
            pattern: Regular expression, e.g. "def \\w+_handler" (escape literal ( [ . etc.).
            path: File or directory to search (default: the working directory).
            glob: Only files matching this glob: "*.py" matches names at any depth; with "/" it matches
                the path from the working directory, e.g. "src/**/*.{ts,tsx}".
            ignore_case: Case-insensitive search.
            output_mode: "content" (matching lines, the default), "files_with_matches" (paths) or "count".
            context: Lines of context before and after each match (content mode, max 20).
            max_results: Max matching lines (content) or files (other modes); default 200, max 2000.
        """
        target = self.sandbox.resolve(path)
        shown = self.sandbox.display(target)
        if not target.exists():
            raise FileNotFoundError(f"{shown} does not exist.")
        request = search.GrepRequest(
            pattern=pattern,
            target=target,
            glob=glob or None,
            ignore_case=ignore_case,
            output_mode=output_mode,
            context=max(0, min(int(context), 20)),
            max_results=max(1, min(int(max_results), search.MAX_RESULTS_CAP)),
        )
        root = root_for(target, self.sandbox.roots)
        cwd = self.sandbox.work_dir if target.is_relative_to(self.sandbox.work_dir) else root
        outcome = None
        if self.rg_path:
            try:
                outcome = search.grep_with_rg(self.rg_path, request, cwd)
            except OSError:  # the rg binary went missing or cannot run: search in Python
                outcome = None
        if outcome is None:
            outcome = search.grep_with_python(request, root, cwd)
        return search.render_grep(outcome, request, shown)


def page_bounds(offset: int | None, limit: int | None) -> tuple[int, int]:
    """read_file's first line and line count (at most DEFAULT_LIMIT) from its arguments."""
    start = 1 if offset is None else offset
    count = DEFAULT_LIMIT if limit is None else limit
    if start < 1:
        raise FileReadError(f"offset must be 1 or more (lines are numbered from 1), got {start}.")
    if count < 1:
        raise FileReadError(f"limit must be 1 or more, got {count}.")
    return start, min(count, DEFAULT_LIMIT)


def _written(verb: str, shown: str, data: bytes) -> str:
    """What write_file tells the model: "Created notes.txt (1 line, 12 B)."."""
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return f"{verb} {shown} ({lines:,} line{'' if lines == 1 else 's'}, {human_size(len(data))})."
