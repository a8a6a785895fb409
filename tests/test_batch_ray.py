"""`agentica batch --ray ADDRESS` on a real local Ray cluster (`ray start --head` on 127.0.0.1,
two worker CPUs), started once for this module: the same batch gives the same results file as
the local workers, a re-run skips what is done, and Ctrl-C cancels the Ray tasks and ends their
sessions."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_support import TaskModel, make_repository, read_records, task_server, write_tasks
from cli_support import AGENTICA, cli_env, model_args, run_cli

# Looked up, not imported: the tests drive Ray's command line, and importing Ray costs every pytest
# worker half a second of CPU while it collects.
if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray is not installed (pip install 'agentica-cli[ray]')", allow_module_level=True)
RAY = Path(sys.executable).with_name("ray")

# What differs between two runs of the same tasks by nature: times, session ids, folders.
VOLATILE = ("started_at", "finished_at", "duration_s", "timings_s", "session_id", "worktree")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A head node with two CPUs (two worker processes), in a process group of its own that the
    fixture ends (`ray start --block` stops its processes when signalled)."""
    if not RAY.exists():
        pytest.skip(f"no ray command beside {sys.executable}")
    home = tmp_path_factory.mktemp("ray-home")
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # Ray's socket paths must stay short
    port = _free_port()
    env = cli_env(home, RAY_USAGE_STATS_ENABLED="0")
    head = subprocess.Popen(
        [str(RAY), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    address = f"127.0.0.1:{port}"
    started = time.monotonic()
    try:
        while True:
            probe = subprocess.run([str(RAY), "status", f"--address={address}"], env=env, capture_output=True,
                                   text=True)
            if probe.returncode == 0 and "2.0 CPU" in probe.stdout:
                break
            if head.poll() is not None or time.monotonic() - started > 120:
                pytest.fail(f"ray start failed: {head.stdout.read() if head.stdout else ''}")
            time.sleep(0.5)
        print(f"ray cluster up in {time.monotonic() - started:.1f} s", file=sys.stderr)
        yield address, home
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            try:
                head.wait(5)
                break
            except subprocess.TimeoutExpired:
                continue
        shutil.rmtree(temp, ignore_errors=True)


def _tasks(path: Path) -> Path:
    return write_tasks(path, [
        {"id": f"k{n}", "prompt": f"[task k{n}] put your name in shared.txt", "permission_mode": "accept-edits",
         **({"check": "grep -q 'from nobody' shared.txt"} if n == 3 else {"check": f"grep -q 'from k{n}' shared.txt"})}
        for n in range(1, 7)])


def _comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in records), key=lambda r: r["id"])


def test_batch_on_a_local_ray_cluster(tmp_path: Path, ray_cluster: tuple[str, Path]) -> None:
    """One test, so that `pytest -n` starts one cluster, not one per worker that takes a test."""
    address, home = ray_cluster
    (tmp_path / "same").mkdir()
    (tmp_path / "interrupted").mkdir()
    _the_same_batch_on_ray_gives_the_same_results_file(tmp_path / "same", address, home)
    _ctrl_c_on_ray_cancels_the_running_tasks_and_ends_their_sessions(tmp_path / "interrupted", address, home)


def _the_same_batch_on_ray_gives_the_same_results_file(tmp_path: Path, address: str, home: Path) -> None:
    server = task_server(TaskModel())
    try:
        local_repo = make_repository(tmp_path / "local")
        local_out = tmp_path / "local.jsonl"
        local = run_cli(["batch", str(_tasks(tmp_path / "tasks.jsonl")), "--workers", "2", "--output",
                         str(local_out), *model_args(server)], cwd=local_repo, home=home, timeout=150)
        assert local.returncode == 1, local.stderr

        ray_repo = make_repository(tmp_path / "ray")
        ray_out = tmp_path / "ray.jsonl"
        args = ["batch", str(tmp_path / "tasks.jsonl"), "--ray", address, "--workers", "2", "--output", str(ray_out),
                *model_args(server)]
        on_ray = run_cli(args, cwd=ray_repo, home=home, env=cli_env(home, RAY_USAGE_STATS_ENABLED="0"), timeout=180)
        assert on_ray.returncode == 1, on_ray.stderr
        requests = len(server.requests)
        again = run_cli(args, cwd=ray_repo, home=home, env=cli_env(home, RAY_USAGE_STATS_ENABLED="0"), timeout=180)
    finally:
        server.stop()
    ray_records = read_records(ray_out)
    assert {r["id"]: r["status"] for r in ray_records} == {
        "k1": "done", "k2": "done", "k3": "check-failed", "k4": "done", "k5": "done", "k6": "done"}
    assert _comparable(ray_records) == _comparable(read_records(local_out))
    for record in ray_records:  # the work is in the Ray run's own worktrees
        assert Path(record["worktree"]).is_relative_to(ray_repo)
    # resumed: nothing left to run, no model request, the same file
    assert "0 attempt(s) to run (6 already in the results file)" in again.stderr
    assert len(server.requests) == requests and read_records(ray_out) == ray_records


def _ctrl_c_on_ray_cancels_the_running_tasks_and_ends_their_sessions(tmp_path: Path, address: str, home: Path) -> None:
    from sandbox_support import processes_with

    from agentica_cli.testing import turns

    arrived: set[str] = set()

    def special(task: str, stage: int, body: dict[str, Any]) -> dict[str, Any] | None:
        arrived.add(task)
        return turns.hang(limit=60)

    server = task_server(TaskModel(special))
    repo = make_repository(tmp_path / "repo")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        {"id": f"q{n}", "prompt": f"[task q{n}] wait", "permission_mode": "accept-edits"} for n in (1, 2)])
    output = tmp_path / "results.jsonl"
    try:
        driver = subprocess.Popen(
            [*AGENTICA, "batch", str(tasks), "--ray", address, "--workers", "2", "--output", str(output),
             *model_args(server)], cwd=repo, env=cli_env(home, RAY_USAGE_STATS_ENABLED="0"),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while arrived != {"q1", "q2"}:
            assert time.monotonic() < deadline and driver.poll() is None, driver.communicate()
            time.sleep(0.2)
        driver.send_signal(signal.SIGINT)
        err = driver.communicate(timeout=60)[1]
    finally:
        server.stop()
    assert driver.returncode == 130, err
    assert {r["id"]: r["status"] for r in read_records(output)} == {"q1": "cancelled", "q2": "cancelled"}
    deadline = time.monotonic() + 20  # the sessions on the node end with their Ray tasks
    while processes_with(str(repo / ".worktrees")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_with(str(repo / ".worktrees")) == []


def test_no_cluster_at_the_address_is_a_one_line_error(tmp_path: Path, home: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "n1", "prompt": "x"}])
    done = run_cli(["batch", str(tasks), "--ray", f"127.0.0.1:{_free_port()}", "--output", str(tmp_path / "r.jsonl")],
                   cwd=tmp_path, home=home, timeout=120)
    assert done.returncode == 1
    assert "cannot reach the Ray cluster at 127.0.0.1:" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r.jsonl").exists()
