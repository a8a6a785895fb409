"""What `agentica batch` costs beyond its sessions, and how its workers scale.

1. Overhead per task: N tasks in a batch with one worker, against a scripted server that
   answers at once. Each record's timings_s say how long its `agentica -p` process took; the
   rest of the attempt (worktree, commit, diff, the results line) plus the batch process's own
   start and summary (the wall time before the first task and after the last) divided by N is
   the overhead. Target < 150 ms. Beside it, the same N
   tasks as plain `-p` runs, one after another: the wall-time difference (noisy on a loaded
   machine) and the CPU-time difference (batch and all its children, per task, minus one plain
   run's), which load barely moves.
2. Throughput: N workers (1, 2, 4, 8), 2N tasks (3 for N=1), against a scripted server whose
   every answer takes 1 s, for both ways a session starts: forked from the batch's zygote (the
   default on Linux) and as a process of its own (AGENTICA_BATCH_ZYGOTE=0), alternating run by
   run, --repeats batches of each (default 3; each figure is their median, the range printed).
   task time = the median duration of one task when it runs alone (N=1, the same start);
   throughput = tasks finished per task time = 2N x task time / wall time. Target >= 0.9 N up
   to N = 8. A task's duration leaves out the time it waited, prepared ahead, for a worker
   (results' timings_s.waiting). "Once running": N x task time / the median duration of the
   tasks a worker took after the first one ended, i.e. without the batch's and the zygote's
   start (a fixed cost per batch, which a batch of 2N tasks feels more than one of hundreds).
   Beside each figure: the
   CPU per task (the batch and everything below it, from getrusage of the children) and the
   load average when the run started (the machine may be shared).

3. t_ready: seconds from the command's start to its zygote's ready message (read off the
   "zygote" phase of the tasks that waited for it), alone (--ready-runs one-task batches,
   median) and beside each throughput run. With 2N tasks of task time T in two waves,
   tasks per task time <= 2N T / (t_ready + 2T): 0.9 N needs t_ready <= 0.22 T (~0.24 s).
4. The same throughput over a longer batch (--long-waves x N tasks, zygote only): the fixed
   start spread over more waves, as a batch of hundreds feels it. Shown beside the 2N rows,
   whose targets stay as they are.
5. A repository of --big-files files (~6 KB each): 8 tasks over 4 workers against a server that
   answers at once, with --checkpoints. Each task's worktree checks out every file, and its
   session's first checkpoint starts from that checkout (checkpoints.md: it borrows the repository's objects
   and the worktree's index); printed: the median worktree and session phases, the batch's wall
   time, and what ~/.agentica/checkpoints grew by per task.

    .venv/bin/python bench/bench_batch.py [--tasks 6] [--runs 3] [--max-workers 8] [--ready-runs 7] [--repeats 3]
        [--ready-only] [--throughput-only] [--zygote-only] [--long-waves 5] [--big-files 3000]

Prints one `RESULT {json}` line for run_all.py.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import agentica_command, emit_result, folder_bytes, print_machine

from agentica_cli.testing import ScriptedModelServer, turns

OVERHEAD_TARGET_MS = 150.0
THROUGHPUT_TARGET = 0.9


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _repository(path: Path) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "notes.txt").write_text("hello\n")
    _git(path, "add", ".")
    _git(path, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "init")
    return path


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an install has its bytecode: no module compiled at every start
    return {**env, "AGENTICA_HOME": str(home), "NO_COLOR": "1"}


def load_average() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _model_flags(server: ScriptedModelServer, key_file: Path) -> list[str]:
    return ["--base-url", server.base_url, "--api-key-file", str(key_file), "--model", "bench"]


def _tasks_file(path: Path, count: int, prefix: str) -> Path:
    path.write_text("".join(json.dumps({"id": f"{prefix}{n}", "prompt": f"say done ({n})"}) + "\n"
                            for n in range(count)))
    return path


def _batch(cmd: list[str], tasks: Path, output: Path, workers: int, flags: list[str], cwd: Path,
           env: dict[str, str], started: list[float] | None = None) -> float:
    if started is not None:
        started.append(time.time())  # the records' clock: t_ready is measured against it
    start = time.perf_counter()
    done = subprocess.run([*cmd, "batch", str(tasks), "--workers", str(workers), "--output", str(output), *flags],
                          cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"batch failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def overhead(cmd: list[str], work: Path, tasks: int, runs: int, key_file: Path) -> dict[str, float]:
    home = work / "home-overhead"
    home.mkdir()
    env = _env(home)
    repo = _repository(work / "repo-overhead")
    plain_ms: list[float] = []
    session_ms: list[float] = []
    inside_ms: list[float] = []
    versus_ms: list[float] = []
    cpu_s: list[float] = []
    around_ms: list[float] = []
    own_ms: list[float] = []
    cpu_overhead_ms: list[float] = []
    with ScriptedModelServer([turns.text("done")] * (tasks * runs * 2 + 10)) as server:
        flags = _model_flags(server, key_file)
        for run in range(runs):
            plain = []
            cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            for n in range(tasks):
                start = time.perf_counter()
                done = subprocess.run([*cmd, "-p", f"say done ({n})", *flags], cwd=repo, env=env,
                                      stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
                plain.append((time.perf_counter() - start) * 1000)
                if done.returncode != 0:
                    raise SystemExit(f"-p failed: {done.stderr[-2000:]}")
            cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s.append((cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime) / tasks)
            output = work / f"overhead-{run}.results.jsonl"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = _batch(cmd, _tasks_file(work / f"overhead-{run}.jsonl", tasks, f"o{run}-"), output, 1, flags,
                          repo, env) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            batch_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime  # sessions included
            cpu_overhead_ms.append((batch_cpu / tasks - cpu_s[-1]) * 1000)
            records = [json.loads(line) for line in output.read_text().splitlines()]
            # a session prepared ahead (runner.py) started before its prompt: "start" is its time too
            sessions = [(r["timings_s"]["session"] + r["timings_s"].get("start", 0.0)) * 1000 for r in records]
            around = [r["duration_s"] * 1000 - session for r, session in zip(records, sessions, strict=True)]
            # its start-up before the first task and its summary after the last: what no task covers
            # (prepared ahead, a task's start overlaps the one before it, so durations do not add up)
            span = max(r["finished_at"] for r in records) - min(r["started_at"] for r in records)
            batch_itself = wall - span * 1000
            inside = statistics.median(around) + batch_itself / tasks
            plain_ms.append(statistics.median(plain))
            session_ms.append(statistics.median(sessions))
            inside_ms.append(inside)
            around_ms.append(statistics.median(around))
            own_ms.append(batch_itself)
            versus_ms.append((wall - sum(plain)) / tasks)
            print(f"run {run + 1}: per task {statistics.median(around):.0f} ms around the session (worktree, "
                  f"commit, diff, result line) + {batch_itself / tasks:.0f} ms of the batch's own start -> "
                  f"{inside:.0f} ms; session {session_ms[-1]:.0f} ms, plain -p {plain_ms[-1]:.0f} ms; "
                  f"wall against the plain runs: {versus_ms[-1]:+.0f} ms per task; CPU beyond a plain -p run: "
                  f"{cpu_overhead_ms[-1]:+.0f} ms per task")
    return {"plain_p_ms": statistics.median(plain_ms), "session_in_batch_ms": statistics.median(session_ms),
            "overhead_per_task_ms": statistics.median(inside_ms), "around_session_ms": statistics.median(around_ms),
            "batch_own_ms": statistics.median(own_ms),
            "overhead_vs_plain_wall_ms": statistics.median(versus_ms), "cpu_per_plain_p_s": statistics.median(cpu_s),
            "cpu_overhead_per_task_ms": statistics.median(cpu_overhead_ms)}


def zygote_ready(records: list[dict], command_start: float) -> float | None:
    """t_ready: seconds from the command's start to the zygote's ready message, read off the
    tasks that waited for it (their timings_s has a "zygote" phase, which ends when it is ready:
    started_at + worktree + setup + zygote). None when no task waited (or no zygote)."""
    ends = [r["started_at"] + sum(r["timings_s"].get(p, 0.0) for p in ("worktree", "setup", "zygote"))
            for r in records if "zygote" in r.get("timings_s", {})]
    return max(ends) - command_start if ends else None


def taken_at(record: dict) -> float:
    """When a worker took the attempt: its start, or for one prepared ahead (runner.py) the end
    of its wait for a worker (its worktree and session start came before)."""
    timings = record["timings_s"]
    if "waiting" not in timings:
        return record["started_at"]
    return record["started_at"] + sum(timings.get(p, 0.0) for p in ("worktree", "zygote", "start", "waiting"))


def ready_time(cmd: list[str], work: Path, runs: int, key_file: Path) -> dict[str, float]:
    """t_ready alone: `runs` one-task batches against a server that answers at once."""
    home = work / "home-ready"
    home.mkdir()
    env = _env(home)
    repo = _repository(work / "repo-ready")
    ready: list[float] = []
    loads: list[float] = []
    with ScriptedModelServer([turns.text("done")] * (runs + 5)) as server:
        for run in range(runs):
            output = work / f"ready-{run}.results.jsonl"
            started: list[float] = []
            loads.append(load_average())
            _batch(cmd, _tasks_file(work / f"ready-{run}.jsonl", 1, f"r{run}-"), output, 1,
                   _model_flags(server, key_file), repo, env, started)
            value = zygote_ready([json.loads(line) for line in output.read_text().splitlines()], started[0])
            if value is not None:
                ready.append(value)
                print(f"run {run + 1}: command start -> zygote ready {value * 1000:.0f} ms "
                      f"(load average {loads[-1]:.2f})")
    if not ready:
        return {}
    return {"t_ready_s": statistics.median(ready), "t_ready_min_s": min(ready), "load_ready": statistics.median(loads)}


def big_repository(cmd: list[str], work: Path, files: int, key_file: Path, tasks: int = 8,
                   workers: int = 4) -> dict[str, float]:
    """Section 5: a batch in a repository of `files` files."""
    import random

    home = work / "home-big"
    home.mkdir()
    env = _env(home)
    repo = work / "repo-big"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    rnd = random.Random(1)
    for n in range(files):
        folder = repo / f"pkg{n % 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n}.py").write_text("".join(f"x_{rnd.random()} = {rnd.random()}\n" for _ in range(150)))
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "init")
    output = work / "big.results.jsonl"
    with ScriptedModelServer([turns.text("done")] * (tasks + 5)) as server:
        # --checkpoints: what a task costs when its session takes them too (without it, the default,
        # sessions in the batch's worktrees take none)
        wall = _batch(cmd, _tasks_file(work / "big.jsonl", tasks, "b"), output, workers,
                      [*_model_flags(server, key_file), "--checkpoints"], repo, env)
    records = [json.loads(line) for line in output.read_text().splitlines()]
    figures = {"big_files": files, "big_wall_s": wall,
               "big_worktree_s": statistics.median(r["timings_s"]["worktree"] for r in records),
               "big_session_s": statistics.median(r["timings_s"]["session"] for r in records),
               "big_checkpoint_mb_per_task": folder_bytes(home / "checkpoints") / tasks / 1e6,
               "big_git_mb": folder_bytes(repo / ".git") / 1e6}
    print(f"{files}-file repository ({figures['big_git_mb']:.0f} MB of .git), {tasks} tasks over {workers} workers: "
          f"{wall:.1f} s; per task: worktree {figures['big_worktree_s']:.2f} s, session "
          f"{figures['big_session_s']:.2f} s (median), checkpoints {figures['big_checkpoint_mb_per_task']:.2f} MB")
    return figures


STARTS = {"zygote": {}, "process": {"AGENTICA_BATCH_ZYGOTE": "0"}}


def _throughput_run(cmd: list[str], work: Path, name: str, workers: int, flags: list[str],
                    env: dict[str, str]) -> dict[str, Any]:
    """One 2N-task batch (3 tasks for N=1): what its records and the clock say."""
    repo = _repository(work / f"repo-throughput-{name}")
    count = 2 * workers if workers > 1 else 3  # N=1: a median that is not the first task (zygote start)
    output = work / f"throughput-{name}.results.jsonl"
    load = load_average()
    cpu_before = _children_cpu()
    started: list[float] = []
    wall = _batch(cmd, _tasks_file(work / f"throughput-{name}.jsonl", count, f"w{name}-"), output, workers, flags,
                  repo, env, started)
    records = [json.loads(line) for line in output.read_text().splitlines()]
    first_end = min(r["finished_at"] for r in records)
    return {"count": count, "wall": wall, "load": load, "cpu": (_children_cpu() - cpu_before) / count,
            "ready": zygote_ready(records, started[0]), "durations": [r["duration_s"] for r in records],
            # once running: the tasks a worker took after the first one ended (no batch or zygote start)
            "later": [r["duration_s"] for r in records if taken_at(r) >= first_end - 0.05]}


def throughput(cmd: list[str], work: Path, max_workers: int, key_file: Path, starts: tuple[str, ...] = tuple(STARTS),
               long_waves: int = 0, repeats: int = 1) -> dict[str, float]:
    """`repeats`: batches per N and start, the two starts alternating; each figure is the median of
    theirs (one batch of 2N tasks is a few seconds of a machine whose speed drifts). `long_waves`
    > 0: also a batch of long_waves x N tasks per N (zygote only), whose figure is
    throughput_long_N: the batch's fixed start spread over more waves (a steady-state figure)."""
    home = work / "home-throughput"
    home.mkdir()
    env = _env(home)
    figures: dict[str, float] = {}
    task_time = dict.fromkeys(STARTS, 0.0)
    counts = []
    workers = 1
    while workers <= max_workers:
        counts.append(workers)
        workers *= 2
    answers = (2 * len(starts) * repeats + long_waves) * sum(counts) + 10
    with ScriptedModelServer([turns.text("done", delay=1.0)] * answers) as server:
        flags = _model_flags(server, key_file)
        for workers in counts:
            runs: dict[str, list[dict[str, Any]]] = {start: [] for start in STARTS if start in starts}
            for repeat in range(repeats):
                for start in runs:
                    runs[start].append(_throughput_run(cmd, work, f"{start}-{workers}-{repeat}", workers, flags,
                                                       {**env, **STARTS[start]}))
            for start, done in runs.items():
                if workers == 1:  # the task time: a task alone, the same start
                    task_time[start] = statistics.median(d for run in done for d in run["durations"])
                    figures[f"task_time_{start}_s"] = task_time[start]
                suffix = "" if start == "zygote" else "_process"
                rates = [run["count"] * task_time[start] / run["wall"] for run in done]
                # once running: N tasks at once, each as long as the ones started after the first wave
                steadies = [workers * task_time[start] / statistics.median(run["later"])
                            if run["later"] and workers > 1 else rate for run, rate in zip(done, rates, strict=True)]
                rate, steady = statistics.median(rates), statistics.median(steadies)
                cpu, load = statistics.median(run["cpu"] for run in done), done[0]["load"]
                readies = [run["ready"] for run in done if run["ready"] is not None]
                ready = statistics.median(readies) if readies else None
                if ready is not None:
                    figures[f"t_ready_{workers}_s"] = ready
                figures[f"throughput{suffix}_{workers}"] = rate
                figures[f"cpu_per_task{suffix}_{workers}_s"] = cpu
                figures[f"load{suffix}_{workers}"] = load
                figures[f"tasks_per_s{suffix}_{workers}"] = statistics.median(r["count"] / r["wall"] for r in done)
                figures[f"steady_throughput{suffix}_{workers}"] = steady
                verdict = "ok" if rate >= THROUGHPUT_TARGET * workers else "MISSED"
                spread = f" ({min(rates):.2f}-{max(rates):.2f} in {len(rates)} batches)" if len(rates) > 1 else ""
                print(f"N={workers} {start:>7}: {done[0]['count']} tasks in "
                      f"{statistics.median(run['wall'] for run in done):.1f} s; task time {task_time[start]:.2f} s; "
                      f"{rate:.2f} tasks per task time{spread} (target >= {THROUGHPUT_TARGET * workers:.1f}) "
                      f"{verdict}; once running {steady:.2f}; CPU {cpu * 1000:.0f} ms per task; load average "
                      f"{load:.2f}" + (f"; zygote ready {ready * 1000:.0f} ms after the command started"
                                       if ready else ""))
            if long_waves and workers > 1 and "zygote" in starts:
                repo = _repository(work / f"repo-throughput-long-{workers}")
                count = long_waves * workers
                output = work / f"throughput-long-{workers}.results.jsonl"
                load = load_average()
                wall = _batch(cmd, _tasks_file(work / f"throughput-long-{workers}.jsonl", count, f"l{workers}-"),
                              output, workers, flags, repo, env)
                rate = count * task_time["zygote"] / wall
                figures[f"throughput_long_{workers}"] = rate
                figures[f"load_long_{workers}"] = load
                print(f"N={workers}  zygote, {count} tasks ({long_waves} waves): {wall:.1f} s; {rate:.2f} tasks per "
                      f"task time (0.9 N = {THROUGHPUT_TARGET * workers:.1f}); load average {load:.2f}")
    figures["task_time_s"] = figures.get("task_time_zygote_s", float("nan"))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-workers", type=int, default=8)
    parser.add_argument("--throughput-only", action="store_true", help="skip the overhead runs")
    parser.add_argument("--ready-runs", type=int, default=7, help="one-task batches measuring t_ready (0: none)")
    parser.add_argument("--ready-only", action="store_true", help="only t_ready")
    parser.add_argument("--zygote-only", action="store_true", help="throughput: skip the process-start runs")
    parser.add_argument("--repeats", type=int, default=3,
                        help="throughput: 2N-task batches per N and start, their median reported")
    parser.add_argument("--long-waves", type=int, default=5,
                        help="throughput: also a batch of this many x N tasks per N (0: none)")
    parser.add_argument("--big-files", type=int, default=3000,
                        help="the files of the big-repository batch (0: none)")
    parser.add_argument("--big-only", action="store_true", help="only the big-repository batch")
    opts = parser.parse_args()
    print_machine("agentica batch: overhead per task and throughput of N workers")
    cmd = agentica_command()
    with tempfile.TemporaryDirectory(prefix="agentica-bench-batch-") as folder:
        work = Path(folder)
        key_file = work / "key"
        key_file.write_text("bench\n")
        print(f"load average at the start: {load_average():.2f}")
        figures: dict[str, float] = {}
        if opts.big_only:
            emit_result("batch_big", {k: round(v, 3) for k, v in big_repository(cmd, work, opts.big_files or 3000,
                                                                                   key_file).items()})
            return 0
        if opts.ready_runs > 0:
            figures |= ready_time(cmd, work, opts.ready_runs, key_file)
            if "t_ready_s" in figures:
                print(f"command start -> zygote ready: {figures['t_ready_s'] * 1000:.0f} ms (median of "
                      f"{opts.ready_runs}; min {figures['t_ready_min_s'] * 1000:.0f} ms; a 2N-task batch reaches "
                      f">= {THROUGHPUT_TARGET:.1f} N only when it is <= ~0.24 s)")
            if opts.ready_only:
                emit_result("batch_ready", {k: round(v, 3) for k, v in figures.items()})
                return 0
        if not opts.throughput_only:
            figures |= overhead(cmd, work, opts.tasks, opts.runs, key_file)  # beside t_ready
            if opts.big_files > 0:
                figures |= big_repository(cmd, work, opts.big_files, key_file)
            print(f"overhead per task over a plain -p run: {figures['overhead_per_task_ms']:.0f} ms "
                  f"(target < {OVERHEAD_TARGET_MS:.0f} ms); plain -p {figures['plain_p_ms']:.0f} ms")
        figures |= throughput(cmd, work, opts.max_workers, key_file,
                              ("zygote",) if opts.zygote_only else tuple(STARTS), opts.long_waves,
                              max(1, opts.repeats))
        if opts.zygote_only:
            emit_result("batch_zygote", {k: round(v, 3) for k, v in figures.items()})
            return 0
    cores = os.cpu_count() or 1
    figures.setdefault("cpu_per_plain_p_s", float("nan"))
    # with more workers than cores, the tasks' CPU is the limit: cores x task time / CPU per task
    # CPU per task at the largest N: the batch's and the zygote's own start spread over most tasks
    most = max(int(k.rsplit("_", 2)[-2]) for k in figures if k.startswith("cpu_per_task_") and "process" not in k)
    zygote_cpu, process_cpu = figures[f"cpu_per_task_{most}_s"], figures[f"cpu_per_task_process_{most}_s"]
    figures["cpu_bound_throughput"] = cores * figures["task_time_s"] / max(zygote_cpu, 1e-6)
    figures["cpu_bound_throughput_process"] = cores * figures["task_time_process_s"] / max(process_cpu, 1e-6)
    print(f"one `agentica -p` run costs {figures['cpu_per_plain_p_s']:.2f} s of CPU; a batch task (N={most}) "
          f"{zygote_cpu:.2f} s forked from the zygote, {process_cpu:.2f} s "
          f"as a process of its own: {cores} core(s) finish at most {figures['cpu_bound_throughput']:.1f} "
          f"(zygote) or {figures['cpu_bound_throughput_process']:.1f} (process) tasks per task time, whatever N")
    emit_result("batch", {k: round(v, 3) for k, v in figures.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
