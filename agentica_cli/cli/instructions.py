"""Project instructions for the system prompt: AGENTS.md files the user keeps.

~/.agentica/AGENTS.md (personal, every project) comes first, then AGENTS.md from the git
root down to the work dir, so the most specific file is read last and wins on conflicts.
"""

from __future__ import annotations

from pathlib import Path

from agentica_cli.cli.config import agentica_home, find_git_root

FILE_NAME = "AGENTS.md"
MAX_BYTES = 64_000  # per file: a runaway file must not eat the whole context window


def instruction_files(work_dir: Path) -> list[Path]:
    files: list[Path] = []
    personal = agentica_home() / FILE_NAME
    if personal.is_file():
        files.append(personal)
    root = find_git_root(work_dir)
    chain = [work_dir]
    if root is not None:
        chain += [p for p in work_dir.parents if p == root or root in p.parents]
    for folder in reversed(chain):
        candidate = folder / FILE_NAME
        if candidate.is_file() and candidate.resolve() not in {f.resolve() for f in files}:
            files.append(candidate)
    return files


def load_project_instructions(work_dir: Path) -> str:
    parts: list[str] = []
    for path in instruction_files(work_dir):
        try:
            text = path.read_bytes()[:MAX_BYTES].decode("utf-8", errors="replace").strip()
        except OSError:
            continue
        if text:
            parts.append(f"Instructions from {path}:\n\n{text}")
    return "\n\n".join(parts)
