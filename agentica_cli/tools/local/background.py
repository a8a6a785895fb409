"""Background processes: long-running commands (dev servers, watchers, `tail -f`) that the
agent starts with `execute(background=true)` and that outlive the call.

Each one starts like every other command (process_group.launch_options: the same scrubbed
environment, a process group of its own, and whatever wraps commands there), with the group
watcher that kills it if the agent dies. Its stdout and stderr, merged in the order they
were written, fill a bounded ring buffer from a reader thread: a thread and not the event
loop, because a library's `run_sync` runs each turn in a fresh loop and the process must
outlive it. The model reads the new output since its last read (a cursor per process) and
stops a process (SIGTERM to the group, then SIGKILL); everything is stopped when the session
ends (`stop_all`, also at interpreter exit).
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import itertools
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentica_cli.tools.local.output_capture import _cut_end, _cut_start
from agentica_cli.tools.local.process_group import (
    Starter,
    kill_pipe_holders,
    launch_options,
    start_watched,
    unwatch_group_blocking,
)

RING_BYTES = 1_000_000  # output kept per process; older output is dropped
READ_BYTES = 20_000  # new output in one result; more keeps its most recent part
START_WAIT_S = 0.5  # how long execute waits for early output or an early exit
STOP_GRACE_S = 3.0  # between SIGTERM and SIGKILL
MAX_RUNNING = 16
MAX_FINISHED_KEPT = 16  # ended processes listed (with their output) before the oldest goes
LAST_LINES = 3

_ids = itertools.count(1)
_T = TypeVar("_T")


class _SpawnThread:
    """Starts every background process from one thread that lives as long as this process.
    Linux sends the parent-death signal (PR_SET_PDEATHSIG: bwrap's --die-with-parent, a
    launcher's own prctl) when the *thread* that forked the child ends: a process started from
    a worker thread (asyncio.to_thread's pool goes with its event loop, so after every -p run
    and every run_sync turn) would be killed with that thread."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def run(self, job: Callable[[], _T]) -> _T:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._serve, daemon=True, name="agentica-background-spawn")
                self.thread.start()
        done: Future[_T] = Future()
        self.jobs.put((done, job))
        return done.result()

    def _serve(self) -> None:
        while True:
            done, job = self.jobs.get()
            try:
                done.set_result(job())
            except BaseException as exc:  # handed to the caller, whatever it is
                done.set_exception(exc)


_spawner = _SpawnThread()


class OutputRing:
    """The last `limit` bytes a process wrote, addressed by absolute offsets, so a reader
    can ask for everything since offset N and learn how much of it was already dropped."""

    def __init__(self, limit: int = RING_BYTES):
        self.limit = limit
        self.data = bytearray()
        self.start = 0  # absolute offset of data[0]
        self.lock = threading.Lock()

    @property
    def end(self) -> int:
        return self.start + len(self.data)

    def feed(self, chunk: bytes) -> None:
        with self.lock:
            self.data += chunk
            over = len(self.data) - self.limit
            if over > 0:
                del self.data[:over]
                self.start += over

    def since(self, offset: int) -> tuple[bytes, int]:
        """(the bytes from `offset` to the end that are still held, how many were dropped)."""
        with self.lock:
            begin = max(offset, self.start)
            return bytes(self.data[begin - self.start:]), begin - offset

    def last_lines(self, count: int) -> list[str]:
        with self.lock:
            tail = bytes(self.data[-4096:])
        text = _cut_start(tail).decode("utf-8", errors="replace")
        return [line for line in text.splitlines() if line.strip()][-count:]


@dataclass
class BackgroundProcess:
    id: str
    command: str
    process: subprocess.Popen[bytes]
    pipe_inode: int
    output: OutputRing = field(default_factory=OutputRing)
    started_at: float = field(default_factory=time.monotonic)
    watcher: subprocess.Popen[bytes] | None = None
    reader: threading.Thread | None = None
    cursor: int = 0  # how far the model has read
    stopped: bool = False  # ended by stop(), not by itself
    ended_at: float | None = None
    read_lock: threading.Lock = field(default_factory=threading.Lock)  # one reader moves the cursor at a time

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def exit_code(self) -> int | None:
        return self.process.poll()

    @property
    def running(self) -> bool:
        return self.exit_code is None

    @property
    def state(self) -> str:
        code = self.exit_code
        if code is None:
            return "running"
        if self.stopped:
            return "stopped"
        return f"exited {code}" if code >= 0 else f"killed by signal {-code}"

    @property
    def uptime(self) -> float:
        if self.ended_at is None and not self.running:
            self.ended_at = time.monotonic()
        return (self.ended_at or time.monotonic()) - self.started_at

    def read_new(self, limit: int = READ_BYTES) -> str:
        """The output since the last read, as text; the cursor moves past it."""
        with self.read_lock:
            data, dropped = self.output.since(self.cursor)
            whole = _cut_end(data)  # a character cut by the read's end is read whole next time
            self.cursor += dropped + len(whole)
        skipped = dropped
        if len(whole) > limit:
            skipped += len(whole) - limit
            whole = _cut_start(whole[-limit:])
        text = whole.decode("utf-8", errors="replace")
        if skipped:
            text = f"[... {skipped:,} earlier bytes skipped ...]\n" + text
        return text


def format_uptime(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, also those that started a session of their own (a
    sandbox's inner command, a daemonising child): the group's signal does not reach them."""
    children: dict[int, list[int]] = {}
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return set()
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    found: set[int] = set()
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        if child not in found:
            found.add(child)
            todo.extend(children.get(child, ()))
    return found


def _signal_tree(entry: BackgroundProcess, sig: signal.Signals, *, root: bool = True) -> None:
    """`sig` to every process below the process, then (with `root`) to its group."""
    for pid in descendants(entry.pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    if root:
        _signal_group(entry.pid, sig)


def _wait(entries: list[BackgroundProcess], until: float, *, root: bool = True) -> None:
    def busy(entry: BackgroundProcess) -> bool:
        return bool(descendants(entry.pid)) or (root and (entry.running or _group_alive(entry.pid)))

    while time.monotonic() < until and any(busy(e) for e in entries):
        time.sleep(0.05)


class BackgroundProcesses:
    """The background processes of a session: start, read, stop, list, stop_all.

    Its methods read_background_output and stop_background are the model's tools (the
    execute tool registers them); start is reached through execute(background=true)."""

    def __init__(self) -> None:
        self.processes: dict[str, BackgroundProcess] = {}
        self.lock = threading.Lock()

    # -- start ----------------------------------------------------------------------------

    def start(self, argv: list[str], *, command: str, cwd: str, env: dict[str, str],
              start: Starter | None = None) -> BackgroundProcess:
        """Start `argv` (the shell running `command`) in a group of its own and return at once.
        `start`: a sandbox's hook that is handed the function starting the process (Landlock)."""
        running = [p for p in self.list() if p.running]
        if len(running) >= MAX_RUNNING:
            raise RuntimeError(f"{len(running)} background processes are running already; "
                               "stop one with stop_background first")
        read_end, write_end = os.pipe()
        inode = os.fstat(read_end).st_ino
        try:
            argv, options = launch_options(argv, cwd=cwd, env=env)
            def popen() -> subprocess.Popen[bytes]:
                return subprocess.Popen(argv, stdout=write_end, stderr=write_end, **options)

            # The watcher starts first, on the spawn thread too (see _SpawnThread), and is told
            # the group there right after the start: no moment without a watcher.
            process, watcher = _spawner.run(
                lambda: start_watched(popen if start is None else lambda: start(popen), [inode]))
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        entry = BackgroundProcess(f"bg{next(_ids)}", command, process, inode)
        entry.watcher = watcher
        entry.reader = threading.Thread(target=self._pump, args=(entry, read_end), daemon=True,
                                        name=f"agentica-{entry.id}-output")
        entry.reader.start()
        with self.lock:
            self.processes[entry.id] = entry
            self._forget_old_finished()
        _stop_at_exit(self)
        return entry

    def start_and_describe(self, argv: list[str], *, command: str, cwd: str, env: dict[str, str],
                           note: str = "", start: Starter | None = None) -> str:
        """execute(background=true): start, wait a moment for early output, describe (+ `note`)."""
        report = start_report(self.start(argv, command=command, cwd=cwd, env=env, start=start))
        return f"{report}\n{note}" if note else report

    def _pump(self, entry: BackgroundProcess, read_end: int) -> None:
        """Copy the process's output into its ring until every writer has closed the pipe."""
        with open(read_end, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                entry.output.feed(chunk)
        # Nothing holds the output any more; once the shell has ended too, the group needs
        # no watcher (a pgid that outlives its group could be reused by another one).
        entry.process.wait()
        entry.ended_at = entry.ended_at or time.monotonic()
        if entry.watcher is not None and not _group_alive(entry.pid):
            unwatch_group_blocking(entry.watcher)

    def _forget_old_finished(self) -> None:
        finished = [p for p in self.processes.values() if not p.running]
        for old in finished[: max(0, len(finished) - MAX_FINISHED_KEPT)]:
            del self.processes[old.id]

    # -- look up --------------------------------------------------------------------------

    def list(self) -> list[BackgroundProcess]:
        with self.lock:
            return list(self.processes.values())

    def get(self, process_id: str) -> BackgroundProcess:
        """The process by id (`bg3`, or just `3`); a readable error names the known ones."""
        key = process_id.strip()
        key = f"bg{key}" if key.isdigit() else key
        with self.lock:
            found = self.processes.get(key)
        if found is None:
            known = ", ".join(self.processes) or "none"
            raise KeyError(f"no background process {process_id!r} (known: {known})")
        return found

    # -- stop -----------------------------------------------------------------------------

    def stop(self, process_id: str, grace: float = STOP_GRACE_S) -> BackgroundProcess:
        entry = self.get(process_id)
        self.stop_many([entry], grace)
        return entry

    def stop_all(self, grace: float = STOP_GRACE_S) -> builtins.list[BackgroundProcess]:  # `list`: the method above
        """Stop every process still running (their groups too); the ones stopped."""
        alive = [p for p in self.list() if p.running or _group_alive(p.pid)]
        self.stop_many(alive, grace)
        return alive

    @staticmethod
    def stop_many(entries: Iterable[BackgroundProcess], grace: float = STOP_GRACE_S) -> None:
        """SIGTERM to each group and everything below its process (a sandboxed command runs
        in a session of its own); SIGKILL to whatever is left after `grace` seconds, also to
        processes that left the tree but still hold the output pipe."""
        entries = list(entries)
        started = time.monotonic()
        # The processes below first: the root may be a wrapper (bwrap) whose death would
        # SIGKILL the real server before its SIGTERM handler ran.
        for entry in entries:
            if entry.running:
                entry.stopped = True
            _signal_tree(entry, signal.SIGTERM, root=False)
        _wait(entries, started + grace / 2, root=False)
        for entry in entries:
            _signal_tree(entry, signal.SIGTERM)
        _wait(entries, started + grace)
        for entry in entries:
            _signal_tree(entry, signal.SIGKILL)
            entry.process.wait()
            if entry.reader is not None:
                entry.reader.join(0.2)
                if entry.reader.is_alive():  # someone outside the group still holds the output
                    kill_pipe_holders([entry.pipe_inode])
                    entry.reader.join(1.0)
            if entry.watcher is not None:
                unwatch_group_blocking(entry.watcher)
            entry.ended_at = entry.ended_at or time.monotonic()

    # -- the model's tools ------------------------------------------------------------------

    def read_background_output(self, id: str) -> str:
        """Read what a background process (execute with background=true) printed since the last read.

        Args:
            id: The process id that execute returned, e.g. bg1.
        """
        entry = self.get(id)
        text = entry.read_new()
        return f"[{describe(entry)}]\n" + (text.rstrip("\n") if text.strip() else "(no new output)")

    def stop_background(self, id: str) -> str:
        """Stop a background process and its child processes (SIGTERM, then SIGKILL).

        Args:
            id: The process id that execute returned, e.g. bg1.
        """
        entry = self.get(id)
        was_running = entry.running
        self.stop_many([entry])
        note = "stopped" if was_running else f"had already ended ({entry.state}); its group is cleaned up"
        last = entry.read_new()
        return f"{entry.id} {note}." + (f"\nIts last output:\n{last.rstrip()}" if last.strip() else "")


def describe(entry: BackgroundProcess) -> str:
    return f"{entry.id}: {entry.state}, pid {entry.pid}, up {format_uptime(entry.uptime)}"


def start_report(entry: BackgroundProcess) -> str:
    """What execute(background=true) tells the model: the id, what it printed in its first
    moments (or how it ended), and how to read and stop it."""
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline and entry.running:
        time.sleep(0.02)
    if not entry.running and entry.reader is not None:
        entry.reader.join(0.5)  # the last output of a process that ended at once
    output = entry.read_new().rstrip("\n")
    if entry.running:
        head = f"Started background process {entry.id} (pid {entry.pid}); it keeps running after this call."
    else:
        head = f"Background process {entry.id} ended at once: {entry.state}."
    lines = [head, "Output so far:" if output.strip() else "No output yet.", *([output] if output.strip() else [])]
    lines.append(f'Read new output with read_background_output(id="{entry.id}"); '
                 f'stop it with stop_background(id="{entry.id}").')
    return "\n".join(lines)


_SHARED: BackgroundProcesses | None = None
_SHARED_LOCK = threading.Lock()
_AT_EXIT: set[int] = set()


def background_processes() -> BackgroundProcesses:
    """The process-wide registry: every execute tool (sub-agents' too) starts its background
    processes here, so /ps sees them all and the session's end stops them all."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = BackgroundProcesses()
        return _SHARED


def _stop_at_exit(registry: BackgroundProcesses) -> None:
    """A library user's script that ends stops its processes gracefully (the watcher would
    SIGKILL them anyway when this process is gone)."""
    with _SHARED_LOCK:
        if id(registry) in _AT_EXIT:
            return
        _AT_EXIT.add(id(registry))
    atexit.register(registry.stop_all)
