"""One attempt of one task: its worktree, its setup, an `agentica -p --input-format stream-json
--output-format stream-json` session (the prompt one user message on stdin), its check in the
sandbox, its commit and diff; the result as a results.jsonl record.

Plain and synchronous, so the local workers (threads) and Ray (a remote function on any node)
run the very same code. Each session is a process of its own: a task's crash, cwd, sandbox
and environment stay its own, and the session is exactly what `agentica -p` does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from agentica_cli.batch.limiter import Prices
from agentica_cli.batch.results import Record
from agentica_cli.batch.tasks import Task
from agentica_cli.shared_backoff import ENV as BACKOFF_ENV
from agentica_cli.worktrees import Repository, Worktree

if TYPE_CHECKING:
    from agentica_cli.batch.zygote_client import Zygote

_OUTPUT_TAIL = 4000  # characters of a setup's or check's output kept in the record
_STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL for a cancelled task's processes


@dataclass(frozen=True)
class RunOptions:
    """What every task of a batch shares (picklable: Ray sends it to the nodes)."""

    batch_cwd: str
    backoff_file: str
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    api_key_file: str | None = None
    sandbox: str | None = None  # the sessions' and the checks' sandbox mode (default: workspace-write)
    max_turns: int | None = None
    use_worktrees: bool = True
    prices: Prices = field(default_factory=Prices)
    agentica: tuple[str, ...] = ()  # how to start agentica; () = this interpreter on the machine that runs the task
    results_path: str = ""  # the batch's results.jsonl: marks the worktrees this batch made
    clone_root: str | None = None  # where `repo` URLs are cloned (default: a folder in the temp dir)
    # Sessions in the worktrees the batch makes take no checkpoints (their work is committed on
    # the task's branch, a batch's undo); True: they take them as any `-p` run does (--checkpoints)
    checkpoints: bool = False


class TaskEvents(Protocol):
    """What a running attempt reports, for the progress display and the budget."""

    def phase(self, key: str, phase: str) -> None: ...

    def usage(self, key: str, tokens: int, cost: float | None) -> None: ...

    def busy(self, key: str, starting: bool) -> None:
        """`starting`: the attempt is in its CPU-bound start (its worktree, its setup, its
        session up to the first model request); False: it waits for its model, or is idle."""


class Stoppable(Protocol):
    """A process an attempt started, leading a process group of its own: a subprocess.Popen made
    with start_new_session, or a session the zygote forked (zygote_client.ZygoteProcess)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...


class Control:
    """Stops running attempts: every process an attempt starts is registered here, so a Ctrl-C
    or a spent budget ends them (their whole process group) and the attempt reports cancelled."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.reason = ""
        self._lock = threading.Lock()
        self._processes: set[Stoppable] = set()

    def add(self, process: Stoppable) -> None:
        with self._lock:
            self._processes.add(process)
        if self.stopping.is_set():
            _terminate(process)

    def discard(self, process: Stoppable) -> None:
        with self._lock:
            self._processes.discard(process)

    def stop(self, reason: str) -> None:
        if self.stopping.is_set():
            return
        self.reason = reason
        self.stopping.set()
        with self._lock:
            running = list(self._processes)
        for process in running:
            _terminate(process)

        def kill_late() -> None:
            time.sleep(_STOP_GRACE)
            with self._lock:
                left = [p for p in self._processes if p.poll() is None]
            for process in left:
                _signal_group(process, signal.SIGKILL)

        threading.Thread(target=kill_late, daemon=True, name="agentica-batch-stop").start()


def _signal_group(process: Stoppable, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _terminate(process: Stoppable) -> None:
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)


def _tail(text: str) -> str:
    return text if len(text) <= _OUTPUT_TAIL else "…" + text[-_OUTPUT_TAIL:]


def _run_command(argv: list[str], cwd: Path, control: Control, *, env: dict[str, str] | None = None,
                 start: Callable[[Callable[[], subprocess.Popen[str]]], subprocess.Popen[str]] | None = None,
                 ) -> tuple[int, str]:
    """Run a setup or check command in its own process group; (exit code, output tail)."""
    def popen() -> subprocess.Popen[str]:
        return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)

    process = start(popen) if start is not None else popen()
    control.add(process)
    try:
        output, _ = process.communicate()
    finally:
        _terminate(process)
        control.discard(process)
    return process.returncode, _tail(output or "")


def _clone(repo: str, options: RunOptions) -> Path:
    """A clone of `repo` on this machine, made once and shared by the tasks naming it."""
    root = Path(options.clone_root or Path(tempfile.gettempdir()) / f"agentica-batch-repos-{os.getuid()}")
    root.mkdir(parents=True, exist_ok=True)
    target = root / hashlib.sha256(repo.encode()).hexdigest()[:16]
    import fcntl

    with open(str(target) + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".git").exists():
            partial = Path(tempfile.mkdtemp(prefix="clone-", dir=root))
            done = subprocess.run(["git", "clone", "--quiet", "--", repo, str(partial)], capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
            if done.returncode != 0:
                shutil.rmtree(partial, ignore_errors=True)
                raise RuntimeError(f"git clone {repo} failed: {(done.stderr or '').strip()[-500:]}")
            partial.rename(target)
    return target


def _session_argv(task: Task, work_dir: Path, options: RunOptions, command: tuple[str, ...] | None = None,
                  in_worktree: bool = False) -> list[str]:
    if not command and not options.agentica:
        from agentica_cli.batch.zygote_client import python_module_command

        command = tuple(python_module_command("agentica_cli"))
    command = command or options.agentica
    # The prompt is a user message on stdin (--input-format stream-json), not argv: any length,
    # nothing taken for a flag, and the session can start before it is sent (Attempt.prepare).
    argv = [*command, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "-C", str(work_dir)]
    for flag, value in (("--model", task.model or options.model), ("--provider", options.provider),
                        ("--base-url", options.base_url), ("--api-key-file", options.api_key_file),
                        ("--permission-mode", task.permission_mode), ("--sandbox", options.sandbox),
                        ("--max-turns", str(options.max_turns) if options.max_turns else None)):
        if value:
            argv += [flag, value]
    if in_worktree and not options.checkpoints:
        # The batch commits the task's work on its branch: the session's own snapshots (a scan of
        # the worktree at the start and at each turn's end, on the cores the wave's starts share)
        # would only repeat it. Outside a worktree (--no-worktrees, no git) they are the undo.
        argv.append("--no-checkpoints")
    return argv


def _user_message(prompt: str) -> str:
    """The prompt as the one stdin line of `--input-format stream-json`."""
    return json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}, ensure_ascii=False) + "\n"


@dataclass
class _SessionOutcome:
    exit_code: int | None = None
    session_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reported_cost: float | None = None
    error: str | None = None
    stderr: str = ""
    model: str | None = None


class _Session(Stoppable, Protocol):
    stdin: Any
    stdout: Any

    def wait(self, timeout: float | None = None) -> int: ...


def _start_session(task: Task, work_dir: Path, options: RunOptions, env: dict[str, str], stderr: IO[str],
                   zygote: Zygote | None, in_worktree: bool = False) -> _Session:
    """The session's process: forked by the batch's zygote when there is one (what `agentica`
    imports is loaded already), else `python -m agentica_cli`."""
    if zygote is not None:
        from agentica_cli.batch.zygote_client import ZygoteError

        try:
            return zygote.spawn(_session_argv(task, work_dir, options, ("agentica",), in_worktree), str(work_dir), env,
                                stderr.fileno())
        except ZygoteError as err:  # the plain process below: slower, the same session
            zygote.fallbacks.append(str(err))
            stderr.write(f"agentica batch: the zygote could not start this session ({err}); "
                         "started it as a process of its own\n")
            stderr.flush()
    return subprocess.Popen(_session_argv(task, work_dir, options, in_worktree=in_worktree), cwd=work_dir, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True,
                            errors="replace", start_new_session=True)


def _run_check(check: str, work_dir: Path, options: RunOptions, control: Control) -> tuple[int, str]:
    """The task's check (e.g. its tests) in the sandbox the sessions use: it runs the code the
    agent wrote, so it gets no more than the agent's own commands."""
    from agentica_cli.sandbox import DEFAULT_MODE, Sandbox, SandboxPolicy

    hidden = [options.api_key_file] if options.api_key_file else []  # as the session hides it from its commands
    sandbox = Sandbox(SandboxPolicy.build(options.sandbox or DEFAULT_MODE, work_dir, hide=hidden))
    launch = sandbox.prepare(["/bin/sh", "-c", check], work_dir)
    return _run_command(launch.argv, work_dir, control, env=sandbox.environment(dict(os.environ)), start=launch.start)


_MARKER = "agentica-batch"  # in a batch worktree's git folder: the results file of the batch that made it

# The repository each folder of a batch is in, and the commit its worktrees start from, asked of
# git once per batch and folder (keyed by the batch's own backoff file, unique to a run: a Ray
# worker process outlives its batch). Every task and attempt of a batch then starts from the
# same commit, though the main checkout moves on; and a wave of N workers runs one `git
# rev-parse` instead of N, on the cores the wave's starts share. None: the folder is not in git.
_repositories: dict[tuple[str, str], Repository | None] = {}
_repositories_lock = threading.Lock()


def batch_repository(folder: Path, options: RunOptions) -> Repository | None:
    """open_repository(folder), once per batch (options.backoff_file) and folder."""
    from agentica_cli.worktrees import WorktreeError, open_repository

    key = (options.backoff_file, str(folder))
    with _repositories_lock:
        if key in _repositories:
            return _repositories[key]
    try:
        found: Repository | None = open_repository(folder)
    except WorktreeError:
        found = None
    with _repositories_lock:
        return _repositories.setdefault(key, found)


def _worktree_for(task: Task, attempt: int, folder: Path, options: RunOptions) -> tuple[Worktree, Path] | None:
    """A fresh worktree batch-ID-ATTEMPT of the repository `folder` is in, and the folder in it
    that matches `folder` (None outside git). One this batch left behind (Ctrl-C, a crash) is
    replaced: its result is not in results.jsonl, so nobody has seen its work. One made by
    another batch or by hand is not touched: the attempt fails with an error saying so."""
    from agentica_cli.worktrees import BRANCH_PREFIX, WorktreeError, create_worktree, remove_worktree
    from agentica_cli.worktrees.manager import WORKTREES_FOLDER, git_dir

    repository = batch_repository(folder, options)
    if repository is None:
        return None
    results_path = options.results_path
    root = repository.root
    name = f"batch-{task.id}-{attempt}"
    path = root / WORKTREES_FOLDER / name
    if path.exists() or (root / ".git" / "refs" / "heads" / BRANCH_PREFIX / name).exists():
        marker = git_dir(path) / _MARKER if path.is_dir() else None
        owner = marker.read_text().strip() if marker is not None and marker.exists() else ""
        if owner != results_path:
            made_by = f"by the batch writing {owner}" if owner else "by hand or by --worktree"
            raise RuntimeError(f"worktree {name} exists, made {made_by}; remove it (agentica worktrees rm --force "
                               f"{name}) or give the task another id")
        with contextlib.suppress(WorktreeError):
            remove_worktree(root, name, force=True)
    tree = create_worktree(folder, name, repository=repository)
    (git_dir(tree.path) / _MARKER).write_text(results_path + "\n")
    return tree, tree.path / folder.relative_to(root)


def _events(lines: IO[str]) -> Iterator[dict[str, Any]]:
    """A session's stream-json events, as they come (a line that is not one is skipped)."""
    for line in lines:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


class Attempt:
    """One attempt of one task, in two steps.

    prepare(): its worktree and, when the task has no setup and `start_session` is asked, its
    session started up to its `session` line (`--input-format stream-json` writes it once the
    session is ready: MCP servers, SessionStart hooks). run(): the setup, the prompt sent, the
    session to its end, the commit, the diff and the check; always a record.

    A local batch prepares the next attempts while its workers' sessions wait for their models
    (runner.py), so a worker that frees sends the next prompt at once. A prepared attempt talks
    to no model and runs no tool or setup until a worker runs it; one that no worker runs
    (the batch stopped) is discarded: its session ended, its worktree and branch removed, no
    record, so the next run of the batch does it. Its wait for a worker is `timings_s.waiting`,
    which `duration_s` leaves out.
    """

    def __init__(self, task: Task, attempt: int, options: RunOptions, control: Control,
                 events: TaskEvents | None = None, zygote: Zygote | None = None, shown: bool = True) -> None:
        self.task = task
        self.attempt = attempt
        self.key = f"{task.id}#{attempt}"
        self.options = options
        self.control = control
        self.events = events
        self.zygote = zygote
        self.shown = shown  # whether `events` hears its phases (a prepared one: once a worker runs it)
        self.started = time.time()
        self.record: Record = {
            "id": task.id, "attempt": attempt, "status": "error", "exit_code": None, "check_exit_code": None,
            "check_output": None, "error": None, "diff": None, "files_changed": [],
            "tokens": {"input": 0, "output": 0, "total": 0}, "cost": None, "session_id": None, "branch": None,
            "worktree": None, "model": task.model or options.model, "started_at": round(self.started, 3)}
        self.timings: dict[str, float] = {}
        self._phase: tuple[str, float] | None = None
        self.tree: Worktree | None = None
        self.work_dir: Path | None = None
        self.session: _Session | None = None
        self._stderr: IO[str] | None = None
        self._early: list[dict[str, Any]] = []  # events read before the prompt was sent (its `session` line)
        self.outcome = _SessionOutcome()
        self.begun = False  # prepare() ran
        self.ended = False  # the record is final: prepare() found the attempt cannot run
        self._starting = False  # told to events.busy: CPU-bound start, from the worktree to the first request
        self._prompt_sent = False  # send_prompt() ran (a worker took it over at its previous session's result)
        self.on_result: Callable[[], None] | None = None  # run(): called once, at the session's result line
        self.before_commit: Callable[[], None] | None = None  # run(): called once, before its commit

    # -- phases --------------------------------------------------------------------------------

    def _enter(self, name: str | None) -> None:
        """Move to phase `name` (None: the end); each phase's seconds go into `timings_s`."""
        now = time.monotonic()
        if self._phase is not None:
            previous, since = self._phase
            self.timings[previous] = round(self.timings.get(previous, 0.0) + now - since, 3)
        self._phase = (name, now) if name is not None else None
        if name is not None and self.shown and self.events is not None:
            self.events.phase(self.key, name)

    def _busy(self, starting: bool) -> None:
        if starting != self._starting:
            self._starting = starting
            if self.events is not None:
                self.events.busy(self.key, starting)

    # -- the two steps -------------------------------------------------------------------------

    def prepare(self, start_session: bool = False) -> None:
        """Its worktree (and with `start_session` its session, up to ready): errors end the
        attempt (`ended`, the record says why); a stop (Ctrl-C, a budget) ends it cancelled."""
        self.begun = True
        self._busy(True)
        try:
            if self.control.stopping.is_set():
                raise _Cancelled
            self._enter("worktree")
            self._make_worktree()
            if start_session and not self.task.setup:  # a setup runs first, when a worker runs the attempt
                self._spawn(prepared=True)
                self._wait_until_ready()
                self._enter("waiting")
        except (_Cancelled, KeyboardInterrupt):
            self._end(status="cancelled", error=self.control.reason or "interrupted")
        except Exception as err:  # the task could not run: its record says why, the batch goes on
            self._end(error=f"{type(err).__name__}: {err}")
        finally:
            if start_session:
                self._busy(False)  # ready and idle until a worker runs it

    def can_take_over(self) -> bool:
        """Whether send_prompt() may start it: prepared up to a ready session (no setup first)."""
        return self.session is not None and not self.ended and not self._prompt_sent

    def send_prompt(self) -> None:
        """Start its turn now, before run() (which then reads it): the prompt goes to the
        prepared session. A worker does this at its previous session's result line, while that
        session ends and its work is committed."""
        self.shown = True
        self._busy(True)
        self._enter("session")
        self._write_prompt()
        self._prompt_sent = True

    def read_until_request(self) -> None:
        """For an attempt whose prompt send_prompt() sent: read its session's events up to its
        first model request (run() takes them as if read then), so that its start is over when
        this returns (or its session ended first: a failure run() reports)."""
        session = self.session
        if session is None or not self._prompt_sent or session.stdout is None:
            return
        for event in _events(session.stdout):
            self._early.append(event)
            if event.get("type") == "model_request_started" and not event.get("source"):
                break
            if event.get("type") == "result":
                break
        self._busy(False)

    def run(self) -> Record:
        """The rest of the attempt, to its end; always the record (errors are status "error")."""
        self.shown = True
        try:
            if not self.begun:
                self.prepare()
            if self.ended:
                return self.record
            if self.control.stopping.is_set():
                raise _Cancelled
            self._busy(True)
            if self.task.setup and not self._run_setup():  # (prepare() starts no session for it)
                return self.record
            if self.session is None:
                self._spawn(prepared=False)  # the "session" phase from here
            elif not self._prompt_sent:
                self._enter("session")
            self._converse()
            self._after_session()
            return self.record
        except (_Cancelled, KeyboardInterrupt):
            self.record.update(status="cancelled", error=self.control.reason or "interrupted")
            self._stop_session()  # one stopped before it was read (prepared, or its prompt sent ahead)
            return self.record
        except Exception as err:  # the task could not run: its record says why, the batch goes on
            self.record.update(error=f"{type(err).__name__}: {err}")
            return self.record
        finally:
            self._busy(False)
            self._finish()

    def discard(self) -> None:
        """A prepared attempt no worker will run: its session ends, its worktree and branch go."""
        self._busy(False)
        self._stop_session(politely=True)
        if self.tree is not None:
            from agentica_cli.worktrees import WorktreeError, remove_worktree

            with contextlib.suppress(WorktreeError, OSError):
                remove_worktree(self.tree.repository, self.tree.name, force=True)

    # -- the steps' parts ----------------------------------------------------------------------

    def _end(self, **fields: Any) -> None:
        self.record.update(fields)
        self.ended = True
        self._busy(False)
        self._stop_session()

    def _stop_session(self, *, politely: bool = False) -> None:
        """End a session that will not get (or finish) its prompt: `politely`, its stdin closed
        first, so that it ends by itself (SessionEnd hooks and all); then its process group."""
        session = self.session
        if session is None:
            return
        if politely:
            with contextlib.suppress(OSError, ValueError):
                session.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                session.wait(_STOP_GRACE)
        _terminate(session)
        with contextlib.suppress(subprocess.TimeoutExpired):
            session.wait(_STOP_GRACE)
        self._close_session()

    def _finish(self) -> None:
        self._enter(None)
        now = time.time()
        waited = self.timings.get("waiting", 0.0)
        self.record.update(finished_at=round(now, 3), duration_s=round(now - self.started - waited, 3),
                           timings_s=self.timings)

    def _make_worktree(self) -> None:
        task, options = self.task, self.options
        folder = Path(task.cwd or ".") if task.repo is None else _clone(task.repo, options) / (task.cwd or ".")
        if not folder.is_absolute():
            folder = Path(options.batch_cwd) / folder
        folder = Path(os.path.realpath(folder))
        if not folder.is_dir():
            raise RuntimeError(f"cwd {folder}: no such folder")
        self.work_dir = folder
        made = _worktree_for(task, self.attempt, folder, options) if options.use_worktrees else None
        if made is not None:
            self.tree, self.work_dir = made
            self.record.update(branch=self.tree.branch, worktree=str(self.tree.path))

    def _run_setup(self) -> bool:
        assert self.work_dir is not None and self.task.setup
        self._enter("setup")
        code, output = _run_command(["/bin/sh", "-c", self.task.setup], self.work_dir, self.control)
        if self.control.stopping.is_set():
            raise _Cancelled
        if code != 0:
            self.record.update(error=f"setup exited {code}: {output[-500:]}")
            return False
        if self.tree is not None:  # what the setup made (a lock file, generated code) is not the agent's work
            from agentica_cli.worktrees import commit_all

            if commit_all(self.tree, f"agentica batch: setup of {self.task.id}"):
                self.tree = dataclasses.replace(self.tree, base=self.tree.head)
        return True

    def _wait_for_zygote(self) -> None:
        zygote = self.zygote
        if zygote is not None and not zygote.is_ready():  # the first wave waits for its imports: a phase
            # of its own in timings_s (bench_batch's t_ready), not the session's time
            from agentica_cli.batch.zygote_client import ZygoteError

            self._enter("zygote")
            with contextlib.suppress(ZygoteError):  # _start_session says why and starts a process instead
                zygote.wait_ready()

    def _spawn(self, prepared: bool) -> None:
        assert self.work_dir is not None
        self._wait_for_zygote()
        self._enter("start" if prepared else "session")  # "start": the session's own start, up to ready
        # on a Ray node the batch's folder may not exist yet: the node's sessions share this file
        Path(self.options.backoff_file).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        env = {**os.environ, BACKOFF_ENV: self.options.backoff_file}
        self._stderr = tempfile.TemporaryFile(mode="w+", errors="replace")  # noqa: SIM115 (closed by _close_session)
        try:
            self.session = _start_session(self.task, self.work_dir, self.options, env, self._stderr, self.zygote,
                                          in_worktree=self.tree is not None)
        except BaseException:
            self._stderr.close()
            self._stderr = None
            raise
        self.control.add(self.session)

    def _wait_until_ready(self) -> None:
        """Read the session's stdout up to its `session` line (or its end: it failed to start,
        which run() then reports as the session's failure)."""
        assert self.session is not None
        for event in _events(self.session.stdout):
            self._early.append(event)
            if event.get("type") == "session":
                return
        if self.control.stopping.is_set():
            raise _Cancelled

    def _converse(self) -> None:
        """Send the prompt, read the session's events to its end."""
        session, outcome = self.session, self.outcome
        assert session is not None and session.stdout is not None
        try:
            if not self._prompt_sent:
                self._write_prompt()
            for event in itertools.chain(self._early, _events(session.stdout)):
                self._take(event)
            outcome.exit_code = session.wait()
        finally:
            self._busy(False)
            _terminate(session)
            session.wait()
            self._close_session()

    def _write_prompt(self) -> None:
        session = self.session
        assert session is not None and session.stdin is not None
        with contextlib.suppress(BrokenPipeError, OSError):
            session.stdin.write(_user_message(self.task.prompt))
            session.stdin.close()

    def _take(self, event: dict[str, Any]) -> None:
        outcome = self.outcome
        kind = event.get("type")
        if kind == "session":
            outcome.session_id = event.get("session_id")
            outcome.model = event.get("model")
        elif kind == "model_request_started" and not event.get("source"):
            self._busy(False)  # it waits for its model now
        elif kind == "usage":
            outcome.input_tokens += int(event.get("input_tokens") or 0)
            outcome.output_tokens += int(event.get("output_tokens") or 0)
            if self.events is not None:
                tokens = outcome.input_tokens + outcome.output_tokens
                self.events.usage(self.key, tokens,
                                  self.options.prices.cost(outcome.input_tokens, outcome.output_tokens))
        elif kind == "result":
            usage = event.get("usage") or {}
            if isinstance(usage.get("cost"), (int, float)):
                outcome.reported_cost = float(usage["cost"])
            outcome.error = event.get("error")
            outcome.session_id = event.get("session_id") or outcome.session_id
            hand_over, self.on_result = self.on_result, None
            if hand_over is not None and not self.task.check:  # a check runs before the next task starts
                hand_over()

    def _close_session(self) -> None:
        if self.session is not None:
            self.control.discard(self.session)
        if self._stderr is not None:
            self._stderr.seek(0)
            self.outcome.stderr = _tail(self._stderr.read())
            self._stderr.close()
            self._stderr = None

    def _after_session(self) -> None:
        """The commit and diff, the exit's meaning, the check: the record's status."""
        outcome, record, task = self.outcome, self.record, self.task
        cost = outcome.reported_cost
        if cost is None:
            cost = self.options.prices.cost(outcome.input_tokens, outcome.output_tokens)
        record.update(exit_code=outcome.exit_code, session_id=outcome.session_id, cost=cost,
                      model=outcome.model or record["model"],
                      tokens={"input": outcome.input_tokens, "output": outcome.output_tokens,
                              "total": outcome.input_tokens + outcome.output_tokens})
        if self.tree is not None:
            from agentica_cli.worktrees import commit_all, worktree_changes

            wait, self.before_commit = self.before_commit, None
            if wait is not None:
                wait()
            self._enter("commit")
            changed = commit_all(self.tree, f"agentica batch: {task.id} (attempt {self.attempt})")
            files, diff = worktree_changes(self.tree, clean=not changed)
            record.update(files_changed=files, diff=diff)
        if self.control.stopping.is_set():
            raise _Cancelled
        if outcome.exit_code is not None and outcome.exit_code < 0:  # a signal ended it: a crash, not an answer
            record.update(error=f"the session crashed: {_signal_name(-outcome.exit_code)}"
                          + "".join(f"; {line}" for line in outcome.stderr.strip().splitlines()[-1:]))
            return
        if outcome.exit_code != 0:
            detail = outcome.error or outcome.stderr.strip().splitlines()[-1:] or ["no answer"]
            record.update(status="failed", error=detail if isinstance(detail, str) else detail[0])
            return
        if task.check:
            assert self.work_dir is not None
            self._enter("check")
            code, output = _run_check(task.check, self.work_dir, self.options, self.control)
            if self.control.stopping.is_set():
                raise _Cancelled
            record.update(check_exit_code=code, check_output=output)
            if code != 0:
                record.update(status="check-failed")
                return
        record.update(status="done")


def run_attempt(task: Task, attempt: int, options: RunOptions, control: Control,
                events: TaskEvents | None = None, zygote: Zygote | None = None) -> Record:
    """Run one attempt to its end; always returns a record (errors become status "error").
    With `zygote` the session is forked from it (zygote_client.py), else started as a process."""
    return Attempt(task, attempt, options, control, events, zygote).run()


class _Cancelled(Exception):
    pass


def _signal_name(number: int) -> str:
    try:
        return f"killed by {signal.Signals(number).name}"
    except ValueError:
        return f"killed by signal {number}"


def run_attempt_remote(task_data: dict[str, Any], attempt: int, options: RunOptions) -> Record:
    """The Ray task: one attempt on whichever node Ray chose. A ray.cancel() arrives as a
    KeyboardInterrupt, which ends the session's process group on that node."""
    control = Control()
    try:
        return run_attempt(Task.from_dict(task_data), attempt, options, control)
    except KeyboardInterrupt:
        control.stop("cancelled")
        raise
