"""`agentica batch --ray ADDRESS`: each attempt a Ray task (task_run.run_attempt_remote) on the
cluster at ADDRESS; Ray schedules them, the results come back here as each one ends and go to
the same results.jsonl, with the same progress display and resumability as a local batch.

Ray is the scheduler, queue and transport: this module only submits, waits and cancels. At
most --workers attempts are in flight (each asks Ray for one CPU). Every node needs agentica
installed and the tasks' folders (or a `repo` URL it can clone), and its own model settings
(config file or environment of the Ray workers; --base-url/--model/... flags are sent along).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

from agentica_cli.batch.results import Record
from agentica_cli.batch.runner import BatchRun
from agentica_cli.batch.tasks import Task

_CANCEL_WAIT = 10.0  # seconds for cancelled Ray tasks to end their sessions before we stop waiting


class RayMissingError(RuntimeError):
    pass


class RayUnavailableError(RuntimeError):
    pass


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayMissingError('--ray needs Ray: pip install "agentica-cli[ray]"') from None
    return ray


def _cancelled(task: Task, attempt: int, reason: str, started: float, options_model: str | None) -> Record:
    now = time.time()
    return {"id": task.id, "attempt": attempt, "status": "cancelled", "exit_code": None, "check_exit_code": None,
            "check_output": None, "error": reason, "diff": None, "files_changed": [],
            "tokens": {"input": 0, "output": 0, "total": 0}, "cost": None, "session_id": None, "branch": None,
            "worktree": None, "model": task.model or options_model, "started_at": round(started, 3),
            "finished_at": round(now, 3), "duration_s": round(now - started, 3)}


def ray_backend(address: str) -> Callable[[BatchRun], None]:
    """The backend for runner.run_batch that runs on the Ray cluster at `address`."""
    return lambda run: run_on_ray(run, address)


def _check_reachable(address: str) -> None:
    """HOST:PORT (the GCS): fail in seconds when nothing listens there, where ray.init would
    retry for minutes. `auto` and ray:// addresses are left to Ray."""
    import socket

    host, _, port = address.rpartition(":")
    if not host or "://" in address or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as err:
        raise RayUnavailableError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}") from None


def run_on_ray(run: BatchRun, address: str) -> None:
    ray = _ray()
    _check_reachable(address)
    from agentica_cli.batch.task_run import run_attempt_remote

    if not ray.is_initialized():
        ours = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        except Exception as err:  # no cluster there, a version mismatch, ...
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise RayUnavailableError(f"cannot use the Ray cluster at {address}: {first[:300]}") from None
        for sig, handler in ours.items():  # Ctrl-C stays the batch's clean stop, whatever Ray set
            signal.signal(sig, handler)
    remote = ray.remote(num_cpus=1, max_retries=0)(run_attempt_remote)
    in_flight: dict[Any, tuple[Task, int, float]] = {}
    try:
        while True:
            while len(in_flight) < max(1, run.settings.workers) and (item := run.next_pending()) is not None:
                task, attempt = item
                run.progress.started(f"{task.id}#{attempt}")
                run.progress.phase(f"{task.id}#{attempt}", "on ray")
                ref = remote.remote(task.to_dict(), attempt, run.options)
                in_flight[ref] = (task, attempt, time.time())
            if not in_flight or run.control.stopping.is_set():
                break
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.2)
            for ref in ready:
                task, attempt, started = in_flight.pop(ref)
                try:
                    record = ray.get(ref)
                except Exception as err:  # the node died, the task failed inside Ray
                    record = _cancelled(task, attempt, "", started, run.options.model)
                    record.update(status="error", error=f"ray: {type(err).__name__}: {str(err)[:500]}")
                run.record(record)
    finally:
        _cancel_in_flight(ray, run, in_flight)


def _cancel_in_flight(ray: Any, run: BatchRun, in_flight: dict[Any, tuple[Task, int, float]]) -> None:
    """Cancel what is still running (a KeyboardInterrupt in each Ray task ends its session's
    processes) and write each as cancelled; a result that arrives meanwhile is kept instead."""
    if not in_flight:
        return
    reason = run.control.reason or "stopped"
    for ref in in_flight:
        ray.cancel(ref)
    deadline = time.monotonic() + _CANCEL_WAIT
    while in_flight and time.monotonic() < deadline:
        ready, _ = ray.wait(list(in_flight), num_returns=len(in_flight), timeout=0.5)
        for ref in ready:
            task, attempt, started = in_flight.pop(ref)
            try:
                record = ray.get(ref)
            except Exception:  # TaskCancelledError: Ray cancelled it
                record = _cancelled(task, attempt, reason, started, run.options.model)
            run.record(record)  # a result that made it is kept as it is
    for task, attempt, started in in_flight.values():
        run.record(_cancelled(task, attempt, reason, started, run.options.model))
    in_flight.clear()
