"""`agentica batch`: tasks over workers against the scripted model server (a real HTTP server),
each task an `agentica -p` session in its own worktree; statuses, the shared 429 back-off in the
recorded request times, and resuming after a SIGINT without running finished tasks again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from batch_support import (
    TaskModel,
    by_id,
    git,
    make_repository,
    read_records,
    task_of,
    task_server,
    tasks_of,
    write_tasks,
)
from cli_support import AGENTICA, cli_env, model_args, run_cli, scripted_key_file

from agentica_cli.testing import turns

RETRY_AFTER = 4.0


def _batch_args(server: Any, tasks: Path, output: Path, workers: int = 2) -> list[str]:
    return ["batch", str(tasks), "--workers", str(workers), "--output", str(output), *model_args(server)]


def _task(task_id: str, **extra: str) -> dict[str, str]:
    return {"id": task_id, "prompt": f"[task {task_id}] put your name in shared.txt",
            "permission_mode": "accept-edits", **extra}


ZYGOTE_NOTE = "sessions are forked from a zygote"


@pytest.mark.parametrize("start", ["zygote", "process"])
def test_six_tasks_over_two_workers_statuses_and_shared_backoff(tmp_path: Path, home: Path, start: str) -> None:
    """The same batch, its sessions forked from the zygote (the default on Linux) or each
    started as `python -m agentica_cli` (AGENTICA_BATCH_ZYGOTE=0): the same results."""
    if start == "zygote" and not sys.platform.startswith("linux"):
        pytest.skip("the zygote is Linux only")
    repo = make_repository(tmp_path / "repo")
    roles: dict[str, str] = {}

    def special(task: str, stage: int, body: dict[str, Any]) -> dict[str, Any] | None:
        # The two first sessions start together. The first to ask waits 3 s for its answer;
        # the second gets a 429 meanwhile, with a Retry-After longer than what is left of that
        # wait. Without a shared back-off the waiting session's next request would come inside
        # the Retry-After; with it, no request comes until it has passed. (The server calls
        # this under its lock: it must not block.)
        if stage != 0 or model.seen[task] != 1:
            return None
        if "waiter" not in roles:
            roles["waiter"] = task
            return turns.tool_calls(turns.call("read_file", {"file_path": "shared.txt"}), delay=3.0)
        if "limited" not in roles:
            roles["limited"] = task
            return turns.error(429, "rate limited", retry_after=RETRY_AFTER)
        return None

    model = TaskModel(special)
    server = task_server(model)
    from agentica_cli.sandbox import best_backend

    t4_check = "grep -q 'from t4' shared.txt"
    if best_backend() is not None:  # the check runs confined: no writing the checkout, no reading the key file
        t4_check += f" && ! touch {repo / 'escaped.txt'} && ! cat {scripted_key_file()}"
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        _task("t1"), _task("t2"), _task("t3", check="grep -q 'from nobody' shared.txt"),
        _task("t4", check=t4_check), _task("t5", setup="echo made > setup.txt"),
        _task("t6", model="other-model"),
    ])
    output = tmp_path / "results.jsonl"
    try:
        env = cli_env(home, **({} if start == "zygote" else {"AGENTICA_BATCH_ZYGOTE": "0"}))
        done = run_cli(_batch_args(server, tasks, output), cwd=repo, home=home, env=env, timeout=150)
    finally:
        server.stop()
    assert done.returncode == 1, done.stderr  # one task's check failed
    assert (ZYGOTE_NOTE in done.stderr) == (start == "zygote"), done.stderr
    assert "started as processes of their own" not in done.stderr  # every session was forked, or none
    records = by_id(read_records(output))
    assert {k: r["status"] for k, r in records.items()} == {
        "t1": "done", "t2": "done", "t3": "check-failed", "t4": "done", "t5": "done", "t6": "done"}
    for task_id, record in records.items():
        assert record["exit_code"] == 0 and record["attempt"] == 1
        assert record["files_changed"] == ["shared.txt"]
        assert f"+from {task_id}" in record["diff"] and "-original" in record["diff"]
        assert record["branch"] == f"agentica/batch-{task_id}-1"
        assert record["session_id"] and record["duration_s"] > 0
        assert record["tokens"]["total"] > 0
        tree = Path(record["worktree"])
        assert (tree / "shared.txt").read_text() == f"from {task_id}\n"
        assert git(tree, "log", "-1", "--format=%s").strip() == f"agentica batch: {task_id} (attempt 1)"
        # the stored session is whole though a forked session leaves through os._exit: its answer
        # is the file's last line, and the session was closed (its pid file removed)
        stored = home / "sessions" / f"{record['session_id']}.jsonl"
        last = json.loads(stored.read_text().splitlines()[-1])
        assert last["type"] == "message" and last["message"]["role"] == "assistant", last
        assert not stored.with_suffix(".pid").exists()
    assert records["t3"]["check_exit_code"] == 1 and records["t4"]["check_exit_code"] == 0
    assert records["t6"]["model"] == "other-model"
    # the setup ran in t5's worktree; what it made is committed apart, not in the agent's diff
    assert (Path(records["t5"]["worktree"]) / "setup.txt").read_text() == "made\n"
    assert git(Path(records["t5"]["worktree"]), "log", "--format=%s").splitlines()[:2] == [
        "agentica batch: t5 (attempt 1)", "agentica batch: setup of t5"]
    assert (repo / "shared.txt").read_text() == "original\n" and git(repo, "status", "--porcelain") == ""
    assert not (repo / "escaped.txt").exists()

    log = server.request_log
    assert {b["model"] for b in server.requests if task_of(b) == "t6"} == {"other-model"}
    limited = [r for r in log if r.status == 429]
    assert len(limited) == 1 and task_of(limited[0].body) == roles["limited"]
    assert {roles["limited"], roles["waiter"]} == {"t1", "t2"}
    after = [r for r in log if r.received_at > limited[0].finished_at]
    # the back-off is shared: no session, t1's or another's, sent a request during the Retry-After
    first_after = min(r.received_at for r in after)
    assert first_after - limited[0].finished_at >= RETRY_AFTER - 0.25, [
        (task_of(r.body), round(r.received_at - limited[0].finished_at, 2)) for r in after[:4]]
    assert any(task_of(r.body) == roles["waiter"] for r in after[:2])  # the one that would have gone first
    # the summary table (stdout) and `agentica batch report` say the same
    assert "6 tasks, 6 attempt(s): 1 check-failed, 5 done" in done.stdout
    report = run_cli(["batch", "report", str(output), "--json"], cwd=repo, home=home)
    summary = json.loads(report.stdout)
    assert summary["counts"] == {"check-failed": 1, "done": 5}
    assert {t["id"]: t["passed"] for t in summary["tasks"]}["t3"] == []


def test_interrupted_batch_resumes_without_running_finished_tasks(tmp_path: Path, home: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    hanging = threading.Event()
    hanging.set()
    arrived: list[str] = []

    def special(task: str, stage: int, body: dict[str, Any]) -> dict[str, Any] | None:
        if task in ("r3", "r4") and hanging.is_set():
            arrived.append(task)
            return turns.hang(limit=60)
        return None

    model = TaskModel(special)
    server = task_server(model)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task(f"r{n}") for n in range(1, 5)])
    output = tmp_path / "results.jsonl"
    try:
        process = subprocess.Popen([*AGENTICA, *_batch_args(server, tasks, output)], cwd=repo, env=cli_env(home),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        deadline = time.monotonic() + 90
        while not (len(set(arrived)) == 2 and output.exists() and len(read_records(output)) == 2):
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        err = process.communicate(timeout=60)[1]
        assert process.returncode == 130, err
        if sys.platform.startswith("linux"):
            assert ZYGOTE_NOTE in err  # the cancelled sessions were the zygote's children
        first = by_id(read_records(output))
        assert {k: r["status"] for k, r in first.items()} == {
            "r1": "done", "r2": "done", "r3": "cancelled", "r4": "cancelled"}
        assert "interrupted (Ctrl-C)" in first["r3"]["error"]
        requests_before = len(server.requests)

        hanging.clear()
        again = run_cli(_batch_args(server, tasks, output), cwd=repo, home=home, timeout=120)
        assert again.returncode == 0, again.stderr
        assert "2 attempt(s) to run (2 already in the results file)" in again.stderr
    finally:
        server.stop()
    resumed = tasks_of(server.request_log)[requests_before:]
    assert sorted(set(resumed)) == ["r3", "r4"]  # r1 and r2 were not run again
    final = read_records(output)
    assert [r["status"] for r in final if r["id"] in ("r1", "r2")] == ["done", "done"]  # one line each
    assert {k: r["status"] for k, r in by_id(final).items()} == {
        "r1": "done", "r2": "done", "r3": "done", "r4": "done"}


def test_a_worktree_this_batch_did_not_make_is_left_alone(tmp_path: Path, home: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    from agentica_cli.worktrees import create_worktree

    create_worktree(repo, "batch-w1-1")  # as `agentica --worktree=batch-w1-1` makes it: the batch's name
    (repo / ".worktrees/batch-w1-1/mine.txt").write_text("my own work\n")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("w1")])
    output = tmp_path / "results.jsonl"
    done = run_cli(["batch", str(tasks), "--output", str(output), "--model", "m", "--base-url", "http://127.0.0.1:9"],
                   cwd=repo, home=home)
    assert done.returncode == 1
    [record] = read_records(output)
    assert record["status"] == "error" and "exists, made by hand or by --worktree" in record["error"]
    assert (repo / ".worktrees/batch-w1-1/mine.txt").read_text() == "my own work\n"


def test_bad_tasks_file_is_refused_before_anything_runs(tmp_path: Path, home: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "x"}\n{"id": "b", "prompt": "y", "chek": "true"}\n')
    done = run_cli(["batch", str(tasks), "--output", str(tmp_path / "r.jsonl")], cwd=tmp_path, home=home)
    assert done.returncode == 2
    assert "line 2: unknown field(s) 'chek'" in done.stderr
    assert not (tmp_path / "r.jsonl").exists()
    tasks.write_text('{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n')
    again = run_cli(["batch", str(tasks)], cwd=tmp_path, home=home)
    assert again.returncode == 2 and "line 2: id 'a' is used again (first on line 1)" in again.stderr


def _zygotes_of(home: Path) -> list[int]:
    """The zygote processes started with this test's AGENTICA_HOME (/proc: ours to read)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"agentica_cli.batch.zygote" in command and f"AGENTICA_HOME={home}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux only")
@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "expected a whole number >= 1"),
    (["--sandbox", "nowhere"], "--sandbox 'nowhere'"),
    ([], "line 1: "),
])
def test_a_batch_that_stops_before_running_leaves_no_zygote(tmp_path: Path, home: Path, args: list[str],
                                                          message: str) -> None:
    """The zygote starts with the command, before its arguments are parsed or its tasks file is
    read (cli/app.py): a batch refused for either gives the same error and exit code as without
    it, and its zygote ends with it (its socket closes) instead of staying behind."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "x", "chek": "true"}\n' if not args else '{"id": "a", "prompt": "x"}\n')
    line = ["batch", str(tasks), "--output", str(tmp_path / "r.jsonl"), *args]
    done = run_cli(line, cwd=tmp_path, home=home)
    without = run_cli(line, cwd=tmp_path, home=home, env=cli_env(home, AGENTICA_BATCH_ZYGOTE="0"))
    assert done.returncode == without.returncode == 2
    assert message in done.stderr and done.stderr == without.stderr
    assert not (tmp_path / "r.jsonl").exists()
    deadline = time.monotonic() + 30
    while _zygotes_of(home):
        assert time.monotonic() < deadline, "the zygote outlived its batch"
        time.sleep(0.05)


@pytest.mark.parametrize(("torn", "finished"), [
    ('{"id": "a", "att', {("x", 1)}),  # a crash in the middle of a line: that line never was a result
    ('{"id": "a", "attempt": 1, "status": "done"}', {("x", 1), ("a", 1)}),  # all but the newline
    ("", {("x", 1)}),
])
def test_results_store_appends_whole_lines_after_a_torn_one(tmp_path: Path, torn: str, finished: set) -> None:
    from agentica_cli.batch.results import ResultsStore

    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"id": "x", "attempt": 1, "status": "done"}) + "\n" + torn)
    store = ResultsStore(path)
    assert store.finished() == finished
    store.append({"id": "y", "attempt": 1, "status": "cancelled"})
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["id"] == "y" and ResultsStore(path).finished() == finished
    assert all(json.loads(line) for line in lines)


def test_attempts_in_a_terminal_show_the_live_display_and_which_attempt_passed(tmp_path: Path, home: Path) -> None:
    import pexpect

    repo = make_repository(tmp_path / "repo")

    def special(task: str, stage: int, body: dict[str, Any]) -> dict[str, Any] | None:
        system = body["messages"][0]["content"]
        attempt = 2 if "batch-a-2" in system else 1  # the session's working directory names its worktree
        if stage == 0:  # slow enough for the live display to show the running attempts
            return turns.tool_calls(turns.call("read_file", {"file_path": "shared.txt"}), delay=1.5)
        if stage == 1 and attempt == 2:
            return turns.tool_calls(turns.call("write_file", {"file_path": "shared.txt", "content": "wrong\n"}))
        return None

    server = task_server(TaskModel(special))
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("a", check="grep -q 'from a' shared.txt")])
    output = tmp_path / "results.jsonl"
    env = cli_env(home, COLUMNS="100", LINES="30")
    env.pop("NO_COLOR")
    try:
        child = pexpect.spawn(AGENTICA[0], [*AGENTICA[1:], *_batch_args(server, tasks, output), "--attempts", "2"],
                              cwd=str(repo), env=env, encoding="utf-8", timeout=90, dimensions=(30, 100))
        child.expect(pexpect.EOF)
        child.close()
    finally:
        server.stop()
    screen = child.before
    assert child.exitstatus == 0, screen[-3000:]  # the task has an attempt that passed
    assert "a#1" in screen and "a#2" in screen and "session" in screen and "tokens" in screen
    assert "━" in screen  # rich's progress bar
    assert "\x1b[" in screen  # drawn live (cursor moves, colours), not plain lines
    assert "agentica batch: start" not in screen
    records = {r["attempt"]: r for r in read_records(output)}
    assert records[1]["status"] == "done" and records[2]["status"] == "check-failed"
    assert records[1]["branch"] == "agentica/batch-a-1" and records[2]["branch"] == "agentica/batch-a-2"
    assert "+wrong" in records[2]["diff"]
    summary = json.loads(run_cli(["batch", "report", str(output), "--json"], cwd=repo, home=home).stdout)
    assert summary["tasks"][0]["passed"] == [1] and summary["tasks"][0]["statuses"] == {"1": "done",
                                                                                        "2": "check-failed"}


def test_max_tokens_stops_the_batch_and_cancels_what_runs(tmp_path: Path, home: Path) -> None:
    repo = make_repository(tmp_path / "repo")
    server = task_server(TaskModel())
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("b1"), _task("b2")])
    output = tmp_path / "results.jsonl"
    try:
        done = run_cli([*_batch_args(server, tasks, output, workers=1), "--max-tokens", "50"], cwd=repo, home=home,
                       timeout=90)
    finally:
        server.stop()
    assert done.returncode == 1
    assert "stopping: --max-tokens 50 reached (110 tokens)" in done.stderr
    [record] = read_records(output)  # b2 never started: a later run with a higher limit does it
    assert record["id"] == "b1" and record["status"] == "cancelled" and "--max-tokens 50" in record["error"]
    assert set(tasks_of(server.request_log)) == {"b1"}  # b1's last request may be cut short, even before its body


def test_a_task_with_a_repo_url_and_a_cwd_inside_it(tmp_path: Path, home: Path) -> None:
    upstream = make_repository(tmp_path / "upstream")
    (upstream / "sub").mkdir()
    (upstream / "sub" / "shared.txt").write_text("original\n")
    git(upstream, "add", ".")
    git(upstream, "commit", "-q", "-m", "sub")
    elsewhere = tmp_path / "elsewhere"  # not a repository: the task names its own
    elsewhere.mkdir()
    server = task_server(TaskModel())
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("c1", repo=str(upstream), cwd="sub",
                                                         check="grep -q 'from c1' shared.txt")])
    output = tmp_path / "results.jsonl"
    try:
        done = run_cli(_batch_args(server, tasks, output, workers=1), cwd=elsewhere, home=home,
                       env=cli_env(home, TMPDIR=str(tmp_path)))  # the clone goes under TMPDIR
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    [record] = read_records(output)
    assert record["status"] == "done" and record["files_changed"] == ["sub/shared.txt"]
    clone = Path(record["worktree"]).parent.parent
    assert clone.is_relative_to(tmp_path) and clone != upstream
    assert (Path(record["worktree"]) / "sub" / "shared.txt").read_text() == "from c1\n"
    assert (upstream / "sub" / "shared.txt").read_text() == "original\n"  # the clone was edited, not the source


def test_budget_counts_running_and_finished_attempts() -> None:
    from agentica_cli.batch.limiter import Budget, Prices

    prices = Prices(input=2.0, output=10.0)  # USD per million tokens
    assert prices.cost(1_000_000, 100_000) == 3.0 and Prices().cost(5, 5) is None
    budget = Budget(max_cost=5.0)
    budget.running("a#1", 1000, 2.0)
    budget.running("b#1", 1000, 2.5)
    assert budget.exceeded() is None
    budget.finished("a#1", 1200, 2.6)  # a finished attempt replaces its running figure
    assert budget.cost == pytest.approx(5.1) and budget.tokens == 2200
    assert budget.exceeded() == "--max-cost 5 reached ($5.1000)"


@pytest.mark.parametrize("start", ["zygote", "process", "zygote of python -m"])
def test_modules_in_the_tasks_repository_are_never_imported(tmp_path: Path, home: Path, start: str) -> None:
    """A session runs in the task's worktree, and the zygote in the batch's folder: `python -m`
    would put that folder first on sys.path, so a repository's `typer.py` or `docstring_parser.py`
    would run, unsandboxed, in place of the real module. "zygote of python -m": the batch itself
    started as `python -m agentica_cli` in the repository (its own choice to trust the folder's
    modules: the names here are ones the batch process never imports), its zygote a fork of it,
    which must not keep the folder on sys.path."""
    if start.startswith("zygote") and not sys.platform.startswith("linux"):
        pytest.skip("the zygote is Linux only")
    repo = make_repository(tmp_path / "repo")
    marks = tmp_path / "imported"
    names = ("docstring_parser", "httpx2", "anyio", "h11") if start == "zygote of python -m" else (
        "typer", "docstring_parser", "httpx2", "anyio", "json")
    for name in names:
        (repo / f"{name}.py").write_text(f"open({str(marks)!r} + '-{name}', 'w').write('imported')\n"
                                         "raise ImportError('the repository shadowed a module')\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "modules named like agentica's")
    server = task_server(TaskModel())
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("m1")])
    output = tmp_path / "results.jsonl"
    try:
        env = cli_env(home, **({} if start.startswith("zygote") else {"AGENTICA_BATCH_ZYGOTE": "0"}))
        if start == "zygote of python -m":
            args = [sys.executable, "-m", "agentica_cli", *_batch_args(server, tasks, output, workers=1)]
            done = subprocess.run(args, cwd=repo, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=90)
        else:
            done = run_cli(_batch_args(server, tasks, output, workers=1), cwd=repo, home=home, env=env, timeout=90)
    finally:
        server.stop()
    assert sorted(p.name for p in tmp_path.glob("imported-*")) == []
    assert done.returncode == 0, done.stderr
    if start.startswith("zygote"):
        assert ZYGOTE_NOTE in done.stderr
    assert [r["status"] for r in read_records(output)] == ["done"]


def test_the_summary_table_fits_the_screen_and_keeps_its_columns_aligned(monkeypatch: pytest.MonkeyPatch) -> None:
    """progress.print_summary, drawn by hand: every row as wide as the header (a CJK task id
    takes two cells), cut to COLUMNS with "…" in the branch column first, no escape sequences
    when not a terminal, and a task id's control characters shown as "?"."""
    import io

    from rich.cells import cell_len

    from agentica_cli.batch.progress import print_summary
    from agentica_cli.batch.summary import summarise

    records = [{"id": task_id, "attempt": 1, "status": status, "tokens": {"total": 1234}, "cost": cost,
                "duration_s": 2.0, "files_changed": ["a.py"], "branch": f"agentica/batch-{n}-with-a-long-name-1",
                "started_at": 0.0, "finished_at": 1.0}
               for n, (task_id, status, cost) in enumerate([("t1", "done", 0.01), ("任务二", "check-failed", None),
                                                            ("bad\x1b[2Jid", "cancelled", None)])]
    for columns, cut in ((200, False), (80, True)):
        monkeypatch.setenv("COLUMNS", str(columns))
        out = io.StringIO()
        print_summary(summarise(records), out)
        lines = out.getvalue().splitlines()
        assert "\x1b" not in out.getvalue()
        assert lines[0].split(" ┃ ")[:3] == ["task     ", "status      ", "passed"]
        assert lines[-1] == "3 tasks, 3 attempt(s): 1 cancelled, 1 check-failed, 1 done · 3,702 tokens · $0.0100"
        table = lines[1:-1]
        assert len({cell_len(line) for line in table}) == 1 and cell_len(table[0]) <= columns
        assert [line.split(" │ ")[0].rstrip() for line in table[1:]] == ["t1", "任务二", "bad?[2Jid"]
        assert ("…" in table[1]) == cut and ("agentica/batch-0-with-a-long-name-1" in table[1]) != cut


@pytest.mark.parametrize("how", ["default", "--checkpoints", "--no-worktrees"])
def test_sessions_in_the_batchs_worktrees_take_no_checkpoints_unless_asked(tmp_path: Path, home: Path,
                                                                          how: str) -> None:
    """The batch commits a task's work on its branch: a session in a worktree the batch made runs
    with --no-checkpoints (no shadow repository, nothing for --undo), unless --checkpoints asks
    for them. A task run in its own folder (--no-worktrees) keeps them: they are its only undo."""
    import hashlib
    import os

    repo = make_repository(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [_task("a")])
    extra = [] if how == "default" else [how]
    with task_server(TaskModel()) as server:  # read shared.txt, write the task's name into it, answer
        done = run_cli([*_batch_args(server, tasks, tmp_path / "out.jsonl", workers=1), *extra], cwd=repo,
                       home=home, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    record = read_records(tmp_path / "out.jsonl")[0]
    assert record["status"] == "done"
    assert record["files_changed"] == ([] if how == "--no-worktrees" else ["shared.txt"])  # the branch's diff
    folder = Path(record["worktree"]) if how != "--no-worktrees" else repo
    shadow = home / "checkpoints" / hashlib.sha256(os.path.realpath(folder).encode()).hexdigest()[:24]
    assert shadow.exists() == (how != "default")
    if how == "--no-worktrees":
        assert (repo / "shared.txt").read_text() != "original\n"
    else:  # the work is on the task's branch either way
        assert git(repo, "show", f"{record['branch']}:shared.txt") != "original\n"
