"""Checkpoints: the turns of one session, their snapshots, and undo / redo / rewind.

The host (REPL, `-p`, an editor integration) makes one `Checkpoints` per project and tells
it which session it works for; the agent loop calls `begin_turn`, `snapshot` after a step
that may have changed files, and `end_turn`. Everything here is blocking (git runs as a
child process): async callers use `asyncio.to_thread`.

A session's journal (its turns, what each changed, which are undone) is a JSON file in the
shadow repository; its snapshots are commits there, kept alive by `refs/agentica/<session>`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
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
from agentica_cli.checkpoints.shadow import (
    CheckpointError,
    ShadowRepo,
    git_available,
)

__all__ = ["Checkpoints", "RestoreResult", "SnapshotInfo", "Turn", "conversation_cut"]

NO_GIT = ("no git program found: checkpoints are off (/diff, /undo and /rewind need git; "
          "install git to have every change, shell commands' included, recorded)")
MAX_FILES = 100_000  # more new or changed files than this in one snapshot: not a project (e.g. $HOME)


class Checkpoints(SessionJournal):
    """Snapshots of one project's work tree, per session; see the module docstring."""

    def __init__(self, project: Path, *, session_id: str | None = None, max_file_size: int = 10_000_000,
                 keep_sessions: int = 50, keep_days: float = 30, max_files: int = MAX_FILES):
        self.project = Path(os.path.realpath(project))
        self.max_file_size = max_file_size
        self.keep_sessions = keep_sessions
        self.keep_days = keep_days
        self.max_files = max_files
        # Why checkpoints are off ("" while on); the loop tells the user once (disabled_told).
        self.disabled = "" if git_available() else NO_GIT
        self.disabled_told = False
        self._session = ""
        self._repo: ShadowRepo | None = None
        self._ref = ""  # the commit refs/agentica/<session> was last set to by this object
        self._told_skipped: set[str] = set()
        self.journal: dict[str, Any] = {}
        self.session_id = session_id or f"nosession-{secrets.token_hex(4)}"

    # -- the session ---------------------------------------------------------------------

    def _session_changed(self) -> None:
        self._repo = None
        self._ref = ""
        self.journal = {}

    @property
    def repo(self) -> ShadowRepo:
        if self.disabled:
            raise CheckpointError(self.disabled)
        if self._repo is None:
            repo = ShadowRepo(self.project, index_name=f"index-{self._session}", max_file_size=self.max_file_size)
            try:
                repo.ensure()
            except (OSError, CheckpointError) as err:
                self.disabled = f"checkpoints are off: {err}"
                raise CheckpointError(self.disabled) from None
            self._repo = repo
            self.journal = self._load()
        return self._repo

    def open(self) -> None:
        """Create or open the shadow repository and load the journal (what the first snapshot
        would do first); a failure leaves checkpoints off (`disabled`) and is not raised."""
        with contextlib.suppress(CheckpointError):
            self.repo  # noqa: B018 - opens it

    def _journal_path(self) -> Path:
        return self.repo.git_dir / "sessions" / f"{self._session}.json"

    def _empty_journal(self) -> dict[str, Any]:
        return {"session": self._session, "project": str(self.project), "turns": [], "head": "", "last": ""}

    def _save(self) -> None:
        write_json_privately(self._journal_path(), self.journal)
        last = self.journal.get("last")
        if last and last != self._ref:
            self.repo.set_ref(f"refs/agentica/{self._session}", last)  # keeps the snapshots from gc
            self._ref = last

    def _saved(self) -> bool:
        """Save the journal; a failure turns checkpoints off rather than breaking the turn."""
        try:
            self._save()
            return True
        except (CheckpointError, OSError) as err:
            self.disabled = self.disabled or f"checkpoints are off: could not save the journal: {err}"
            return False

    def turns(self) -> list[Turn]:
        try:
            self.repo  # noqa: B018 - loads the journal
        except CheckpointError:
            return []
        return super().turns()

    # -- snapshots ------------------------------------------------------------------------

    def _snapshot(self, label: str, turn: int) -> SnapshotInfo:
        repo = self.repo
        previous = self.journal.get("last") or None
        # The tree this session's index wrote last: when git reports no change against the
        # index, that is the tree (one git call instead of four).
        known = self.journal.get("last_tree", "") if repo.index.exists() else ""
        state = repo.record(previous, f"{label} {turn} of {self._session}", max_files=self.max_files,
                            parent_tree=known)
        self.journal["last"], self.journal["last_tree"] = state.commit, state.tree
        changed = [c.path for c in repo.changes(previous, state.commit)] if previous else []
        new = [path for path in state.skipped if path not in self._told_skipped]
        self._told_skipped.update(new)
        notes = []
        if new:
            notes.append(f"Left out of checkpoints (larger than {self.max_file_size:,} bytes; /undo cannot restore "
                         f"them): {_listed(new)}")
        unread = [path for path in state.unreadable if f"unreadable:{path}" not in self._told_skipped]
        self._told_skipped.update(f"unreadable:{path}" for path in unread)
        if unread:
            notes.append(f"Could not be read for the checkpoint (their last recorded state is kept; /undo cannot "
                         f"restore a later change to them): {_listed(unread)}")
        return SnapshotInfo(state.commit, label, turn, changed, state.skipped, "\n".join(notes))

    def _guard(self, label: str, turn: int) -> SnapshotInfo | None:
        """A snapshot, or None once checkpoints are off (the reason is in `disabled`, which
        the loop tells the user). The running turn is marked as failed, so that /undo says it
        cannot restore it instead of undoing an earlier turn as if this one were not there."""
        try:
            return self._snapshot(label, turn)
        except (CheckpointError, OSError) as err:
            self.disabled = self.disabled or f"checkpoints are off: the snapshot failed: {err}"
            self._mark_failed(str(err))
            return None

    def _mark_failed(self, why: str, *, new_turn: Turn | None = None) -> None:
        """Record in the journal that the running turn (or `new_turn`, whose first snapshot
        failed) could not be snapshotted."""
        if self._repo is None or not isinstance(self.journal.get("turns"), list):
            return  # the repository never opened: --undo finds checkpoints off
        turns = super().turns()
        if new_turn is not None:
            new_turn.failed = why
            turns.append(new_turn)
        else:
            running = turns[-1] if turns and not turns[-1].after else None
            if running is None or running.failed:
                return
            running.failed = why
        self._put_turns(turns)
        try:
            write_json_privately(self._repo.git_dir / "sessions" / f"{self._session}.json", self.journal)
        except OSError:
            pass  # the journal cannot be written either: nothing more to do here

    # -- who changed what during a turn ---------------------------------------------------

    def before_tools(self) -> None:
        """Called just before a step's tools run: what changed since the last snapshot changed
        while the model was thinking, so not by the agent's tools (the user, an editor, a
        second agent, or a background command). Those paths are noted for the running turn."""
        if self.disabled:
            return
        turns = self.turns()
        if not turns or turns[-1].after:
            return
        info = self._guard("before_tools", turns[-1].number)
        if info is not None and info.files:
            running = self.journal.setdefault("running", {"agent": [], "outside": []})
            running["outside"] = sorted(set(running.get("outside", [])) | set(info.files))

    def _by_agent(self, info: SnapshotInfo | None) -> None:
        if info is not None and info.files:
            running = self.journal.setdefault("running", {"agent": [], "outside": []})
            running["agent"] = sorted(set(running.get("agent", [])) | set(info.files))

    def begin_turn(self, prompt: str, message_index: int = 0, *, save: bool = True) -> SnapshotInfo | None:
        """Snapshot the tree before a turn. Undone turns can no longer be redone: dropped.

        `save=False` leaves writing the journal to a `save_journal()` call queued right after
        (the agent loop's worker does so: the loop then waits for the scan only, and a step
        that may change files snapshots behind that save, so its tools run after it anyway)."""
        if self.disabled:
            return None
        try:
            turns = [t for t in self.turns() if not t.undone]
        except CheckpointError:
            return None
        number = self._next_number(turns)
        try:
            info = self._snapshot("turn_start", number)
        except (CheckpointError, OSError) as err:
            self.disabled = self.disabled or f"checkpoints are off: the snapshot failed: {err}"
            self._mark_failed(str(err), new_turn=Turn(number, prompt, time.time(), "", message_index=message_index))
            return None
        self.journal["running"] = {"agent": [], "outside": []}
        turns.append(Turn(number, prompt, time.time(), info.commit, message_index=message_index))
        self._put_turns(turns)
        if not save:
            return info
        return info if self._saved() else None

    def save_journal(self) -> bool:
        """Write the journal (after `begin_turn(save=False)`); False, and checkpoints off
        with the reason in `disabled`, when it cannot be written."""
        if self.disabled or self._repo is None:
            return False
        return self._saved()

    def snapshot(self, label: str = "step") -> SnapshotInfo | None:
        """Snapshot during the running turn (after a tool step that may have changed files)."""
        if self.disabled:
            return None
        turns = self.turns()
        running = turns[-1] if turns and not turns[-1].after else None
        info = self._guard(label, running.number if running else 0)
        if running is not None:
            self._by_agent(info)
        return info

    def end_turn(self, *, take_snapshot: bool = True) -> SnapshotInfo | None:
        """Close the running turn: its `after` is a fresh snapshot (or the last one taken,
        when the loop already snapshotted after its last step)."""
        if self.disabled:
            return None
        turns = self.turns()
        if not turns or turns[-1].after:
            return None
        turn = turns[-1]
        info = self._guard("turn_end", turn.number) if take_snapshot else None
        if take_snapshot and info is None:
            return None  # the snapshot failed: the turn is marked failed, /undo refuses it
        self._by_agent(info)  # a tool stopped halfway (a cancelled turn): what it left is the agent's
        turn.after = info.commit if info else self.journal["last"]
        try:
            changed = [c.path for c in self.repo.changes(turn.before, turn.after)]
        except CheckpointError as err:
            self.disabled = self.disabled or f"checkpoints are off: {err}"
            return None
        running = self.journal.pop("running", None) or {}
        by_agent, outside = set(running.get("agent", [])), set(running.get("outside", []))
        turn.outside = sorted(p for p in changed if p in outside)
        turn.files = [p for p in changed if p in by_agent or p not in outside]
        self.journal["head"] = turn.after
        self._put_turns(turns)
        return info if self._saved() else None

    # -- looking ---------------------------------------------------------------------------

    def current(self) -> str:
        """A snapshot of the tree as it is now (not part of any turn)."""
        return self._snapshot("now", 0).commit

    def diff(self, turn: int | None = None) -> str:
        """A unified diff: of turn `turn` (before -> after), or of the whole session (the
        snapshot before its first turn -> the tree now). "" when nothing changed."""
        turns = self.turns()
        if not turns:
            return ""
        if turn is None:
            return self.repo.patch(turns[0].before, self.current())
        chosen = next((t for t in turns if t.number == turn), None)
        if chosen is None:
            raise CheckpointError(f"no turn {turn} in this session")
        return self.repo.patch(chosen.before, chosen.after or self.current())

    # -- undo / redo / rewind ----------------------------------------------------------------

    def _restore(self, target: str, expected: str, paths: list[str], force: bool,
                 during: tuple[str, ...] | list[str] = ()) -> tuple[list[str], list[str]]:
        """Move `paths` (the files some turns changed) to their state in `target`. A path
        that differs now from `expected` (the agent's last known state of it) was changed by
        someone else: a conflict, as is a path in `during` (changed by someone else while the
        turn ran); without `force` nothing is touched. Afterwards every path is checked: one
        that did not reach its state in `target` is an error naming it, never a success."""
        repo = self.repo
        now = self.current()
        planned = sorted(paths)
        conflicts = sorted({c.path for c in repo.changes(expected, now, planned)} | (set(during) & set(planned)))
        if conflicts and not force:
            return planned, conflicts
        repo.move(repo.changes(now, target, planned), target)
        self.journal["last_tree"] = ""  # checkout rewrote the index: the next snapshot writes its tree
        missed = sorted(c.path for c in repo.changes(self.current(), target, planned))
        if missed:
            raise CheckpointError(f"{len(missed)} file(s) could not be put back: {_listed(missed)}")
        return planned, conflicts

    def _put_turn_back(self, turn: Turn, *, undo: bool, force: bool) -> tuple[list[str], list[str]]:
        if undo:
            return self._restore(turn.before, turn.after, turn.files, force, turn.outside)
        return self._restore(turn.after, turn.before, turn.files, force)

    def _after_restore(self, label: str, turns: list[Turn], number: int) -> None:
        info = self._snapshot(label, number)
        self.journal["head"] = info.commit
        self._put_turns(turns)
        self._save()

    def rewind(self, number: int, *, force: bool = False) -> RestoreResult:
        """Put every file back as it was before turn `number`; it and later turns count as
        undone (/redo brings them back one by one, a new prompt drops them)."""
        turns = self.turns()
        turn = next((t for t in turns if t.number == number), None)
        if turn is None:
            return RestoreResult(False, reason=f"no turn {number} in this session")
        later = [t for t in turns if t.number >= number and not t.undone]
        failed = next((t for t in later if t.failed), None)
        if failed is not None:
            return RestoreResult(False, turn, reason=f"turn {failed.number}'s snapshot failed ({failed.failed}): "
                                                     "what it changed was not recorded, so it cannot be rewound")
        paths = sorted({path for t in later for path in t.files})
        during = sorted({path for t in later for path in t.outside})
        expected = self.journal.get("head") or turn.before
        planned, conflicts = self._restore(turn.before, expected, paths, force, during)
        if conflicts and not force:
            return RestoreResult(False, turn, planned, conflicts, during=sorted(set(conflicts) & set(during)))
        for each in later:
            each.undone = True
        self._after_restore("rewind", turns, number)
        return RestoreResult(True, turn, planned, conflicts)

    def prune(self) -> list[str]:
        """Forget old sessions of this project and old projects; see prune.py."""
        from agentica_cli.checkpoints.prune import prune

        if self.disabled:
            return []
        try:
            return prune(self.repo, keep_sessions=self.keep_sessions, keep_days=self.keep_days,
                         current=self._session)
        except (OSError, CheckpointError):
            return []


def _listed(paths: list[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def conversation_cut(messages: list[dict[str, Any]], turn: Turn) -> int | None:
    """Where to cut the history so that it ends just before `turn`'s prompt: the recorded
    index when the prompt is still there, else the last user message with the same text
    (the history was compacted since); None when the prompt is gone (summarised away)."""
    def is_prompt(message: dict[str, Any]) -> bool:
        content = message.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict):  # a prompt with images
            content = content[0].get("text")
        return message.get("role") == "user" and content == turn.prompt

    index = turn.message_index
    if 0 <= index < len(messages) and is_prompt(messages[index]):
        return index
    for position in range(len(messages) - 1, -1, -1):
        if is_prompt(messages[position]):
            return position
    return None
