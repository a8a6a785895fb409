"""/undo and /redo in an editor session: the file tools' edits, turn by turn, put back the way
they were made.

When the editor offers its file system, edits go into its buffers (client_io.ClientFileAccess)
and the disk may never see them, so snapshots of the disk (the REPL's checkpoints) would
restore the wrong text. Instead every write through the editor is journaled: each file's text
before the turn's first write and after its last. /undo writes the "before" texts back through
the editor (a file the turn created is deleted from the disk, if it reached it), /redo the
"after" texts. A file changed in the editor since is a conflict: nothing is changed unless
`/undo force`. Without the editor's file system, the session uses the no-git FileBackups
(agentica_cli.checkpoints.backups) on the disk instead. Either way what shell commands change
is not tracked.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class EditedTurn:
    number: int
    prompt: str
    files: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # path -> (before, after)
    undone: bool = False


class EditJournal:
    """The editor writes of each turn. `wrote` is called from the file tools' worker threads."""

    def __init__(self) -> None:
        self.turns: list[EditedTurn] = []
        self.current: EditedTurn | None = None
        self.lock = threading.Lock()

    def begin(self, prompt: str) -> None:
        with self.lock:
            self.turns = [t for t in self.turns if not t.undone]  # a new turn ends what /redo could bring back
            self.current = EditedTurn((self.turns[-1].number + 1) if self.turns else 1, prompt)

    def end(self) -> None:
        with self.lock:
            if self.current is not None and self.current.files:
                self.turns.append(self.current)
            self.current = None

    def needs_before(self, path: str) -> bool:
        with self.lock:
            return self.current is not None and path not in self.current.files

    def wrote(self, path: str, before: str | None, after: str) -> None:
        with self.lock:
            if self.current is None:
                return
            first = self.current.files.get(path, (before, after))[0]
            self.current.files[path] = (first, after)

    def last_done(self) -> EditedTurn | None:
        return next((t for t in reversed(self.turns) if not t.undone), None)

    def first_undone(self) -> EditedTurn | None:
        return next((t for t in self.turns if t.undone), None)


async def undo(session: Any, force: bool) -> str:
    if session.journal is None:
        return await _backups(session, "undo", force)
    turn = session.journal.last_done()
    if turn is None:
        return "Nothing to undo in this session (the file tools' edits are tracked; commands' changes are not)."
    return await _move(session, turn, "undo", 0, force)


async def redo(session: Any, force: bool) -> str:
    if session.journal is None:
        return await _backups(session, "redo", force)
    turn = session.journal.first_undone()
    if turn is None:
        return "Nothing to redo."
    return await _move(session, turn, "redo", 1, force)


async def _move(session: Any, turn: EditedTurn, action: str, side: int, force: bool) -> str:
    """Put each file of `turn` to its `side` text (0 before, 1 after) through the editor."""
    expected = 1 - side
    conflicts = []
    for path, texts in turn.files.items():
        if await session.read_current(path) != texts[expected]:
            conflicts.append(path)
    if conflicts and not force:
        listed = "\n".join(f"- {p}" for p in conflicts)
        return (f"Changed since the agent's edits (in the editor or by a command):\n{listed}\n"
                f"Nothing was changed; `/{action} force` overwrites them.")
    lines = []
    access = session.file_access  # the editor while it is safe, else the disk beneath the roots (client_io.py)
    for path, texts in turn.files.items():
        text = texts[side]
        if text is None:  # the turn created it: gone again (the editor may still show its tab)
            await asyncio.to_thread(access.remove, Path(path))
            lines.append(f"- {path} (deleted)")
        else:
            await asyncio.to_thread(_put, access, Path(path), text)
            lines.append(f"- {path}")
    turn.undone = side == 0
    verb = "Undid" if action == "undo" else "Redid"
    return f"{verb} turn {turn.number} ({_short(turn.prompt)}): {len(lines)} file(s)\n" + "\n".join(lines)


def _put(access: Any, path: Path, text: str) -> None:
    """Write `text` back without journaling it as one of the turn's edits."""
    journal, access.journal = access.journal, None
    try:
        access.write_text(path, text)
    finally:
        access.journal = journal


async def _backups(session: Any, action: str, force: bool) -> str:
    backups = session.app.agent.checkpoints
    if backups is None:
        return "Checkpoints are off ([checkpoints] enabled = false in config.toml)."
    try:
        result = await asyncio.to_thread(getattr(backups, action), force=force)
    except Exception as exc:
        return f"Could not {action}: {exc}"
    if not result.done and result.conflicts:
        listed = "\n".join(f"- {p}" for p in result.conflicts)
        return f"Changed since the agent's edits:\n{listed}\nNothing was changed; `/{action} force` overwrites them."
    if not result.done:
        return result.reason.capitalize() + "."
    files = "\n".join(f"- {p}" for p in result.files)
    verb = "Undid" if action == "undo" else "Redid"
    return f"{verb} turn {result.turn.number} ({_short(result.turn.prompt)}): {len(result.files)} file(s)\n{files}"


def _short(prompt: Any) -> str:
    from agentica_cli.acp.prompt_blocks import content_text

    line = " ".join(content_text(prompt).split())
    return line if len(line) <= 60 else line[:57] + "..."
