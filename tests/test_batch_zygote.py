"""The batch's zygote (agentica_cli/batch/zygote.py): a real zygote process forking children
that run small fake session entry points (written to tmp_path, imported by the zygote), so
that what a child sees, a crash, a cancel and a refusal are each checked in a second or two.
The whole batch over the zygote against the scripted model server is in test_batch.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentica_cli.batch.task_run import Control, RunOptions, run_attempt
from agentica_cli.batch.tasks import Task
from agentica_cli.batch.zygote_client import Zygote, ZygoteError
from agentica_cli.procs import is_running

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote is Linux only")

FAKES = '''
import json, os, random, subprocess, sys, threading, time

def report(args):
    """What a session would see: argv, cwd, environment, stdin, its process group."""
    from agentica_cli import child_env

    data = sys.stdin.read()
    child_env.withhold("task-only-value")  # the task's own variable: not withheld from its hooks
    print(json.dumps({"argv": sys.argv, "args": args, "cwd": os.getcwd(), "env": dict(os.environ),
                      "stdin": data, "pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0),
                      "threads": threading.active_count(), "random": random.random(),
                      "withheld": child_env.holds_withheld("task-only-value"),
                      "sigint": repr(__import__("signal").getsignal(2)),
                      "sigchld": repr(__import__("signal").getsignal(17))}))
    sys.stderr.write("a line on stderr\\n")
    return 3

def hang(args):
    """A session that started a command of its own (same process group) and waits."""
    child = subprocess.Popen(["sleep", "300"])
    print(child.pid, flush=True)
    time.sleep(300)

def abort(args):
    print('{"type": "session", "session_id": "crash-1"}', flush=True)
    os.abort()

def fail(args):
    raise RuntimeError("boom in the session")

def chatty(args):
    """A session that leaves its last lines in Python's buffers (no flush) and an atexit
    function, then returns: os._exit() in the child must come after both."""
    import atexit, gc

    atexit.register(lambda: print(json.dumps({"type": "atexit"})))
    for n in range(20000):
        sys.stdout.write(json.dumps({"type": "line", "n": n}) + "\\n")
    sys.stdout.write(json.dumps({"type": "result", "frozen": gc.get_freeze_count()}) + "\\n")
    sys.stderr.write("the last words")
    return 0
'''

THREADED = '''
import threading, time
threading.Thread(target=time.sleep, args=(300,), daemon=True).start()  # a library that starts a thread
'''


@pytest.fixture
def fakes(tmp_path: Path) -> dict[str, str]:
    """The zygote's environment: PYTHONPATH to the fake entry points."""
    folder = tmp_path / "fakes"
    folder.mkdir()
    (folder / "fake_session.py").write_text(FAKES)
    (folder / "threaded_preload.py").write_text(THREADED)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


@contextmanager
def zygote(env: dict[str, str], entry: str, preload: list[str] | None = None) -> Iterator[Zygote]:
    started = Zygote(preload=preload or ["fake_session"], entry=entry, env=env)
    try:
        started.wait_ready()
        yield started
    finally:
        started.close()


def _run(z: Zygote, argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> tuple[int, str, str]:
    with tempfile.TemporaryFile(mode="w+") as err:
        child = z.spawn(argv, str(cwd), env, err.fileno())
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(stdin)
        child.stdin.close()
        out = child.stdout.read()
        child.stdout.close()
        code = child.wait(30)
        err.seek(0)
        return code, out, err.read()


def test_each_child_has_its_own_argv_cwd_environment_stdio_and_process_group(tmp_path: Path,
                                                                             fakes: dict[str, str]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    with zygote(fakes, "fake_session:report") as z:
        assert z.threads() == 1
        code, out, err = _run(z, ["agentica", "-p", "--model", "m1"], one, {"TASK": "one", "X": "task-only-value"},
                              stdin="the prompt")
        code2, out2, _ = _run(z, ["agentica", "-p"], two, {"TASK": "two"})
        assert z.threads() == 1  # forking started no thread in the zygote
    assert (code, code2) == (3, 3) and err == "a line on stderr\n"
    seen, seen2 = json.loads(out), json.loads(out2)
    assert seen["argv"] == ["agentica", "-p", "--model", "m1"] and seen["args"] == ["-p", "--model", "m1"]
    assert seen["cwd"] == str(one) and seen2["cwd"] == str(two)
    assert seen["env"] == {"TASK": "one", "X": "task-only-value"} and seen2["env"] == {"TASK": "two"}
    assert seen["stdin"] == "the prompt"
    assert seen["pgid"] == seen["pid"] == seen["sid"]  # its own session and group: the batch's killpg reaches it
    assert seen["pid"] != seen2["pid"] and seen["random"] != seen2["random"]  # random reseeded per child
    assert seen["threads"] == 1
    assert seen["withheld"] is False  # child_env took the task's environment as the user's, not the zygote's
    assert "default_int_handler" in seen["sigint"] and "SIG_DFL" in seen["sigchld"]


def test_a_childs_buffered_output_and_atexit_functions_are_out_before_it_exits(tmp_path: Path,
                                                                              fakes: dict[str, str]) -> None:
    """The child leaves through os._exit (no interpreter finalisation of the preloaded heap):
    whatever its stdio still buffers and what its atexit functions write reach the batch first,
    so a result line is never lost; and it forked from a frozen heap (gc.freeze)."""
    with zygote(fakes, "fake_session:chatty") as z:
        for _ in range(2):
            code, out, err = _run(z, ["agentica", "-p"], tmp_path, {})
            lines = [json.loads(line) for line in out.splitlines()]
            assert code == 0 and err == "the last words"
            assert [line["n"] for line in lines[:-2]] == list(range(20000))
            assert lines[-2]["type"] == "result" and lines[-2]["frozen"] > 0
            assert lines[-1] == {"type": "atexit"}


def test_an_uncaught_exception_is_exit_1_with_its_traceback(tmp_path: Path, fakes: dict[str, str]) -> None:
    with zygote(fakes, "fake_session:fail") as z:
        code, out, err = _run(z, ["agentica", "-p"], tmp_path, {})
    assert code == 1 and out == ""
    assert "RuntimeError: boom in the session" in err and "Traceback" in err


def test_a_crashing_session_is_an_error_record_and_the_zygote_goes_on(tmp_path: Path, fakes: dict[str, str]) -> None:
    options = RunOptions(batch_cwd=str(tmp_path), backoff_file=str(tmp_path / "backoff"), use_worktrees=False)
    with zygote(fakes, "fake_session:abort") as z:
        started = time.monotonic()
        record = run_attempt(Task(id="c1", prompt="crash"), 1, options, Control(), None, z)
        assert time.monotonic() - started < 30
        again = run_attempt(Task(id="c2", prompt="crash"), 1, options, Control(), None, z)
    assert record["status"] == "error" and record["exit_code"] == -signal.SIGABRT
    assert "the session crashed: killed by SIGABRT" in record["error"]
    assert record["session_id"] == "crash-1"
    assert again["status"] == "error" and again["exit_code"] == -signal.SIGABRT


def test_cancel_ends_a_forked_session_and_its_process_group(tmp_path: Path, fakes: dict[str, str]) -> None:
    control = Control()
    with zygote(fakes, "fake_session:hang") as z, tempfile.TemporaryFile(mode="w+") as err:
        child = z.spawn(["agentica", "-p"], str(tmp_path), dict(os.environ), err.fileno())
        assert child.stdout is not None and child.stdin is not None
        child.stdin.close()
        command = int(child.stdout.readline())  # the session's own command, in its process group
        control.add(child)
        assert child.poll() is None and is_running(command)
        control.stop("interrupted (Ctrl-C)")
        assert child.wait(10) == -signal.SIGTERM
        deadline = time.monotonic() + 10
        while is_running(command):
            assert time.monotonic() < deadline, "the session's command outlived the cancel"
            time.sleep(0.05)
        assert child.poll() == -signal.SIGTERM


def test_the_zygote_refuses_to_fork_when_a_second_thread_runs(tmp_path: Path, fakes: dict[str, str]) -> None:
    with zygote(fakes, "fake_session:report", preload=["threaded_preload", "fake_session"]) as z:
        assert z.threads() == 2
        with tempfile.TemporaryFile(mode="w+") as err, pytest.raises(ZygoteError, match="2 threads are running"):
            z.spawn(["agentica", "-p"], str(tmp_path), {}, err.fileno())
        # a refused session is started as a process of its own instead: slower, the same session
        answer = 'import sys; sys.stdin.read(); print(\'{"type": "result", "session_id": "s-1"}\')'
        options = RunOptions(batch_cwd=str(tmp_path), backoff_file=str(tmp_path / "backoff"), use_worktrees=False,
                             agentica=(sys.executable, "-c", answer))
        record = run_attempt(Task(id="f1", prompt="hi"), 1, options, Control(), None, z)
    assert record["status"] == "done" and record["session_id"] == "s-1", record
    assert len(z.fallbacks) == 1 and "2 threads are running" in z.fallbacks[0]  # the batch says so at its end


def test_a_zygote_that_cannot_start_is_an_error_not_a_hang(tmp_path: Path, fakes: dict[str, str]) -> None:
    z = Zygote(preload=[], entry="no_such_module:main", env=fakes)
    try:
        with pytest.raises(ZygoteError, match="no_such_module"):
            z.wait_ready(30)
    finally:
        z.close()


def test_every_module_the_zygote_preloads_exists() -> None:
    """A module renamed or moved would silently drop out of the preload (each session would
    import it again after the fork): the list must name real modules."""
    import importlib.util

    from agentica_cli.batch.zygote import PRELOAD

    assert [name for name in PRELOAD if importlib.util.find_spec(name) is None] == []


def test_a_zygote_that_dies_leaves_its_sessions_running_and_refuses_new_ones(tmp_path: Path,
                                                                           fakes: dict[str, str]) -> None:
    with zygote(fakes, "fake_session:hang") as z, tempfile.TemporaryFile(mode="w+") as err:
        child = z.spawn(["agentica", "-p"], str(tmp_path), dict(os.environ), err.fileno())
        assert child.stdout is not None and child.stdin is not None
        child.stdin.close()
        command = int(child.stdout.readline())
        z.process.kill()
        z.process.wait(10)
        time.sleep(0.3)
        assert is_running(child.pid) and child.poll() is None  # the session goes on
        with pytest.raises(ZygoteError):
            z.spawn(["agentica", "-p"], str(tmp_path), {}, err.fileno())
        os.killpg(child.pid, signal.SIGKILL)  # the batch's cancel still reaches its group
        assert child.wait(10) == 255  # its exit status died with the zygote
        deadline = time.monotonic() + 10
        while is_running(command):
            assert time.monotonic() < deadline
            time.sleep(0.05)


PROBED = '''
import json, sys

def report(args):
    """What the zygote left to this child: its TLS contexts (with their CA certificates, and
    without), its modules, its threads."""
    import threading

    chat_http = sys.modules.get("agentica_cli.models.chat_http")
    tls = [len(chat_http._tls_contexts), len(chat_http._unloaded)] if chat_http else None
    print(json.dumps({"tls": tls,
                      "later": "later_module" in sys.modules, "threads": threading.active_count()}))
    return 0

def sandbox(args):
    import threading

    from agentica_cli.sandbox import bwrap

    print(json.dumps({"probed": bwrap.bwrap_works.cache_info().currsize, "threads": threading.active_count()}))
    return 0
'''


@pytest.fixture
def probed(fakes: dict[str, str], tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "fakes"
    (folder / "probed_session.py").write_text(PROBED)
    (folder / "later_module.py").write_text("LOADED = True\n")
    return fakes


def _report(z: Zygote, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    code, out, err = _run(z, ["agentica", "-p"], cwd, env)
    assert code == 0, err
    report: dict[str, object] = json.loads(out)
    return report


def _report_once_ready(z: Zygote, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    """The report of a child forked as soon as `z` is ready, when no thread but its main one is
    left (then `z` is closed)."""
    try:
        z.wait_ready(60)
        assert z.threads() == 1
        return _report(z, cwd, env)
    finally:
        z.close()


@pytest.mark.parametrize("base_url, contexts", [(None, [1, 0]), ("https://models.example.invalid/v1", [1, 0]),
                                                ("http://127.0.0.1:8000/v1", [0, 1]), ("HTTP://127.0.0.1:1", [0, 1])])
def test_the_zygote_loads_ca_certificates_only_where_a_session_may_use_them(
        tmp_path: Path, probed: dict[str, str], base_url: str | None, contexts: list[int]) -> None:
    """The certificates (~47 ms, on the probe thread beside the imports) are for https: a batch
    whose --base-url is plain http never needs them; one that names none may (its provider's,
    a config file's). Plain http still gets the context a client holds, without certificates,
    made once for every child. Either way the thread is gone before the first fork."""
    z = Zygote(preload=["agentica_cli.sandbox.sandbox", "agentica_cli.models.chat_http", "probed_session"],
               entry="probed_session:report", env=probed, base_url=base_url)
    assert _report_once_ready(z, tmp_path, probed) == {"tls": contexts, "later": False, "threads": 1}


def test_the_sandbox_probe_runs_once_in_the_zygote_and_its_thread_ends_before_ready(
        tmp_path: Path, probed: dict[str, str]) -> None:
    """The backend probe ran on the zygote's thread: its answer (bwrap_works' cache) is in every
    child, which asks no more; and no thread is left at the fork."""
    z = Zygote(preload=["agentica_cli.sandbox.sandbox", "probed_session"], entry="probed_session:sandbox",
               env=probed)
    assert _report_once_ready(z, tmp_path, probed) == {"probed": 1, "threads": 1}


def test_later_modules_are_imported_once_ready_and_children_forked_after_have_them(
        tmp_path: Path, probed: dict[str, str]) -> None:
    z = Zygote(preload=["probed_session"], later=["later_module"], entry="probed_session:report", env=probed)
    try:
        z.wait_ready(60)
        deadline = time.monotonic() + 10
        while True:  # one module: in within moments of "ready", the zygote being idle
            report = _report(z, tmp_path, probed)
            if report["later"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert z.threads() == 1
    finally:
        z.close()
    assert report == {"tls": None, "later": True, "threads": 1}


def test_the_default_later_modules_exist_and_are_not_in_the_preload() -> None:
    import importlib.util

    from agentica_cli.batch.zygote import LATER, PRELOAD

    assert [name for name in LATER if importlib.util.find_spec(name) is None] == []
    assert set(LATER).isdisjoint(PRELOAD)


def test_the_early_zygote_gets_the_command_lines_base_url() -> None:
    from agentica_cli.batch.zygote_client import command_line_base_url

    assert command_line_base_url(["t.jsonl", "--base-url", "http://h:1/v1", "-j", "2"]) == "http://h:1/v1"
    assert command_line_base_url(["t.jsonl", "--base-url=https://h/v1"]) == "https://h/v1"
    assert command_line_base_url(["t.jsonl", "--base-url"]) is None
    assert command_line_base_url(["t.jsonl", "--", "--base-url", "http://h"]) is None
    assert command_line_base_url(["t.jsonl", "-m", "x"]) is None


def test_the_probe_thread_imports_nothing_beside_the_main_threads_imports() -> None:
    """Two threads importing at once can meet in a circular import: what the probes run is
    imported before their thread starts (zygote._PROBE_MODULES), so the thread imports nothing."""
    import subprocess

    code = """
import sys, threading
from agentica_cli.batch import zygote
for names in zygote._PROBE_MODULES.values():
    for name in names:
        __import__(name)
before = set(sys.modules)
thread = threading.Thread(target=zygote._probe, args=(True, True, zygote._UNKNOWN))
thread.start()
thread.join()
print(sorted(set(sys.modules) - before))
"""
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


FORKED = '''
import atexit, json, os, sys, tempfile, time
from agentica_cli.batch.zygote_client import Zygote

marks = sys.argv[1]
atexit.register(lambda: open(marks, "a").write(f"the atexit of {os.getpid()}\\n"))
kept = os.open(os.devnull, os.O_RDONLY)  # fork, unlike exec, keeps even a non-inheritable descriptor
zygote = Zygote(fork=sys.argv[2] == "fork", base_url="http://127.0.0.1:9/v1")
zygote.wait_ready()
pid = zygote.process.pid


def blocked_call():
    """The system call the zygote sleeps in (its arguments, stack and program counter), or None
    while it runs: once ready, it imports LATER whenever idle, each import opening files for a moment."""
    state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    call = open(f"/proc/{pid}/syscall").read()
    return call if state == "S" and not call.startswith("running") else None


def quiet_links():
    """Its descriptors, read while it sleeps in one and the same call from before to after."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        before = blocked_call()
        try:
            links = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        except FileNotFoundError:
            continue  # one closed while read
        if before is not None and blocked_call() == before:
            return links
        time.sleep(0.02)
    raise SystemExit("the zygote never slept")


links = quiet_links()
fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # state ppid pgrp session ...
with tempfile.TemporaryFile(mode="w+") as err:
    child = zygote.spawn(["agentica", "--version"], os.getcwd(), dict(os.environ), err.fileno())
    child.stdin.close()
    version = child.stdout.read()
    code = child.wait(30)
started = time.monotonic()
zygote.close(timeout=10)
print(json.dumps({"process": type(zygote.process).__name__, "links": links, "pid": pid, "session": int(fields[3]),
                  "ppid": int(fields[1]), "me": os.getpid(), "version": version, "code": code,
                  "exit": zygote.process.returncode, "close_s": time.monotonic() - started}))
'''


def test_the_batch_commands_zygote_is_a_fork_of_it_with_nothing_of_the_batchs_but_the_socket(
        tmp_path: Path) -> None:
    """`agentica batch` forks its zygote as it starts (zygote_client.fork_zygote): the child must be
    what `python -P -m agentica_cli.batch.zygote` would be. A session of its own; stdin and stdout
    on /dev/null and stderr on the memfd the batch reads; no descriptor of the batch's (the
    batch's end of the socket above all: held by the zygote, the socket would never end, and
    close() would wait out its timeout and kill it); none of the batch's atexit functions; its
    children still sessions that run `agentica`."""
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    marks = tmp_path / "atexit"
    done = subprocess.run([sys.executable, str(script), str(marks), "fork"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["process"] == "ForkedChild" and seen["ppid"] == seen["me"]
    assert seen["session"] == seen["pid"]
    links = {int(fd): target for fd, target in seen["links"].items()}
    assert links[0] == links[1] == os.devnull
    assert links[2].startswith("/memfd:agentica-zygote-stderr")
    others = sorted(target.split(":")[0] for fd, target in links.items() if fd > 2)
    assert others == ["pipe", "pipe", "socket"]  # the socket, and serve()'s own wake-up pipe
    assert seen["code"] == 0 and seen["version"].startswith("agentica ")
    assert seen["exit"] == 0 and seen["close_s"] < 5  # it saw the socket end: not killed after the timeout
    assert marks.read_text() == f"the atexit of {seen['me']}\n"  # the batch's, once: never the zygote's


def test_a_zygote_asked_to_fork_from_a_threaded_process_starts_a_new_interpreter(tmp_path: Path) -> None:
    """fork() copies only the calling thread: a process running two (a caller of main(argv), a
    library's thread) gets the `python -m` zygote instead, which works the same."""
    script = tmp_path / "forked.py"
    script.write_text("import threading, time\n"
                      "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n" + FORKED)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "atexit"), "fork"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["process"] == "Popen" and seen["session"] == seen["pid"]
    assert seen["code"] == 0 and seen["version"].startswith("agentica ") and seen["exit"] == 0


def test_only_the_agentica_command_forks_its_zygote_not_a_caller_of_main(monkeypatch: pytest.MonkeyPatch) -> None:
    """cli/app.main(argv) (a test, a program embedding agentica) must never fork the caller's
    process: only the console script's main() (argv None) asks start_early for a fork."""
    from agentica_cli.batch import zygote_client
    from agentica_cli.cli import app

    asked: list[bool] = []
    exits: list[int] = []
    monkeypatch.setattr(zygote_client, "start_early", lambda args, fork=False: asked.append(fork))
    assert app.main(["batch", "--no-such-flag"]) == 2
    monkeypatch.setattr(sys, "argv", ["agentica", "batch", "--no-such-flag"])
    monkeypatch.setattr("agentica_cli.app.fast_exit.exit_now", exits.append)  # the process goes on here
    assert app.main() == 2
    assert asked == [False, True] and exits == [2]


FIRST_REQUEST_IMPORTS = '''
import json, os, sys

def main(args):
    """`agentica`'s main, noting the modules the session imported itself by its first request
    (the model endpoint's send, the body built; chat_http is the zygote's already)."""
    from agentica_cli.cli.app import main as real
    from agentica_cli.models.chat_http import ChatEndpoint

    before, sent = set(sys.modules), ChatEndpoint._send
    async def send(self, *a, **k):
        with open(os.environ["IMPORTS_OUT"], "a") as out:
            out.write(json.dumps(sorted(set(sys.modules) - before)) + "\\n")
        ChatEndpoint._send = sent
        return await sent(self, *a, **k)
    ChatEndpoint._send = send
    return real(args)
'''


def test_a_batch_session_imports_nothing_the_zygote_did_not_preload_before_its_first_request(
        tmp_path: Path) -> None:
    """Each module a forked session imports itself is paid N times in a wave of N sessions on
    the batch's critical path (zygote.PRELOAD): the session runs as the batch runs it
    (task_run._session_argv, the prompt on stdin), against the scripted model server."""
    from agentica_cli.batch.task_run import _session_argv, _user_message
    from agentica_cli.testing import ScriptedModelServer, turns

    (tmp_path / "entry").mkdir()
    (tmp_path / "entry" / "first_request_imports.py").write_text(FIRST_REQUEST_IMPORTS)
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", *args], cwd=repo, check=True)
    key = tmp_path / "key"
    key.write_text("k\n")
    out = tmp_path / "imports.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
    env.update(AGENTICA_HOME=str(tmp_path / "home"), IMPORTS_OUT=str(out),
               PYTHONPATH=os.pathsep.join([str(tmp_path / "entry"), os.environ.get("PYTHONPATH", "")]))
    with ScriptedModelServer([turns.text("done")] * 2) as server:
        options = RunOptions(batch_cwd=str(repo), backoff_file=str(tmp_path / "backoff"), model="m",
                             base_url=server.base_url, api_key_file=str(key))
        argv = _session_argv(Task(id="t", prompt="hi"), repo, options, command=("agentica",))
        z = Zygote(base_url=server.base_url, env=env, entry="first_request_imports:main")
        try:
            z.wait_ready()
            code, output, errors = _run(z, argv, repo, env, stdin=_user_message("hi"))
        finally:
            z.close()
    assert code == 0, errors
    assert '"type": "result"' in output or '"type":"result"' in output
    assert [json.loads(line) for line in out.read_text().splitlines()] == [[]]
