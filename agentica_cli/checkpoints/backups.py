"""Checkpoints without git: copies of the files the file tools are about to change.

Used when no `git` program is found. Before a call of write_file / edit_file /
multi_edit_file runs (a `before_tool_call` hook), the file it names is copied, once per
turn; at the end of the turn its new state is copied too. /undo, /redo, /rewind and /diff
then work on those files only: what shell commands change is not covered (the notice says
so). Same interface as `Checkpoints`.
"""

from __future__ import annotations

import difflib
import os
import shutil
import time
from pathlib import Path
from typing import Any

from agentica_cli.checkpoints.journal import (
    RestoreResult,
    SessionJournal,
    SnapshotInfo,
    Turn,
    write_json_privately,
)
from agentica_cli.checkpoints.shadow import shadow_dir_for
from agentica_cli.private_files import open_private, private_dir

FILE_TOOLS = ("write_file", "edit_file", "multi_edit_file")
NO_GIT_NOTE = ("no git program found: checkpoints cover only the file tools' edits "
               "(write_file, edit_file), not what shell commands change")


class FileBackups(SessionJournal):
    def __init__(self, project: Path, *, session_id: str | None = None, **_: Any):
        self.project = Path(os.path.realpath(project))
        self.disabled = ""  # never off: /undo works on what was copied
        self.notice = NO_GIT_NOTE  # told once by the loop
        self.disabled_told = False
        self._session = ""
        self.journal: dict[str, Any] = {}
        self.session_id = session_id or f"nosession-{os.getpid()}-{int(time.time())}"

    # -- storage -------------------------------------------------------------------------------

    def _session_changed(self) -> None:
        self.journal = self._load()

    @property
    def folder(self) -> Path:
        return shadow_dir_for(self.project) / "backups" / self._session

    def _journal_path(self) -> Path:
        return self.folder / "journal.json"

    def _empty_journal(self) -> dict[str, Any]:
        return {"turns": [], "copies": {}}  # copies: "turn:path" -> {"before": name|None, "after": name|None}

    def _save(self) -> None:
        private_dir(self.folder)
        write_json_privately(self._journal_path(), self.journal)

    def _copy_in(self, rel: str, name: str) -> str | None:
        """Copy the project's file `rel` into the backup folder as `name`; None if it does not exist."""
        source = self.project / rel
        if not source.is_file() or source.is_symlink():
            return None
        private_dir(self.folder)
        with open(source, "rb") as src, open_private(self.folder / name, "wb") as dst:
            shutil.copyfileobj(src, dst)
        self.journal.setdefault("modes", {})[name] = source.stat().st_mode & 0o777
        return name

    def _put_back(self, rel: str, name: str | None) -> None:
        target = self.project / rel
        if name is None:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.agentica-undo")
        shutil.copyfile(self.folder / name, tmp)
        os.chmod(tmp, self.journal.get("modes", {}).get(name, 0o644))
        os.replace(tmp, target)

    def _same(self, rel: str, name: str | None) -> bool:
        target = self.project / rel
        if name is None:
            return not target.exists()
        try:
            return target.read_bytes() == (self.folder / name).read_bytes()
        except OSError:
            return False

    # -- the loop's interface --------------------------------------------------------------------

    def begin_turn(self, prompt: str, message_index: int = 0) -> SnapshotInfo | None:
        turns = [t for t in self.turns() if not t.undone]
        number = self._next_number(turns)
        turns.append(Turn(number, prompt, time.time(), before=f"turn-{number}", message_index=message_index))
        self._put_turns(turns)
        self._save()
        return SnapshotInfo(f"turn-{number}", "turn_start", number, [], [])  # no snapshot: a turn marker

    def snapshot(self, label: str = "step") -> SnapshotInfo | None:
        return None

    def before_tool_call(self, call: Any) -> None:
        """Copy the file a file tool is about to change (first time in this turn). Never
        raises: a failed copy must not block the call (as a hook failure would)."""
        try:
            if getattr(call, "name", "") not in FILE_TOOLS:
                return
            turns = self.turns()
            if not turns or turns[-1].after:
                return
            path = Path(str((getattr(call, "args", None) or {}).get("file_path", "")))
            full = Path(os.path.realpath(self.project / path))
            if self.project not in full.parents:
                return  # outside the project: not ours to restore
            rel = str(full.relative_to(self.project))
            turn = turns[-1]
            key = f"{turn.number}:{rel}"
            if key in self.journal["copies"]:
                return
            name = self._copy_in(rel, f"{turn.number}-{len(self.journal['copies'])}-before")
            self.journal["copies"][key] = {"before": name, "after": None}
            self._save()
        except (OSError, ValueError):
            pass

    def end_turn(self, *, take_snapshot: bool = True) -> SnapshotInfo | None:
        turns = self.turns()
        if not turns or turns[-1].after:
            return None
        turn = turns[-1]
        changed = []
        for index, (key, copy) in enumerate(self.journal["copies"].items()):
            number, _, rel = key.partition(":")
            if number != str(turn.number):
                continue
            copy["after"] = self._copy_in(rel, f"{turn.number}-{index}-after")
            if not self._same(rel, copy["before"]):
                changed.append(rel)
        turn.after = f"turn-{turn.number}-end"
        turn.files = sorted(changed)
        self._put_turns(turns)
        self._save()
        return None

    def _copies(self, turn: Turn) -> dict[str, dict[str, Any]]:
        prefix = f"{turn.number}:"
        return {k[len(prefix):]: v for k, v in self.journal["copies"].items()
                if k.startswith(prefix) and k[len(prefix):] in turn.files}

    # -- diff, undo, redo, rewind ------------------------------------------------------------------

    def _text(self, name: str | None) -> list[str]:
        if name is None:
            return []
        return (self.folder / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)

    def diff(self, turn: int | None = None) -> str:
        chosen = [t for t in self.turns() if turn is None or t.number == turn]
        parts = []
        for each in chosen:
            for rel, copy in sorted(self._copies(each).items()):
                lines = difflib.unified_diff(self._text(copy["before"]), self._text(copy["after"]),
                                             f"a/{rel}", f"b/{rel}")
                parts.append(f"diff --git a/{rel} b/{rel}\n" + "".join(lines))
        return "".join(parts)

    def _move(self, turn: Turn, side: str, other: str, force: bool) -> tuple[list[str], list[str]]:
        copies = self._copies(turn)
        conflicts = sorted(rel for rel, copy in copies.items() if not self._same(rel, copy[other]))
        if conflicts and not force:
            return sorted(copies), conflicts
        for rel, copy in copies.items():
            self._put_back(rel, copy[side])
        return sorted(copies), conflicts

    def _put_turn_back(self, turn: Turn, *, undo: bool, force: bool) -> tuple[list[str], list[str]]:
        return self._move(turn, "before", "after", force) if undo else self._move(turn, "after", "before", force)

    def _after_restore(self, label: str, turns: list[Turn], number: int) -> None:
        self._put_turns(turns)
        self._save()

    def rewind(self, number: int, *, force: bool = False) -> RestoreResult:
        turns = self.turns()
        turn = next((t for t in turns if t.number == number), None)
        if turn is None:
            return RestoreResult(False, reason=f"no turn {number} in this session")
        later = [t for t in turns if t.number >= number and not t.undone and t.after]
        latest: dict[str, dict[str, Any]] = {}  # each file's state after the last turn that changed it
        for each in later:
            latest.update(self._copies(each))
        conflicts = [] if force else sorted(rel for rel, copy in latest.items() if not self._same(rel, copy["after"]))
        if conflicts:
            return RestoreResult(False, turn, sorted({f for t in later for f in t.files}), conflicts)
        for each in reversed(later):  # newest first: each turn's "before" is the previous one's "after"
            self._move(each, "before", "after", True)
            each.undone = True
        self._after_restore("rewind", turns, number)
        return RestoreResult(True, turn, sorted({f for t in later for f in t.files}), [])

    def prune(self) -> list[str]:
        return []
