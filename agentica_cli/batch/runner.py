"""`agentica batch`: run every (task, attempt) not yet in results.jsonl, N at a time, locally
(threads, each driving one `agentica -p` process, forked from the batch's zygote on Linux:
zygote.py) or on Ray; write each result as it ends.

Ctrl-C (SIGINT) or SIGTERM stops cleanly: nothing new starts, the running sessions are ended and
written as cancelled, and the next run with the same results file does those and the rest.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentica_cli.batch.limiter import Budget, backoff_file
from agentica_cli.batch.progress import Progress
from agentica_cli.batch.results import Record, ResultsStore
from agentica_cli.batch.task_run import Control, RunOptions, run_attempt
from agentica_cli.batch.tasks import Task

if TYPE_CHECKING:
    from agentica_cli.batch.zygote_client import Zygote


@dataclass
class BatchSettings:
    output: Path
    workers: int = 1
    attempts: int = 1
    max_tokens: int | None = None
    max_cost: float | None = None


@dataclass
class BatchOutcome:
    records: list[Record]  # every record of the results file, this run's included
    stopped: str | None  # why the batch stopped early (Ctrl-C, a budget), or None
    interrupted: bool


class BatchRun:
    """The state one run of a batch shares between its workers: the results file, the budget,
    the progress display and the control that stops running attempts."""

    def __init__(self, tasks: list[Task], settings: BatchSettings, options: RunOptions, progress: Progress):
        self.settings = settings
        self.options = options
        self.progress = progress
        self.store = ResultsStore(settings.output)
        self.budget = Budget(settings.max_tokens, settings.max_cost)
        self.control = Control()
        self.interrupted = False
        finished = self.store.finished()
        every = [(task, attempt) for task in tasks for attempt in range(1, settings.attempts + 1)]
        self.pending = [(t, a) for t, a in every if (t.id, a) not in finished]
        self.skipped = len(every) - len(self.pending)
        self._lock = threading.Lock()
        self.sessions_started = 0
        self.last_session_start = 0.0

    # -- what running attempts report (task_run.TaskEvents) ------------------------------------

    def phase(self, key: str, phase: str) -> None:
        if phase == "session":
            with self._lock:
                self.sessions_started += 1
                self.last_session_start = time.monotonic()
        self.progress.phase(key, phase)

    def usage(self, key: str, tokens: int, cost: float | None) -> None:
        self.budget.running(key, tokens, cost)
        self.progress.usage(key, tokens, cost)
        self._check_budget()

    # -- the workers ---------------------------------------------------------------------------

    def next_attempt(self) -> tuple[Task, int] | None:
        with self._lock:
            if self.control.stopping.is_set() or not self.pending:
                return None
            return self.pending.pop(0)

    def record(self, record: Record) -> None:
        key = f"{record['id']}#{record['attempt']}"
        self.store.append(record)  # first: a crash right after loses nothing
        self.budget.finished(key, int(record["tokens"]["total"]), record.get("cost"))
        self.progress.finished(record)
        self._check_budget()

    def _check_budget(self) -> None:
        reason = self.budget.exceeded()
        if reason and not self.control.stopping.is_set():
            self.progress.note(f"stopping: {reason}")
            self.control.stop(reason)

    def interrupt(self, reason: str) -> None:
        self.interrupted = True
        self.progress.note(f"stopping: {reason}; running tasks are written as cancelled")
        self.control.stop(reason)

    def outcome(self) -> BatchOutcome:
        return BatchOutcome(self.store.records, self.control.reason or None, self.interrupted)


def _local_worker(run: BatchRun, zygote: Zygote | None) -> None:
    while (item := run.next_attempt()) is not None:
        task, attempt = item
        run.progress.started(f"{task.id}#{attempt}")
        run.record(run_attempt(task, attempt, run.options, run.control, run, zygote))


def _start_zygote(run: BatchRun) -> Zygote | None:
    """The zygote the local sessions fork from (its imports run while the first worktrees are
    made), or None: not wanted, or it could not start (then sessions are plain processes)."""
    from agentica_cli.batch.zygote_client import ENV_SWITCH, Zygote, ZygoteError, take_early, zygote_wanted

    early = take_early()  # started with the command (cli/app.py)
    if not zygote_wanted(run.options.agentica):
        if early is not None:
            early.close()
        return None
    try:
        zygote = early or Zygote(base_url=run.options.base_url)
    except (OSError, ZygoteError) as err:
        run.progress.note(f"sessions start as processes of their own: the zygote did not start ({err})")
        return None
    run.progress.note(f"sessions are forked from a zygote (pid {zygote.process.pid}), which imported agentica "
                      f"once; {ENV_SWITCH}=0 starts each as a process of its own")
    return zygote


@contextmanager
def _stop_on_signals(run: BatchRun) -> Iterator[None]:
    """SIGINT and SIGTERM stop the batch cleanly (the main thread only sets flags and signals
    the sessions' process groups); a second Ctrl-C does the same again, harmlessly."""
    def handler(signum: int, _frame: object) -> None:
        run.interrupt("interrupted (Ctrl-C)" if signum == signal.SIGINT else "terminated")

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class _SummaryPrefetch:
    """The end-of-batch table's imports, done by the main thread (which only waits for the
    workers) once every worker's first session has started and settled into waiting for its
    model: then they cost the batch no wall time, where at the end every batch waited ~40 ms
    for them. Not before: the first sessions' start (CPU-bound, all at once) would share the
    cores with them."""

    SETTLE_S = 0.3  # a session's start to its first request: ~25-100 ms on 2 cores with 8 at once

    def __init__(self, run: BatchRun, workers: int) -> None:
        self.run = run
        self.workers = workers
        self.done = False

    def when_idle(self) -> None:
        run = self.run
        if self.done or run.sessions_started < self.workers:
            return
        if time.monotonic() - run.last_session_start < self.SETTLE_S:
            return
        self.done = True
        from agentica_cli.batch.progress import prefetch_summary

        try:
            prefetch_summary()
        except Exception:
            pass  # print_summary meets the same failure and reports it


def run_local(run: BatchRun) -> None:
    zygote = _start_zygote(run) if run.pending else None
    threads = [threading.Thread(target=_local_worker, args=(run, zygote), name=f"agentica-batch-{n}", daemon=True)
               for n in range(max(1, min(run.settings.workers, len(run.pending))))]
    try:
        for thread in threads:
            thread.start()
        prefetch = _SummaryPrefetch(run, len(threads))
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # short waits: the main thread must get to run the signal handler
                prefetch.when_idle()
    finally:
        if zygote is not None:
            zygote.close()
            if zygote.fallbacks:
                run.progress.note(f"{len(zygote.fallbacks)} session(s) started as processes of their own: the "
                                  f"zygote could not fork them ({zygote.fallbacks[0]})")


def run_batch(tasks: list[Task], settings: BatchSettings, options: RunOptions, progress: Progress,
              backend: Callable[[BatchRun], None] | None = None) -> BatchOutcome:
    """Run the batch with `backend` (run_local, or ray_backend.ray_backend(ADDRESS))."""
    options = replace(options, backoff_file=options.backoff_file or str(backoff_file(uuid.uuid4().hex[:12])))
    run = BatchRun(tasks, settings, options, progress)
    progress.begin(len(run.pending), run.skipped, settings.workers)
    try:
        with _stop_on_signals(run):
            (backend or run_local)(run)
    finally:
        progress.end()
        Path(options.backoff_file).unlink(missing_ok=True)
        Path(options.backoff_file + ".lock").unlink(missing_ok=True)
    return run.outcome()
