"""`agentica batch TASKS.jsonl`: the command's work once its flags are read, by typer
(cli/batch_commands.py) or, for a plain line, without it (cli/plain_flags.py `read_plain_batch_line`:
typer and click cost a batch's own process ~45 ms of CPU before its first worktree, on the same
2 cores its zygote imports on)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from agentica_cli.app import exitcodes


@dataclass
class BatchArgs:
    """The batch command's flags, as read (defaults: typer's)."""

    tasks_file: Path
    output: Path = Path("results.jsonl")
    workers: int = 2
    attempts: int = 1
    max_tokens: int | None = None
    max_cost: float | None = None
    price_in: float | None = None
    price_out: float | None = None
    ray: str | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    api_key_file: Path | None = None
    sandbox: str | None = None
    max_turns: int | None = None
    no_worktrees: bool = False
    plain_lines: bool = False
    checkpoints: bool = False


def count(text: str) -> int | None:
    """A whole number >= 1 (--workers, --attempts, --max-tokens, --max-turns), else None."""
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


def price(text: str) -> float | None:
    """A number >= 0 that is not infinite (--max-cost, --price-in, --price-out), else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 and value != float("inf") else None


def _fail(message: str, code: int = exitcodes.USAGE_ERROR) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return code


def run_batch_command(args: BatchArgs) -> int:
    """Run the batch: load its tasks, run them, print the summary; the command's exit code."""
    import os

    from agentica_cli.batch.limiter import Prices
    from agentica_cli.batch.progress import make_progress, print_summary
    from agentica_cli.batch.results import FINISHED
    from agentica_cli.batch.runner import BatchSettings, run_batch
    from agentica_cli.batch.summary import summarise
    from agentica_cli.batch.task_run import RunOptions
    from agentica_cli.batch.tasks import TaskFileError, load_tasks

    if args.sandbox is not None and args.sandbox not in ("workspace-write", "read-only", "off"):
        return _fail(f"--sandbox {args.sandbox!r}: choose workspace-write, read-only or off")
    try:
        tasks = load_tasks(args.tasks_file)
    except TaskFileError as err:
        return _fail(str(err))
    if args.ray is not None:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            return _fail('--ray needs Ray: pip install "agentica-cli[ray]"')
    options = RunOptions(
        batch_cwd=os.path.realpath(Path.cwd()), backoff_file="", model=args.model, provider=args.provider,
        base_url=args.base_url, sandbox=args.sandbox,
        api_key_file=str(args.api_key_file.expanduser().resolve()) if args.api_key_file else None,
        max_turns=args.max_turns, use_worktrees=not args.no_worktrees, checkpoints=args.checkpoints,
        prices=Prices(args.price_in, args.price_out),
        results_path=os.path.realpath(args.output))
    settings = BatchSettings(output=args.output, workers=args.workers, attempts=args.attempts,
                             max_tokens=args.max_tokens, max_cost=args.max_cost)
    if args.max_cost is not None and args.price_in is None and args.price_out is None:
        sys.stderr.write("agentica: note: --max-cost counts the cost providers report; without --price-in/"
                         "--price-out a provider that reports none is not counted\n")
    try:
        progress = make_progress(None, plain_lines=args.plain_lines or None)
        backend = None
        if args.ray is not None:
            from agentica_cli.batch.ray_backend import ray_backend

            backend = ray_backend(args.ray)
        outcome = run_batch(tasks, settings, options, progress, backend)
    except ValueError as err:  # an --args.output that is not a results file
        return _fail(str(err))
    except RuntimeError as err:  # --args.ray: no cluster at that address, Ray missing
        from agentica_cli.batch.summary import plain

        return _fail(plain(err), exitcodes.MODEL_ERROR)
    mine = {t.id for t in tasks}
    summary = summarise([r for r in outcome.records if r.get("id") in mine])
    print_summary(summary)
    if outcome.interrupted:
        return exitcodes.INTERRUPTED
    if outcome.stopped:
        sys.stderr.write(f"agentica: batch stopped: {outcome.stopped}\n")
    all_done = summary.attempts == len(tasks) * args.attempts and all(t.status == "done" for t in summary.tasks)
    finished = all(s in FINISHED for t in summary.tasks for s in t.statuses.values())
    return exitcodes.OK if all_done and finished else exitcodes.MODEL_ERROR


