"""One size budget for every tool result (builtin, user tools, MCP).

A result over `ToolConfig.max_result_tokens` (estimated at 4 characters a token) is saved
whole to a private file and the model gets its head, its tail and the file's path, to page
through with read_file or search with grep (as Claude Code does). Without a limit a 3 MB
MCP result went into the next request, the provider refused it, and every later request of
the conversation carried it again.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

CHARS_PER_TOKEN = 4
HEAD_CHARS = 8000  # what the model sees of an oversized result: the start...
TAIL_CHARS = 2000  # ...and the end (errors and summaries are often last)

_temp_dirs: list[Path] = []


def temporary_results_dir() -> Path:
    """A private folder for a library agent's saved results, removed when Python exits."""
    path = Path(tempfile.mkdtemp(prefix="agentica-tool-results-"))
    _temp_dirs.append(path)
    return path


@atexit.register
def _remove_temp_dirs() -> None:
    for path in _temp_dirs:
        shutil.rmtree(path, ignore_errors=True)


def over_budget(text: str, max_tokens: int | None) -> bool:
    return max_tokens is not None and max_tokens > 0 and len(text) > max_tokens * CHARS_PER_TOKEN


def save_result(text: str, folder: Path, name: str, call_id: str) -> Path:
    """Write `text` to a new 0600 file in `folder` (made 0700) and return its path."""
    from agentica_cli.private_files import open_private

    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{name}-{call_id or int(time.time() * 1000)}")[:120]
    path = folder / f"{stem}.txt"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.txt"
    with open_private(path, "w", encoding="utf-8", errors="replace", exclusive=True) as f:
        f.write(text)
    return path


def bounded_result(text: str, *, max_tokens: int | None, folder: Path | None, name: str, call_id: str) -> str:
    """`text` itself when it fits; else a preview that names the file holding all of it."""
    if not over_budget(text, max_tokens):
        return text
    assert max_tokens is not None
    lines = text.count("\n") + 1
    size = f"{len(text):,} characters, {lines:,} lines, about {len(text) // CHARS_PER_TOKEN:,} tokens"
    head, tail = text[:HEAD_CHARS], text[-TAIL_CHARS:]
    skipped_lines = text.count("\n", HEAD_CHARS, len(text) - TAIL_CHARS)
    try:
        path = save_result(text, folder or temporary_results_dir(), name, call_id)
    except OSError as err:
        where = f"It could not be saved ({err.strerror or err}), so the middle is lost."
    else:
        where = (f"The whole result was saved to {path}: page through it with read_file(file_path=\"{path}\", "
                 "offset=N, limit=M) or search it with grep, rather than asking for all of it again.")
    return (f"[Result too large for the context ({size}; the limit is {max_tokens:,} tokens). {where}]\n"
            f"[First {len(head):,} characters:]\n{head}\n"
            f"[... {len(text) - len(head) - len(tail):,} characters ({skipped_lines:,} line breaks) left out ...]\n"
            f"[Last {len(tail):,} characters:]\n{tail}")


def results_dir_for(configured: str | os.PathLike[str] | None) -> Path:
    """The folder saved results go to: the configured one, else a temporary one."""
    return Path(configured).expanduser() if configured else temporary_results_dir()
