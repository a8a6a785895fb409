"""results.jsonl: one line per finished attempt, appended and fsynced as each one ends, so a
crash loses no finished result and a re-run with the same file skips what is in it.

A line is a JSON object: id, attempt, status (done, failed, check-failed, error, cancelled),
exit_code, check_exit_code, check_output, error, diff, files_changed, tokens, cost,
duration_s, timings_s (seconds per phase: worktree, setup, session, commit, check), session_id,
branch, worktree, model, started_at, finished_at. Cancelled attempts
are run again by the next run; the last line of an (id, attempt) wins.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

STATUSES = ("done", "failed", "check-failed", "error", "cancelled")
FINISHED = frozenset(STATUSES) - {"cancelled"}

Record = dict[str, Any]


def key_of(record: Record) -> tuple[str, int]:
    return str(record.get("id")), int(record.get("attempt") or 1)


def read_results(path: Path) -> list[Record]:
    """The records of `path` (none when it does not exist). A torn last line, the trace of a
    crash in the middle of a write, is skipped; a torn line elsewhere is an error."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    records: list[Record] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                continue
            raise ValueError(f"{path}: line {number} is not JSON; is it a results file of agentica batch?") from None
        if not isinstance(record, dict) or "id" not in record or record.get("status") not in STATUSES:
            raise ValueError(f"{path}: line {number} is not a result of agentica batch")
        records.append(record)
    return records


def latest(records: list[Record]) -> dict[tuple[str, int], Record]:
    """The last record of each (id, attempt), in first-seen order."""
    found: dict[tuple[str, int], Record] = {}
    for record in records:
        found[key_of(record)] = record
    return found


class ResultsStore:
    """Appends records to results.jsonl, one whole line per write, flushed and fsynced."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self.records = read_results(path)
        self._drop_torn_tail()

    def _drop_torn_tail(self) -> None:
        """Cut a torn last line (a crash in the middle of a write): it was never a result, and
        the lines appended after it must not leave it in the middle of the file."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            whole = isinstance(json.loads(data[start:]), dict)  # all but its newline was written
        except ValueError:
            whole = False
        with open(self.path, "r+b") as handle:
            if whole:
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
            else:
                handle.truncate(start)
            handle.flush()
            os.fsync(handle.fileno())

    def finished(self) -> set[tuple[str, int]]:
        return {key for key, record in latest(self.records).items() if record["status"] in FINISHED}

    def append(self, record: Record) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as handle:
                handle.write(line.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            self.records.append(record)
