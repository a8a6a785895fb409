"""What a batch's results add up to, as data: per task, which attempts passed, tokens, cost and
time; and the batch's totals. The end-of-run table and `agentica batch report` render this."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from agentica_cli.batch.results import Record, latest

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain(text: object) -> str:
    """Text from a task's run (an error, a file name) without control characters, for a terminal."""
    return _CONTROL.sub("?", str(text))


@dataclass
class TaskSummary:
    id: str
    statuses: dict[int, str] = field(default_factory=dict)  # attempt -> status
    tokens: int = 0
    cost: float | None = None
    duration_s: float = 0.0
    files: set[str] = field(default_factory=set)
    branches: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> list[int]:
        return sorted(a for a, s in self.statuses.items() if s == "done")

    @property
    def status(self) -> str:
        """done when any attempt passed, else the last attempt's status."""
        if self.passed:
            return "done"
        return self.statuses[max(self.statuses)] if self.statuses else "error"


@dataclass
class BatchSummary:
    tasks: list[TaskSummary]
    counts: Counter[str]  # by attempt status
    tokens: int
    cost: float | None
    attempts: int

    def line(self) -> str:
        parts = [f"{n} {status}" for status, n in sorted(self.counts.items())]
        cost = f" · ${self.cost:.4f}" if self.cost is not None else ""
        task_word = "task" if len(self.tasks) == 1 else "tasks"
        counts = ", ".join(parts)
        return f"{len(self.tasks)} {task_word}, {self.attempts} attempt(s): {counts} · {self.tokens:,} tokens{cost}"


def summarise(records: list[Record]) -> BatchSummary:
    by_task: dict[str, TaskSummary] = {}
    counts: Counter[str] = Counter()
    total_tokens = 0
    total_cost: float | None = None
    finals = latest(records)
    for (task_id, attempt), record in finals.items():
        summary = by_task.setdefault(task_id, TaskSummary(task_id))
        summary.statuses[attempt] = record["status"]
        counts[record["status"]] += 1
        tokens = int((record.get("tokens") or {}).get("total") or 0)
        summary.tokens += tokens
        total_tokens += tokens
        if isinstance(record.get("cost"), (int, float)):
            summary.cost = (summary.cost or 0.0) + record["cost"]
            total_cost = (total_cost or 0.0) + record["cost"]
        summary.duration_s += float(record.get("duration_s") or 0)
        summary.files.update(record.get("files_changed") or ())
        if record.get("branch"):
            summary.branches.append(record["branch"])
        if record.get("error") and record["status"] != "done":
            summary.error = str(record["error"])
    for summary in by_task.values():
        summary.branches.sort(key=lambda name: int(name.rsplit("-", 1)[-1]) if name.rsplit("-", 1)[-1].isdigit() else 0)
    return BatchSummary(list(by_task.values()), counts, total_tokens, total_cost, len(finals))
