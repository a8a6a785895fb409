"""The command line of `agentica worktrees list|rm`, `agentica batch TASKS.jsonl` and
`agentica batch report RESULTS.jsonl` (typer). The work is in agentica_cli.worktrees and
agentica_cli.batch."""

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from agentica_cli.app import exitcodes
from agentica_cli.cli import batch_start

BATCH_HELP = """Run many tasks as headless sessions (`agentica -p`), N at a time, each in its own git worktree
(branch agentica/batch-ID-ATTEMPT) when its folder is in a repository; then each task's check (e.g. its
tests) in the sandbox. TASKS.jsonl has one JSON object a line: {"id", "prompt", "cwd"?, "repo"?, "setup"?,
"check"?, "model"?, "permission_mode"?}. Each result is appended to --output as it ends (fsynced); running
again with the same --output skips what is there (Ctrl-C writes running tasks as cancelled: they run
again). A 429 seen by one session makes every session wait its Retry-After. Exit 0 when every task has
an attempt that is done, 1 when not, 130 after Ctrl-C. `agentica batch report RESULTS.jsonl` shows a
results file. See docs/batch.md."""


def _fail(message: str, code: int = exitcodes.USAGE_ERROR) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return code


def worktrees_list(
    work_dir: Annotated[Optional[Path], typer.Option("-C", "--work-dir", help="a folder of the repository")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON array")] = False,
) -> int:
    """List the worktrees `agentica --worktree` and `agentica batch` made in this repository."""
    from agentica_cli.batch.summary import plain
    from agentica_cli.worktrees import WorktreeError, list_worktrees

    try:
        states = list_worktrees((work_dir or Path.cwd()).expanduser())
    except WorktreeError as err:
        return _fail(str(err))
    if as_json:
        print(json.dumps([{"name": s.worktree.name, "path": str(s.worktree.path), "branch": s.worktree.branch,
                           "base": s.worktree.base, "uncommitted": s.uncommitted, "commits": s.commits}
                          for s in states], indent=2))
        return exitcodes.OK
    if not states:
        print("no agentica worktrees here (agentica --worktree [NAME] makes one)")
    for state in states:
        tree = state.worktree
        gone = "" if tree.path.is_dir() else "  (folder gone)"
        print(plain(f"{tree.name}  {tree.branch}  {state.commits} commit(s), {state.uncommitted} uncommitted  "
                    f"{tree.path}{gone}"))
    return exitcodes.OK


def worktrees_rm(
    names: Annotated[list[str], typer.Argument(metavar="NAME...", help="worktree names (agentica worktrees list), "
                                               "or quoted patterns such as 'batch-*'")],
    force: Annotated[bool, typer.Option("--force", help="also drop uncommitted changes and unmerged commits")] = False,
    work_dir: Annotated[Optional[Path], typer.Option("-C", "--work-dir", help="a folder of the repository")] = None,
) -> int:
    """Remove worktrees and their branches (a branch with unmerged commits is kept unless --force).
    A name with * ? or [ is a pattern: 'batch-*' removes every batch task's worktree, keeping the
    branches that hold the tasks' work."""
    from agentica_cli.worktrees import WorktreeError, remove_worktree
    from agentica_cli.worktrees.manager import matching_names

    start = (work_dir or Path.cwd()).expanduser()
    code = exitcodes.OK
    for given in names:
        try:
            found = matching_names(start, given) if any(c in given for c in "*?[") else [given]
        except WorktreeError as err:
            code = _fail(str(err), exitcodes.MODEL_ERROR)
            continue
        if not found:
            code = _fail(f"no agentica worktree matches {given!r} (agentica worktrees list)", exitcodes.MODEL_ERROR)
        for name in found:
            try:
                print(remove_worktree(start, name, force=force))
            except WorktreeError as err:
                code = _fail(str(err), exitcodes.MODEL_ERROR)
    return code


def _price(text: str) -> float:
    value = batch_start.price(text)
    if value is None:
        raise typer.BadParameter(f"expected a number >= 0, got {text!r}")
    return value


def _count(text: str) -> int:
    value = batch_start.count(text)
    if value is None:
        raise typer.BadParameter(f"expected a whole number >= 1, got {text!r}")
    return value


def batch(
    tasks_file: Annotated[Path, typer.Argument(metavar="TASKS.jsonl", help="one task a line")],
    output: Annotated[Path, typer.Option(
        "-o", "--output", metavar="RESULTS.jsonl",
        help="where results go; an existing file is resumed")] = Path("results.jsonl"),
    workers: Annotated[int, typer.Option("-j", "--workers", parser=_count, metavar="N",
                                         help="sessions at once (default 2; with --ray: in flight)")] = 2,
    attempts: Annotated[int, typer.Option("--attempts", parser=_count, metavar="K",
                                          help="run each task K times, each in its own worktree")] = 1,
    max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", parser=_count, metavar="N",
                                                      help="stop the batch once its sessions used N tokens")] = None,
    max_cost: Annotated[Optional[float], typer.Option(
        "--max-cost", parser=_price, metavar="USD",
        help="stop the batch once it cost USD (the provider's reported cost, else --price-in/--price-out)")] = None,
    price_in: Annotated[Optional[float], typer.Option("--price-in", parser=_price, metavar="USD",
                                                      help="USD per million input tokens, for the cost")] = None,
    price_out: Annotated[Optional[float], typer.Option("--price-out", parser=_price, metavar="USD",
                                                       help="USD per million output tokens")] = None,
    ray: Annotated[Optional[str], typer.Option(
        "--ray", metavar="ADDRESS", help="run each task as a Ray task on this cluster (auto, HOST:PORT, "
        "ray://HOST:10001); pip install \"agentica-cli[ray]\"")] = None,
    model: Annotated[Optional[str], typer.Option("-m", "--model", metavar="ID",
                                                 help="the model of tasks that name none")] = None,
    provider: Annotated[Optional[str], typer.Option("--provider", metavar="NAME")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", metavar="URL")] = None,
    api_key_file: Annotated[Optional[Path], typer.Option("--api-key-file", metavar="PATH")] = None,
    sandbox: Annotated[Optional[str], typer.Option(
        "--sandbox", metavar="workspace-write|read-only|off", help="the sessions' and checks' sandbox")] = None,
    max_turns: Annotated[Optional[int], typer.Option("--max-turns", parser=_count, metavar="N",
                                                     help="each session's limit of model requests")] = None,
    no_worktrees: Annotated[bool, typer.Option("--no-worktrees",
                                               help="run tasks in their folders themselves (one at a time "
                                               "per folder is then up to you)")] = False,
    plain_lines: Annotated[bool, typer.Option("--plain", help="plain progress lines even on a terminal")] = False,
    checkpoints: Annotated[bool, typer.Option(
        "--checkpoints", help="sessions in the batch's worktrees take checkpoints too (agentica --undo -C "
        "WORKTREE); without it their work is only committed on their branches")] = False,
) -> int:
    return batch_start.run_batch_command(batch_start.BatchArgs(
        tasks_file=tasks_file, output=output, workers=workers, attempts=attempts, max_tokens=max_tokens,
        max_cost=max_cost, price_in=price_in, price_out=price_out, ray=ray, model=model, provider=provider,
        base_url=base_url, api_key_file=api_key_file, sandbox=sandbox, max_turns=max_turns,
        no_worktrees=no_worktrees, plain_lines=plain_lines, checkpoints=checkpoints))


def batch_report(
    results: Annotated[Path, typer.Argument(metavar="RESULTS.jsonl")],
    as_json: Annotated[bool, typer.Option("--json", help="the summary as JSON")] = False,
) -> int:
    """Show a batch's results: each task's status, passed attempts, files, tokens, cost, time, branch."""
    from agentica_cli.batch.progress import print_summary
    from agentica_cli.batch.results import read_results
    from agentica_cli.batch.summary import summarise

    if not results.exists():
        return _fail(f"{results}: no such file")
    try:
        summary = summarise(read_results(results))
    except ValueError as err:
        return _fail(str(err))
    if as_json:
        print(json.dumps({"tasks": [{"id": t.id, "status": t.status, "statuses": t.statuses, "passed": t.passed,
                                     "files_changed": sorted(t.files), "tokens": t.tokens, "cost": t.cost,
                                     "duration_s": round(t.duration_s, 3), "branches": t.branches}
                                    for t in summary.tasks],
                          "counts": dict(summary.counts), "tokens": summary.tokens, "cost": summary.cost}, indent=2))
    else:
        print_summary(summary)
    return exitcodes.OK


def register(app: typer.Typer) -> None:
    settings = {"help_option_names": ["-h", "--help"]}
    trees = typer.Typer(help="The git worktrees of `agentica --worktree` and `agentica batch`.", no_args_is_help=True,
                        rich_markup_mode=None, context_settings=settings)
    trees.command("list")(worktrees_list)
    trees.command("rm")(worktrees_rm)
    app.add_typer(trees, name="worktrees")
    app.command("batch", help=BATCH_HELP, context_settings=settings)(batch)
    app.command("batch-report", hidden=True, context_settings=settings)(batch_report)
