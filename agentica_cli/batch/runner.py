"""`agentica batch`: run every (task, attempt) not yet in results.jsonl, N at a time, locally
(threads, each driving one `agentica -p` process, forked from the batch's zygote on Linux:
zygote.py) or on Ray; write each result as it ends.

Ctrl-C (SIGINT) or SIGTERM stops cleanly: nothing new starts, the running sessions are ended and
written as cancelled, and the next run with the same results file does those and the rest.
"""

from __future__ import annotations

import functools
import signal
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentica_cli.batch.limiter import Budget, backoff_file
from agentica_cli.batch.progress import Progress
from agentica_cli.batch.results import Record, ResultsStore
from agentica_cli.batch.task_run import Attempt, Control, RunOptions
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
        self._changed = threading.Condition()  # guards pending, ready, starting, running, workers_left
        self.ready: list[Attempt] = []  # prepared ahead (_work_while_idle), for the next free worker
        self.preparing = 0  # attempts being prepared ahead right now
        self.starting: set[str] = set()  # attempts in their CPU-bound start (TaskEvents.busy)
        self.running = 0  # attempts the workers run
        self.workers_left = 0

    # -- what running attempts report (task_run.TaskEvents) ------------------------------------

    def phase(self, key: str, phase: str) -> None:
        self.progress.phase(key, phase)

    def busy(self, key: str, starting: bool) -> None:
        with self._changed:
            if starting:
                self.starting.add(key)
            else:
                self.starting.discard(key)
            self._changed.notify_all()

    def usage(self, key: str, tokens: int, cost: float | None) -> None:
        self.budget.running(key, tokens, cost)
        self.progress.usage(key, tokens, cost)
        self._check_budget()

    # -- the workers ---------------------------------------------------------------------------

    def next_pending(self) -> tuple[Task, int] | None:
        """The next (task, attempt) to run elsewhere (Ray); None when none is left or the batch stops."""
        with self._changed:
            if self.control.stopping.is_set() or not self.pending:
                return None
            return self.pending.pop(0)

    def next_attempt(self, zygote: Zygote | None) -> Attempt | None:
        """A worker's next attempt: a prepared one, else the next pending (the worker prepares it),
        else the one being prepared ahead; None when there is nothing left or the batch stops."""
        with self._changed:
            while True:
                if self.control.stopping.is_set():
                    return None
                if self.ready:
                    attempt = self.ready.pop(0)
                elif self.pending:
                    task, number = self.pending.pop(0)
                    attempt = Attempt(task, number, self.options, self.control, self, zygote)
                elif self.preparing:
                    self._changed.wait()
                    continue
                else:
                    return None
                self.running += 1
                return attempt

    def take_over(self) -> list[Attempt]:
        """The first prepared attempt with a ready session, its prompt sent (send_prompt), for
        the worker whose session just wrote its result; [] when there is none or the batch stops."""
        with self._changed:
            if self.control.stopping.is_set() or not self.ready or not self.ready[0].can_take_over():
                return []
            attempt = self.ready.pop(0)
            self.running += 1
            self._changed.notify_all()
        try:
            self.progress.started(attempt.key)
            attempt.send_prompt()
        except Exception:
            pass  # run() reads what the session did with it, and its record says so
        return [attempt]

    def wait_for_starts(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until no attempt is in its CPU-bound start."""
        with self._changed:
            self._changed.wait_for(lambda: not self.starting or self.control.stopping.is_set(), timeout)

    def attempt_over(self) -> None:
        with self._changed:
            self.running -= 1
            self._changed.notify_all()

    def worker_over(self) -> None:
        with self._changed:
            self.workers_left -= 1
            self._changed.notify_all()

    def wait_until_quiet(self, workers: int, for_preparing: bool) -> bool:
        """Wait until every worker runs an attempt and none is in its start (all wait for their
        models): the cores are free. With `for_preparing`, also until fewer than `workers`
        attempts are prepared and one is pending. False: the batch is over or stops."""
        def quiet() -> bool:
            return not self.starting and self.running >= min(workers, self.workers_left)

        def wanted() -> bool:
            return not for_preparing or len(self.ready) < workers

        with self._changed:
            while True:
                if self.control.stopping.is_set() or self.workers_left <= 0:
                    return False
                if for_preparing and not self.pending:
                    return False
                if quiet() and wanted():
                    return True
                self._changed.wait()

    def prepare_next(self, zygote: Zygote | None) -> None:
        """Prepare the first pending attempt (its worktree, its session up to ready) for the
        next worker that frees."""
        with self._changed:
            if not self.pending or self.control.stopping.is_set():
                return
            task, number = self.pending.pop(0)
            self.preparing += 1
        attempt = Attempt(task, number, self.options, self.control, self, zygote, shown=False)
        try:
            attempt.prepare(start_session=True)
        finally:
            with self._changed:
                self.preparing -= 1
                keep = not self.control.stopping.is_set()
                if keep:
                    self.ready.append(attempt)
                self._changed.notify_all()
            if not keep:
                attempt.discard()

    def discard_prepared(self) -> None:
        """The prepared attempts no worker ran (the batch stopped): no record, no worktree left."""
        with self._changed:
            left, self.ready = self.ready, []
        for attempt in left:
            attempt.discard()

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
            self._stop(reason)

    def interrupt(self, reason: str) -> None:
        self.interrupted = True
        self.progress.note(f"stopping: {reason}; running tasks are written as cancelled")
        self._stop(reason)

    def _stop(self, reason: str) -> None:
        self.control.stop(reason)
        with self._changed:
            self._changed.notify_all()  # whoever waits for a prepared attempt or for quiet

    def outcome(self) -> BatchOutcome:
        return BatchOutcome(self.store.records, self.control.reason or None, self.interrupted)


def _local_worker(run: BatchRun, zygote: Zygote | None) -> None:
    """Runs attempts one after another. At a session's result line (a task without a check) the
    worker sends its next, prepared, attempt's prompt at once (take_over), and then ends and
    commits the one before: its session ends and its commit is made while the next model
    request is out, instead of before it. No more than N sessions are ever in a turn."""
    try:
        attempt, shown = run.next_attempt(zygote), False
        while attempt is not None:
            following: list[Attempt] = []
            attempt.on_result = functools.partial(_take_over_into, run, following)
            attempt.before_commit = functools.partial(_after_the_next_requests, run, following)
            try:
                if not shown:
                    run.progress.started(attempt.key)
                run.record(attempt.run())
            except BaseException:
                for taken in following:  # started, and now no worker's: ended, as if never prepared
                    taken.discard()
                    run.attempt_over()
                raise
            finally:
                run.attempt_over()
            attempt, shown = (following[0], True) if following else (run.next_attempt(zygote), False)
    finally:
        run.worker_over()


def _take_over_into(run: BatchRun, following: list[Attempt]) -> None:
    following.extend(run.take_over())


# At most this long a commit waits for the sessions' starts (a slow UserPromptSubmit hook, a
# loaded machine): it then goes ahead beside them, as it would have without waiting.
_COMMIT_WAIT_S = 1.0


def _after_the_next_requests(run: BatchRun, following: list[Attempt]) -> None:
    """Before a worker commits the attempt it took a successor for: that successor's first
    model request, then every other session's start (the workers' hand-overs come in a burst
    when their first answers end together). A commit is a git process or three, on the cores
    the next requests are made on; nothing waits for it but its record. A worker with no
    successor (a task with a check, the batch's end) commits at once: its own next task waits."""
    if not following:
        return
    for taken in following:
        taken.read_until_request()
    run.wait_for_starts(_COMMIT_WAIT_S)


def _work_while_idle(run: BatchRun, zygote: Zygote | None, workers: int) -> None:
    """What the batch does while every worker's session waits for its model: the end-of-batch
    table's imports (~12 ms at the end otherwise), then the next attempts prepared, so a worker
    that frees starts its next session at once instead of making its worktree and starting it.
    Only then: the first sessions' start (CPU-bound, all at once) would share the cores with it."""
    if not run.wait_until_quiet(workers, for_preparing=False):
        return
    from agentica_cli.batch.progress import prefetch_summary

    try:
        prefetch_summary()
    except Exception:
        pass  # print_summary meets the same failure and reports it
    while run.wait_until_quiet(workers, for_preparing=True):
        run.prepare_next(zygote)


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


def run_local(run: BatchRun) -> None:
    zygote = _start_zygote(run) if run.pending else None
    workers = max(1, min(run.settings.workers, len(run.pending)))
    run.workers_left = workers
    threads = [threading.Thread(target=_local_worker, args=(run, zygote), name=f"agentica-batch-{n}", daemon=True)
               for n in range(workers)]
    idle = threading.Thread(target=_work_while_idle, args=(run, zygote, workers), name="agentica-batch-ahead",
                            daemon=True)
    try:
        for thread in [*threads, idle]:
            thread.start()
        for thread in [*threads, idle]:
            while thread.is_alive():
                thread.join(0.2)  # short waits: the main thread must get to run the signal handler
    finally:
        run.discard_prepared()
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
