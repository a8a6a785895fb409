"""What the extension tests share: writing an extension file (command, agent, skill, hook)
with its folders."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
