"""Paged reading of text files of any size, in bounded memory.

The file is scanned in 1 MB chunks: whole chunks are skipped by counting newlines (C speed,
no decoding) until the requested line, then only the requested lines are kept, each line
capped, and the rest of the file is counted the same way for the footer.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from agentica_cli.tools.local.safe_open import changed_error, lstat_at
from agentica_cli.tools.local.text_format import BINARY_SNIFF_BYTES, UTF8_BOM, looks_binary

CHUNK_BYTES = 1 << 20
MAX_LINE_CHARS = 2000
# A line is kept up to this many bytes: enough for MAX_LINE_CHARS of 4-byte characters.
MAX_LINE_BYTES = MAX_LINE_CHARS * 4
WHOLE_FILE_LIMIT = 256 * 1024
DEFAULT_LIMIT = 2000
MAX_OUTPUT_CHARS = 256 * 1024  # one page is at most about what a whole-file read may be
# Counting the lines after the page costs one pass over the rest of the file; beyond this
# many bytes the total is estimated instead so a page never costs more than ~a second.
EXACT_COUNT_BYTES = 2 << 30


class FileReadError(ValueError):
    """The file cannot be read as asked; the message says what to do instead."""


@dataclass
class Page:
    start: int
    lines: list[tuple[bytes, int]] = field(default_factory=list)  # (capped bytes, full length)
    total_lines: int = 0
    total_estimated: bool = False
    stopped_for_output: bool = False


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def open_readable_file(dir_fd: int, name: str, shown: str, *, binary_ok: bool = False) -> BinaryIO:
    """Open `name` in the folder `dir_fd` for reading, refusing what is not a regular text file.

    The entry is looked at before it is opened (a FIFO would block, a device may act on
    open), is opened without following a symlink, and is checked again once open. The
    caller closes the returned unbuffered file.
    """
    info = lstat_at(dir_fd, name)
    if info is None:
        raise FileReadError(f"{shown} does not exist.")
    if stat.S_ISDIR(info.st_mode):
        raise FileReadError(f"{shown} is a directory; use ls to list it.")
    if stat.S_ISLNK(info.st_mode):  # resolved before, so it appeared since the path check
        raise changed_error(shown)
    if not stat.S_ISREG(info.st_mode):
        raise FileReadError(f"{shown} is not a regular file (device, FIFO or socket); refusing to read it.")
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    f = os.fdopen(fd, "rb", buffering=0)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileReadError(f"{shown} is not a regular file; refusing to read it.")
        if not binary_ok and looks_binary(f.read(BINARY_SNIFF_BYTES)):
            raise FileReadError(f"{shown} is a binary file (NUL byte in the first 8 KB); refusing to read it.")
        f.seek(0)
    except BaseException:
        f.close()
        raise
    return f


MAX_IMAGE_BYTES = 64 * 1024 * 1024


def read_image(f: BinaryIO, shown: str) -> Any:
    """An image file as an ImageResult: a line about it for the model's text, the image itself
    (fitted to the providers' limits) for a model that takes images."""
    from agentica_cli.images import ImageError, ImageResult, prepare

    data = f.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise FileReadError(f"{shown} is over {MAX_IMAGE_BYTES >> 20} MB; too large to look at as an image.")
    try:
        image = prepare(data, shown)
    except ImageError as err:
        raise FileReadError(str(err)) from None
    return ImageResult(f"Image {image.describe()}.", [image])


def read_page(f: BinaryIO, start: int, limit: int) -> Page:
    """Lines start..start+limit-1 (1-based) of the open file `f` (read from its start) and
    the file's line count, in bounded memory."""
    page = Page(start=start)
    f.seek(0)
    chunk = f.read(CHUNK_BYTES)
    pos = 0
    line_no = 1
    # Skip to the first wanted line, a chunk at a time.
    while chunk and line_no < start:
        need = start - line_no
        in_chunk = chunk.count(b"\n", pos)
        if in_chunk < need:
            line_no += in_chunk
            chunk, pos = f.read(CHUNK_BYTES), 0
            continue
        for _ in range(need):
            pos = chunk.index(b"\n", pos) + 1
        line_no = start
    if line_no < start:
        # EOF before the wanted line: line_no-1 complete lines, plus a final partial line.
        page.total_lines = line_no if _ends_without_newline(f) else line_no - 1
        return page

    # Collect the wanted lines, each capped at MAX_LINE_BYTES.
    current = bytearray()
    current_len = 0
    output_chars = 0
    while len(page.lines) < limit:
        if pos >= len(chunk):
            chunk, pos = f.read(CHUNK_BYTES), 0
            if not chunk:
                break
        nl = chunk.find(b"\n", pos)
        end = nl if nl != -1 else len(chunk)
        if len(current) < MAX_LINE_BYTES:
            current += chunk[pos:min(end, pos + MAX_LINE_BYTES - len(current))]
        current_len += end - pos
        if nl == -1:
            pos = len(chunk)
            continue
        pos = nl + 1
        page.lines.append((bytes(current), current_len))
        output_chars += min(current_len, MAX_LINE_CHARS) + 8
        current, current_len = bytearray(), 0
        if output_chars >= MAX_OUTPUT_CHARS and len(page.lines) < limit:
            page.stopped_for_output = True
            break
    at_eof = not chunk
    if at_eof and current_len:
        page.lines.append((bytes(current), current_len))
        current_len = 0
    shown_until = start + len(page.lines) - 1

    # Count what follows the page.
    if at_eof:
        page.total_lines = shown_until
        return page
    remaining_bytes = os.fstat(f.fileno()).st_size - (f.tell() - len(chunk) + pos)
    if remaining_bytes > EXACT_COUNT_BYTES:
        consumed = f.tell() - len(chunk) + pos
        per_line = max(consumed / max(shown_until, 1), 1.0)
        page.total_lines = shown_until + int(remaining_bytes / per_line)
        page.total_estimated = True
        return page
    rest = chunk.count(b"\n", pos)
    last = chunk[-1:] if len(chunk) > pos else b""
    while True:
        chunk = f.read(CHUNK_BYTES)
        if not chunk:
            break
        rest += chunk.count(b"\n")
        last = chunk[-1:]
    if last and last != b"\n":
        rest += 1  # a final line without a newline
    page.total_lines = shown_until + rest
    return page


def _ends_without_newline(f: BinaryIO) -> bool:
    size = os.fstat(f.fileno()).st_size
    if size == 0:
        return False
    f.seek(size - 1)
    return f.read(1) != b"\n"


def format_line(raw: bytes, full_len: int, first: bool) -> str:
    if first and raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM):]
        full_len -= len(UTF8_BOM)
    if raw.endswith(b"\r") and full_len == len(raw):
        raw = raw[:-1]
        full_len -= 1
    text = raw.decode("utf-8", errors="replace")
    if full_len > len(raw) or len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}... [line truncated: {full_len:,} bytes]"
    return text


def render_page(page: Page, shown: str) -> str:
    if not page.lines:
        if page.total_lines == 0:
            return f"({shown} is empty)"
        raise FileReadError(
            f"offset {page.start} is past the end of {shown}, which has {page.total_lines} lines."
        )
    body = [
        f"{page.start + i:6d}\t{format_line(raw, full_len, page.start + i == 1)}"
        for i, (raw, full_len) in enumerate(page.lines)
    ]
    first, last = page.start, page.start + len(page.lines) - 1
    total = f"about {page.total_lines:,}" if page.total_estimated else f"{page.total_lines:,}"
    if last >= page.total_lines and not page.total_estimated and first == 1:
        footer = f"(end of file: all {page.total_lines:,} lines shown)"
    elif last >= page.total_lines and not page.total_estimated:
        footer = f"(end of file: lines {first:,}-{last:,} of {total} shown)"
    else:
        why = " output size limit reached;" if page.stopped_for_output else ""
        footer = f"(lines {first:,}-{last:,} of {total} shown;{why} next page: offset={last + 1})"
    return "\n".join(body) + "\n" + footer
