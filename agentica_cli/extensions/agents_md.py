"""/init: what the model is asked, and reading its answer into a new AGENTS.md.

The model explores the repository with read-only tools and answers with the whole file; the
CLI shows the diff against the current AGENTS.md and writes it only once the user approves,
whatever the permission mode (the file steers every later session, so it is always asked).
"""

from __future__ import annotations

import difflib
import re

FILE_NAME = "AGENTS.md"

INIT_SYSTEM = """You write AGENTS.md, the file coding agents read first in this repository.
Explore the repository with the read-only tools (ls, glob, grep, read_file): the README, the
build and package files (pyproject.toml, package.json, Makefile, Cargo.toml, go.mod, ...), the
CI configuration, the test and lint set-up, the source layout, and a few typical source files.
Then answer with the complete AGENTS.md and nothing else, in one ```markdown fenced block.

The file is short (under ~120 lines) and concrete: how to build, run the tests (also a single
test) and lint; the layout (which folder holds what); the conventions a newcomer would get
wrong (naming, error handling, test style, commit rules). Only facts found in the repository:
no generic advice, no guesses. If an AGENTS.md exists, keep what is still true, fix what is
wrong, add what is missing."""


def init_prompt(current: str | None) -> str:
    if current is None:
        return "There is no AGENTS.md yet. Explore the repository and write one."
    return ("Improve the existing AGENTS.md. Its current content:\n\n<current>\n" + current.strip()
            + "\n</current>\n\nExplore the repository, then answer with the whole improved file.")


_FENCE = re.compile(r"```(?:markdown|md)?[ \t]*\n(.*?)\n```[ \t]*(?:\n|$)", re.DOTALL)


def document_from_answer(answer: str) -> str | None:
    """The file in the model's answer: the largest fenced block, else the whole answer;
    None when there is nothing usable."""
    blocks = _FENCE.findall(answer or "")
    text = max(blocks, key=len) if blocks else (answer or "")
    text = text.strip()
    return text + "\n" if text else None


def file_diff(old: str | None, new: str) -> list[str]:
    """Unified diff lines, current file first (an absent file diffs against nothing)."""
    return list(difflib.unified_diff((old or "").splitlines(), new.splitlines(),
                                     fromfile=f"a/{FILE_NAME}" if old is not None else "/dev/null",
                                     tofile=f"b/{FILE_NAME}", lineterm=""))
