"""Where the file tools read and write file content: the disk (the default), or somewhere
else that knows better, such as an editor with unsaved buffers (`agentica acp` plugs in the
editor's fs/read_text_file and fs/write_text_file).

Only content goes through a FileAccess: the path sandbox still decides which paths may be
touched (every path given here is already resolved and confined), and listing, glob and
grep still read the disk.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Protocol, runtime_checkable

from agentica_cli.tools.local.file_read import Page, read_page


@runtime_checkable
class FileAccess(Protocol):
    """Text content of files by real absolute path. Called from the tools' worker threads.

    read_text raises FileNotFoundError when there is no such file (nor a buffer for it).
    write_text creates or replaces the file with `text`.
    """

    def read_text(self, path: Path) -> str: ...

    def write_text(self, path: Path, text: str) -> None: ...


def page_of(data: bytes, start: int, limit: int) -> Page:
    """`read_page` over content that is not an open file (an editor's buffer): the same
    paging, line caps and footer as a read from disk."""
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        return read_page(f, start, limit)


def content_stat(data: bytes) -> os.stat_result:
    """A stand-in stat for content with no file behind it: the read tracker compares the
    content's hash (always kept for these), so only the size matters."""
    return os.stat_result((0o100644, 0, 0, 1, 0, 0, len(data), 0, 0, 0))
