"""`agentica batch` prepares the next attempts while its workers' sessions wait for their models
(task_run.Attempt, runner._work_while_idle): their worktree made and their session started up
to ready, so a worker that frees sends the next prompt at once. Checked here against the
scripted server (a real HTTP server) through the CLI: no more than N sessions talk to the model
at once, a prepared task's setup waits for a worker, its wait is not its duration, and a batch
stopped with prepared attempts leaves no record, worktree, branch or process of theirs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from batch_support import by_id, git, make_repository, read_records, task_of, write_tasks
from cli_support import AGENTICA, cli_env, model_args, run_cli

from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.worktrees.manager import WORKTREES_FOLDER

ANSWER_S = 1.0


def _batch_args(server: Any, tasks: Path, output: Path, workers: int = 2) -> list[str]:
    return ["batch", str(tasks), "--workers", str(workers), "--output", str(output), *model_args(server)]


def _batch_records(server: Any, tasks: Path, output: Path, repo: Path, home: Path) -> dict[str, dict[str, Any]]:
    """Run the batch to its end (the server stopped after it); its records by task id."""
    try:
        done = run_cli(_batch_args(server, tasks, output), cwd=repo, home=home, timeout=120)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    return by_id(read_records(output))


def _task(task_id: str, **extra: str) -> dict[str, str]:
    return {"id": task_id, "prompt": f"[task {task_id}] say hello", **extra}


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    most = now = 0
    for _, step in edges:  # an end sorts before a start at the same instant
        now += step
        most = max(most, now)
    return most


def test_next_attempts_are_prepared_while_the_sessions_wait_for_their_model(tmp_path: Path, home: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    stamp = tmp_path / "setup-ran-at"
    server = ScriptedModelServer([lambda body: turns.text(f"hello from {task_of(body)}", delay=ANSWER_S)] * 20)
    server.start()
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        _task("a1"), _task("a2"), _task("a3"), _task("a4"),
        _task("a5", setup=f"date +%s.%N > {stamp} && echo made > setup.txt"), _task("a6")])
    output = tmp_path / "results.jsonl"
    records = _batch_records(server, tasks, output, repo, home)
    assert {k: r["status"] for k, r in records.items()} == dict.fromkeys(records, "done")
    assert sorted(records) == ["a1", "a2", "a3", "a4", "a5", "a6"]

    # the workers' limit holds: never more than 2 sessions waiting for the model at once
    spans = [(r.received_at, r.finished_at) for r in server.request_log]
    assert len(spans) == 6 and _most_at_once(spans) == 2, spans

    first_end = min(r["finished_at"] for r in records.values())
    prepared = [k for k, r in records.items() if "waiting" in r["timings_s"]]
    assert {"a3", "a4"} <= set(prepared), {k: r["timings_s"] for k, r in records.items()}
    assert records["a3"]["started_at"] < first_end and records["a4"]["started_at"] < first_end
    for key in prepared:
        timings = records[key]["timings_s"]
        assert timings["waiting"] > 0.2, timings  # prepared while the sessions before it waited
        wall = records[key]["finished_at"] - records[key]["started_at"]
        assert abs(records[key]["duration_s"] - (wall - timings["waiting"])) < 0.01, records[key]
        if key != "a5":
            assert "start" in timings  # its session started (up to ready) before a worker took it
    # a5 has a setup: prepared up to its worktree only; the setup ran once a worker took it,
    # after the first two tasks' sessions were over
    assert "start" not in records["a5"]["timings_s"]
    assert float(stamp.read_text()) >= first_end - 0.05
    assert git(Path(records["a5"]["worktree"]), "log", "-1", "--format=%s").strip() == "agentica batch: setup of a5"
    for record in records.values():
        assert record["session_id"] and record["tokens"]["total"] > 0, record


def test_a_batch_stopped_with_prepared_attempts_leaves_nothing_of_them(tmp_path: Path, home: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    hanging = threading.Event()
    hanging.set()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if task_of(body) in ("s1", "s2") and hanging.is_set():
            return turns.hang(limit=60)
        return turns.text(f"hello from {task_of(body)}")

    server = ScriptedModelServer([answer] * 20).start()
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task(f"s{n}") for n in range(1, 5)])
    output = tmp_path / "results.jsonl"
    trees = repo / WORKTREES_FOLDER
    try:
        process = subprocess.Popen([*AGENTICA, *_batch_args(server, tasks, output)], cwd=repo, env=cli_env(home),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        deadline = time.monotonic() + 90
        # s1 and s2 wait for answers that do not come; s3 and s4 are prepared meanwhile
        while not (len(server.request_log) == 2 and _sessions_in(trees / "batch-s3-1", trees / "batch-s4-1")):
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail(f"s3 and s4 were not prepared: {process.communicate()}")
            time.sleep(0.05)
        assert {task_of(r.body) for r in server.request_log} == {"s1", "s2"}
        process.send_signal(signal.SIGINT)
        err = process.communicate(timeout=60)[1]
        assert process.returncode == 130, err
        first = by_id(read_records(output))
        assert {k: r["status"] for k, r in first.items()} == {"s1": "cancelled", "s2": "cancelled"}
        assert not (trees / "batch-s3-1").exists() and not (trees / "batch-s4-1").exists()
        branches = git(repo, "branch", "--list", "agentica/*", "--format=%(refname:short)").split()
        assert sorted(branches) == ["agentica/batch-s1-1", "agentica/batch-s2-1"]
        assert not _sessions_in(trees / "batch-s3-1") and not _sessions_in(trees / "batch-s4-1")
        assert len(server.request_log) == 2  # the prepared sessions never asked the model

        hanging.clear()
        again = run_cli(_batch_args(server, tasks, output), cwd=repo, home=home, timeout=120)
        assert again.returncode == 0, again.stderr
        assert "4 attempt(s) to run" in again.stderr
    finally:
        server.stop()
    assert {k: r["status"] for k, r in by_id(read_records(output)).items()} == dict.fromkeys(
        ["s1", "s2", "s3", "s4"], "done")


def _sessions_in(*folders: Path) -> bool:
    """Whether a process (a session: the zygote's fork keeps the zygote's command line, so its
    working folder tells) runs in each of `folders`."""
    cwds = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() != "git":  # not the worktree's own check-out
                    cwds.add(Path(os.readlink(entry / "cwd")))
    return all(folder in cwds for folder in folders)


def test_preparing_waits_until_every_worker_runs_and_none_is_starting(tmp_path: Path) -> None:
    """runner.BatchRun.wait_until_quiet: the cores are free only when every worker has an
    attempt and none of them is in its start (its worktree, its session before the first
    request); then preparing goes on while fewer than N are prepared and one is pending."""
    from agentica_cli.batch.progress import PlainProgress
    from agentica_cli.batch.runner import BatchRun, BatchSettings
    from agentica_cli.batch.task_run import RunOptions
    from agentica_cli.batch.tasks import Task

    tasks = [Task(id=f"q{n}", prompt="p") for n in range(4)]
    run = BatchRun(tasks, BatchSettings(output=tmp_path / "r.jsonl", workers=2),
                   RunOptions(batch_cwd=str(tmp_path), backoff_file=str(tmp_path / "b")), PlainProgress())
    run.workers_left = 2
    answers: list[bool] = []

    def ask() -> threading.Thread:
        thread = threading.Thread(target=lambda: answers.append(run.wait_until_quiet(2, for_preparing=True)))
        thread.start()
        return thread

    first, second = run.next_attempt(None), run.next_attempt(None)
    assert first is not None and second is not None
    run.busy(first.key, True)
    waiting = ask()
    time.sleep(0.2)
    assert answers == []  # one worker's attempt is starting
    run.busy(first.key, False)
    run.busy(second.key, True)
    time.sleep(0.2)
    assert answers == []  # the other's is
    run.busy(second.key, False)
    waiting.join(5)
    assert answers == [True]
    run.attempt_over()
    assert not run.starting  # nobody is starting, but a worker is free:
    late = ask()
    time.sleep(0.2)
    assert answers == [True]  # a free worker takes the next pending itself; nothing to prepare for
    run.interrupt("test")
    late.join(5)
    assert answers == [True, False]


def test_a_worker_sends_its_next_prompt_at_its_sessions_result_and_commits_behind_it(
        tmp_path: Path, home: Path) -> None:
    """runner._local_worker: at a session's result line the worker sends the next prepared
    prompt, then waits for that session's end (here a SessionEnd hook of 1.5 s that writes a
    file) and commits it, hook's file included. A task with a check keeps its worker until the
    check is over. Never more than 2 requests in flight."""
    import json

    answer = 2.0  # every next task is prepared well before the first answers end
    (home / "settings.json").write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [
        {"type": "command", "command": "sleep 1.5; echo ended > ended.txt"}]}]}}))
    repo = make_repository(tmp_path / "repo")
    server = ScriptedModelServer([lambda body: turns.text(f"hello from {task_of(body)}", delay=answer)] * 10)
    server.start()
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("b1"), _task("b2", check="true"), _task("b3"), _task("b4")])
    output = tmp_path / "results.jsonl"
    clock = time.time() - time.perf_counter()  # the server's times (perf_counter) as the records' (time.time)
    records = _batch_records(server, tasks, output, repo, home)
    assert {key: r["status"] for key, r in records.items()} == dict.fromkeys(["b1", "b2", "b3", "b4"], "done")
    assert all("ended.txt" in r["files_changed"] for r in records.values())  # committed after the session's end
    asked = {task_of(r.body): (clock + r.received_at, clock + r.finished_at) for r in server.request_log}
    assert _most_at_once(list(asked.values())) <= 2
    first, second = sorted(["b3", "b4"], key=lambda key: asked[key][0])
    assert asked[first][0] < records["b1"]["finished_at"] - 1.0  # b1's worker went on at b1's result
    assert asked[second][0] >= records["b2"]["finished_at"]  # b2's, after b2's check


def test_a_worker_commits_behind_its_next_sessions_first_request(tmp_path: Path, home: Path) -> None:
    """runner._after_the_next_requests: a worker that sent its next prompt at a session's result
    commits that session's work only once the next session's first request is out (its start,
    here made 0.8 s long by a UserPromptSubmit hook, gets the cores first); a worker with
    nothing to go on to commits at once."""
    import json

    hook_s = 0.8
    (home / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": f"sleep {hook_s}"}]}]}}))
    repo = make_repository(tmp_path / "repo")
    server = ScriptedModelServer([lambda body: turns.text(f"hello from {task_of(body)}", delay=ANSWER_S)] * 6)
    server.start()
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("c1"), _task("c2")])
    output = tmp_path / "results.jsonl"
    clock = time.time() - time.perf_counter()
    try:
        done = run_cli(_batch_args(server, tasks, output, workers=1), cwd=repo, home=home, timeout=120)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    records = by_id(read_records(output))
    assert {key: r["status"] for key, r in records.items()} == {"c1": "done", "c2": "done"}
    asked = {task_of(r.body): clock + r.received_at for r in server.request_log}

    def commit_began(record: dict[str, Any]) -> float:
        return record["finished_at"] - record["timings_s"]["commit"]  # the commit is a task's last phase

    assert "waiting" in records["c2"]["timings_s"]  # prepared while c1's answer was awaited, then taken over
    assert commit_began(records["c1"]) >= asked["c2"] - 0.1  # behind c2's request, not in its start
    assert asked["c2"] - records["c1"]["finished_at"] > -(hook_s + 0.5)  # (and c1's record not held long)
    assert commit_began(records["c2"]) - clock - server.request_log[-1].finished_at < 0.5  # the last: at once
