"""A session's journal of turns, shared by both kinds of checkpoints (`Checkpoints` with a
shadow git repository, `FileBackups` without git): the records, loading and saving the
JSON file, switching sessions, and the undo / redo steps. How files are snapshotted and
put back is each kind's own (`_put_turn_back`, `_after_restore`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.private_files import open_private


@dataclass
class Turn:
    number: int  # 1-based within the session
    prompt: str
    started: float  # time.time()
    before: str  # the snapshot commit taken as the turn began
    after: str = ""  # the last snapshot of the turn ("" while it runs)
    files: list[str] = field(default_factory=list)  # what the turn changed
    message_index: int = 0  # len(history) when the prompt was added: where a conversation rewind cuts
    undone: bool = False
    # Paths of the turn's change (before -> after) that changed while no tool of the agent
    # ran (the user, an editor, a second agent): the ones also in `files` are conflicts for
    # an undo, the others are not the turn's and are left alone.
    outside: list[str] = field(default_factory=list)
    failed: str = ""  # a snapshot of this turn failed (why): it cannot be undone


@dataclass
class SnapshotInfo:
    """One snapshot taken: what the loop's `checkpoint` event reports."""

    commit: str
    label: str  # "turn_start", "step", "turn_end", "undo", "redo", "rewind"
    turn: int
    files: list[str]  # changed since the previous snapshot
    skipped: list[str]  # left out: over the size limit
    note: str = ""  # for the user, once per file: which files were left out and why


@dataclass
class RestoreResult:
    """What undo / redo / rewind did, or would do. `done` False: nothing changed, because
    there was nothing to do (`reason`) or files changed outside the agent (`conflicts`)."""

    done: bool
    turn: Turn | None = None
    files: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    reason: str = ""
    # Of `conflicts`, those changed outside the agent while the turn ran (the rest changed after it).
    during: list[str] = field(default_factory=list)
    # Changed during the turn by someone else only: not the turn's, so not put back.
    left_alone: list[str] = field(default_factory=list)


def write_json_privately(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` with `data` as JSON in one step (a reader never sees half a file), 0600."""
    tmp = path.with_name(f"{path.stem}.tmp{os.getpid()}")
    # dumps, not dump: dump() runs json's pure-Python encoder and writes each fragment
    # separately (~20,000 writes for a 25-turn journal, 1-3 ms of every turn's start and end,
    # holding the GIL against the event loop); dumps() uses the C encoder, then one write.
    text = json.dumps(data, ensure_ascii=False)
    with open_private(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


class SessionJournal:
    """The turns of one session; subclasses say where the journal lives and how a turn's
    files are put back."""

    _session = ""
    journal: dict[str, Any]

    # -- what a kind of checkpoints provides ------------------------------------------------

    def _journal_path(self) -> Path:
        raise NotImplementedError

    def _empty_journal(self) -> dict[str, Any]:
        return {"turns": []}

    def _session_changed(self) -> None:
        """Called after `session_id` changed."""

    def _put_turn_back(self, turn: Turn, *, undo: bool, force: bool) -> tuple[list[str], list[str]]:
        """Move `turn`'s files to before it (undo) or after it (redo); (files, conflicts)."""
        raise NotImplementedError

    def _after_restore(self, label: str, turns: list[Turn], number: int) -> None:
        """Record a finished undo / redo / rewind (the turns as they now stand)."""
        raise NotImplementedError

    def turns(self) -> list[Turn]:
        known = set(Turn.__dataclass_fields__)
        return [Turn(**{k: v for k, v in t.items() if k in known}) for t in self.journal["turns"]]

    # -- shared ------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self._session

    @session_id.setter
    def session_id(self, value: str) -> None:
        """Work for another session (a resume, /clear): its turns become the ones listed."""
        if value != self._session:
            self._session = value
            self._session_changed()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self._journal_path().read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("turns"), list):
                return data
        except (OSError, ValueError):
            pass
        return self._empty_journal()

    def _put_turns(self, turns: list[Turn]) -> None:
        # A Turn holds strings, numbers and lists of strings: copying the lists is a deep copy
        # (dataclasses.asdict's generic one cost ~0.7 ms a save for 25 turns).
        self.journal["turns"] = [{k: list(v) if isinstance(v, list) else v for k, v in vars(t).items()}
                                 for t in turns]

    @staticmethod
    def _next_number(turns: list[Turn]) -> int:
        return (turns[-1].number + 1) if turns else 1

    def _flip(self, turns: list[Turn], turn: Turn, *, undo: bool, force: bool) -> RestoreResult:
        planned, conflicts = self._put_turn_back(turn, undo=undo, force=force)
        during = sorted(set(conflicts) & set(turn.outside)) if undo else []
        left_alone = sorted(set(turn.outside) - set(turn.files))
        if conflicts and not force:
            return RestoreResult(False, turn, planned, conflicts, during=during, left_alone=left_alone)
        turn.undone = undo
        self._after_restore("undo" if undo else "redo", turns, turn.number)
        return RestoreResult(True, turn, planned, conflicts, during=during, left_alone=left_alone)

    def undo(self, *, force: bool = False) -> RestoreResult:
        """Put the files of the last turn (not yet undone, that changed files) back as they
        were before it. A turn whose snapshot failed is not undone (nor one before it: that
        would leave the failed turn's changes in place and report success)."""
        turns = self.turns()
        live = [t for t in turns if not t.undone and (t.after or t.failed)]
        if not live:
            return RestoreResult(False, reason="nothing to undo in this session")
        if live[-1].failed:
            turn = live[-1]
            return RestoreResult(False, turn, reason=f"turn {turn.number} cannot be undone: its snapshot failed "
                                                     f"({turn.failed}), so what it changed was not recorded")
        return self._flip(turns, live[-1], undo=True, force=force)

    def redo(self, *, force: bool = False) -> RestoreResult:
        """Put back the earliest undone turn (the one the last /undo took away)."""
        turns = self.turns()
        undone = [t for t in turns if t.undone]
        if not undone:
            return RestoreResult(False, reason="nothing to redo")
        return self._flip(turns, undone[0], undo=False, force=force)
