"""The batch's end of the zygote (zygote.py): start it, ask it for a session process, follow
that process to its end. A `ZygoteProcess` stands where a subprocess.Popen would: pid, poll(),
wait(), returncode, stdin and stdout pipes; its pid leads a process group of its own, so the
batch's cancel (os.killpg) treats both alike.

Linux only (fork after imports is not safe on macOS); elsewhere, with AGENTICA_BATCH_ZYGOTE=0,
or when the zygote cannot start, sessions are plain processes (task_run.py).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time

from agentica_cli.procs import ForkedChild, is_running, wait_for_exit

TYPE_CHECKING = False  # not typing's: the batch starts its zygote before importing it (~7 ms)
if TYPE_CHECKING:
    from typing import IO, Any

ENV_SWITCH = "AGENTICA_BATCH_ZYGOTE"  # "0": every session a plain `python -m agentica_cli` process
_READY_TIMEOUT = 60.0  # seconds for the zygote's imports, on a very busy machine
_STATUS_LOST = 255  # the exit code of a session whose zygote ended before it did


class ZygoteError(Exception):
    """The zygote could not start, refused a request, or is gone."""


def python_module_command(module: str) -> list[str]:
    """`python -m MODULE` with nothing imported from the current folder: plain `-m` puts the
    current folder first on sys.path, and a session runs in the task's repository, where a
    `typer.py` or `json.py` would then be imported instead of the real one (and run, outside any
    sandbox). -P (Python 3.11+) leaves the folder out; before 3.11 the same by hand."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", module]
    return [sys.executable, "-c", f"import sys; del sys.path[0]; import runpy; "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"]


def zygote_wanted(agentica_command: tuple[str, ...]) -> bool:
    """Whether this batch forks its sessions from a zygote: on Linux, when the sessions run this
    interpreter's agentica (not a command given in RunOptions.agentica) and it is not turned off."""
    return (not agentica_command and sys.platform.startswith("linux") and hasattr(socket, "send_fds")
            and os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "no", "false", "off"))


class ZygoteProcess:
    """A session forked by the zygote, seen from the batch."""

    def __init__(self, client: Zygote, request_id: int) -> None:
        self._client = client
        self.request_id = request_id
        self.pid = 0
        self.returncode: int | None = None
        self.cpu_s: float | None = None  # the CPU time it used, once it ended
        self.stdin: IO[str] | None = None
        self.stdout: IO[str] | None = None
        self._started = threading.Event()
        self._ended = threading.Event()
        self._error: str | None = None

    # what the zygote's reader thread reports
    def _set_pid(self, pid: int) -> None:
        self.pid = pid
        self._started.set()

    def _set_error(self, error: str) -> None:
        self._error = error
        self._started.set()
        self._ended.set()

    def _set_exit(self, code: int, cpu_s: float | None = None) -> None:
        self.cpu_s = cpu_s
        self.returncode = code
        self._ended.set()

    def _lost(self) -> None:
        """The zygote is gone: wait for the process itself (now init's child) to be gone."""
        if not self._started.is_set():
            self._set_error("the zygote ended before it started the session")
            return
        if self.returncode is not None:
            return

        def follow() -> None:
            while self.pid and is_running(self.pid):
                time.sleep(0.05)
            self._set_exit(_STATUS_LOST)

        threading.Thread(target=follow, daemon=True, name="agentica-zygote-orphan").start()

    def wait_started(self, timeout: float) -> None:
        if not self._started.wait(timeout):
            raise ZygoteError("the zygote did not answer a fork request")
        if self._error is not None:
            raise ZygoteError(self._error)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(["agentica -p (zygote child)"], timeout or 0)
        return self.returncode if self.returncode is not None else _STATUS_LOST


class Zygote:
    """One zygote process for the batch and the thread that reads its answers. `preload`: the
    modules it imports (None: what `-p` needs, zygote.PRELOAD); `entry`: what each child runs
    (None: `agentica`'s main); `env`: the zygote's own environment (each child gets its own);
    `base_url`: the sessions' --base-url, if the batch has one (a plain http:// one: the zygote
    loads no CA certificates); `later`: what it imports once ready, while idle (None: zygote.LATER
    with the default preload, else nothing)."""

    def __init__(self, preload: list[str] | None = None, entry: str | None = None,
                 env: dict[str, str] | None = None, base_url: str | None = None,
                 later: list[str] | None = None, fork: bool = False) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._waiting: dict[int, ZygoteProcess] = {}
        self._next_id = 0
        self._ready = threading.Event()
        self._closed = False
        self.error: str | None = None
        self.pid: int | None = None
        self.ready_at: float | None = None  # time.time() when it said it was ready (bench_batch's t_ready)
        self.fallbacks: list[str] = []  # why sessions were started as plain processes instead (task_run.py)
        argv = [*python_module_command("agentica_cli.batch.zygote"), "--fd", str(theirs.fileno())]
        for module in preload if preload is not None else ():
            argv += ["--preload", module]
        if preload is not None and not preload:
            argv += ["--preload", ""]  # none at all (not the default list)
        for module in later or ():
            argv += ["--later", module]
        if entry:
            argv += ["--entry", entry]
        if base_url:
            argv += ["--base-url", base_url]
        # in memory, not tempfile's (~7 ms of imports before the zygote can start); Linux only, as the zygote
        self._stderr = open(os.memfd_create("agentica-zygote-stderr"), "w+b")  # noqa: SIM115 (closed in close())
        self.process: subprocess.Popen[bytes] | ForkedChild
        try:
            if fork and preload is None and entry is None and later is None and env is None and _one_thread():
                self.process = fork_zygote(theirs.fileno(), self._stderr.fileno(), base_url)
            else:
                self.process = subprocess.Popen(argv, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=self._stderr, env=env,
                                                start_new_session=True)  # no Ctrl-C from the terminal
        finally:
            theirs.close()
        # json (~7 ms with `re`) once the zygote is on its way, here rather than by the reader thread
        import json  # noqa: F401

        self._reader = threading.Thread(target=self._read, daemon=True, name="agentica-zygote-reader")
        self._reader.start()

    def _read(self) -> None:
        import json

        try:
            while True:
                data = self._sock.recv(65536)
                if not data:
                    break
                message: dict[str, Any] = json.loads(data)
                if message.get("ready"):
                    self.pid = int(message["pid"])
                    self.ready_at = time.time()
                    self._ready.set()
                    continue
                with self._lock:
                    child = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
                if child is None:
                    continue
                if "pid" in message:
                    child._set_pid(int(message["pid"]))
                elif "error" in message:
                    with self._lock:
                        self._waiting.pop(child.request_id, None)
                    child._set_error(str(message["error"]))
                elif "exit" in message:
                    with self._lock:
                        self._waiting.pop(child.request_id, None)
                    cpu = message.get("cpu_s")
                    child._set_exit(int(message["exit"]), float(cpu) if isinstance(cpu, (int, float)) else None)
        except (OSError, ValueError):
            pass
        self._gone()

    def _gone(self) -> None:
        with self._lock:
            self._closed = True
            orphans = list(self._waiting.values())
            self._waiting.clear()
        if self.error is None:
            self.error = "the zygote ended" + self._stderr_tail()
        self._ready.set()
        for child in orphans:
            child._lost()

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return f": {text[-500:]}" if text else ""

    def is_ready(self) -> bool:
        """Whether it answered (ready, or gone): wait_ready() then returns at once."""
        return self._ready.is_set()

    def wait_ready(self, timeout: float = _READY_TIMEOUT) -> None:
        if not self._ready.wait(timeout):
            raise ZygoteError("the zygote did not get ready in time")
        if self.pid is None:
            raise ZygoteError(self.error or "the zygote ended")

    def spawn(self, argv: list[str], cwd: str, env: dict[str, str], stderr: int) -> ZygoteProcess:
        """A session process: `argv` as `agentica` would run it (argv[0] is its name), its stdin and
        stdout pipes to us (text), its stderr on the file descriptor `stderr`."""
        self.wait_ready()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            with self._lock:
                if self._closed:
                    raise ZygoteError(self.error or "the zygote ended")
                self._next_id += 1
                child = ZygoteProcess(self, self._next_id)
                self._waiting[child.request_id] = child
            import json

            message = json.dumps({"id": child.request_id, "argv": argv, "cwd": cwd, "env": env}).encode()
            try:
                with self._send_lock:
                    socket.send_fds(self._sock, [message], [stdin_r, stdout_w, stderr])
            except OSError as err:
                with self._lock:
                    self._waiting.pop(child.request_id, None)
                raise ZygoteError(f"the zygote is gone: {err}") from err
            child.wait_started(_READY_TIMEOUT)
        except BaseException:
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            raise
        finally:
            for fd in (stdin_r, stdout_w):  # the child has its own copies now
                os.close(fd)
        child.stdin = open(stdin_w, "w", errors="replace")  # noqa: SIM115 (the session closes them)
        child.stdout = open(stdout_r, errors="replace")  # noqa: SIM115
        return child

    def close(self, timeout: float = 5.0) -> None:
        """End the zygote (its running children are the batch's to stop: they go on)."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        try:
            wait_for_exit(self.process, timeout)  # the batch's end waits for this: no polling (procs.py)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stderr.close()

    def threads(self) -> int:
        """How many threads the zygote runs (Linux: /proc): 1, or it refuses to fork."""
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
        return 0


def _one_thread() -> bool:
    """Whether fork() may copy this process (it copies only the calling thread): the zygote's
    own test, whose module the forked zygote imports next anyway."""
    from agentica_cli.batch.zygote import threads_running

    return threads_running() == 1


def fork_zygote(sock_fd: int, stderr_fd: int, base_url: str | None) -> ForkedChild:
    """The zygote as a fork of this process (the batch's, as it starts: one thread, little
    imported), not a new interpreter: it is ready ~25 ms sooner (no interpreter start,
    `-m`, argv parsing), and every session of the batch's first wave waits for them. The child
    is what `python -P -m agentica_cli.batch.zygote` would be: a session of its own, stdin and
    stdout on /dev/null, stderr on `stderr_fd`, no file descriptor but the socket, none of
    the batch's atexit functions, no folder of the command line's on sys.path."""
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        with contextlib.suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:
        _become_zygote(sock_fd, stderr_fd, base_url)  # never returns
    return ForkedChild(pid, "agentica batch (zygote)")


def _become_zygote(sock_fd: int, stderr_fd: int, base_url: str | None) -> None:
    code = 1
    try:
        os.setsid()  # no Ctrl-C from the terminal: the batch ends it (its socket closes)
        import atexit

        from agentica_cli.batch import zygote

        atexit._clear()  # the batch's exit functions are the batch's
        null = os.open(os.devnull, os.O_RDWR)
        for target, fd in ((0, null), (1, null), (2, stderr_fd)):
            os.dup2(fd, target)
        # every other descriptor closed: the batch's end of the socket above all (held here,
        # the socket would never end, nor the zygote)
        os.closerange(3, sock_fd)
        os.closerange(sock_fd + 1, zygote.max_fd())
        if not sys.flags.safe_path and sys.path:  # what -P leaves out: the script's folder, or
            del sys.path[0]  # the current one (`python -m agentica_cli`): a task's repository
        sys.argv = ["agentica batch (zygote)"]
        code = zygote.run(socket.socket(fileno=sock_fd), base_url=base_url or zygote.UNKNOWN_BASE_URL)
    except BaseException:  # nothing may return into the batch's code
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc()
    finally:
        from agentica_cli.app.fast_exit import exit_now

        exit_now(code)


_early: Zygote | None = None


def command_line_base_url(args: list[str]) -> str | None:
    """The value of `--base-url URL` (or `--base-url=URL`) in the batch's arguments, if any."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--base-url" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--base-url="):
            return arg.partition("=")[2]
    return None


def start_early(args: list[str], fork: bool = False) -> None:
    """Start the zygote as `agentica batch TASKS.jsonl ...` starts, before the command line is
    parsed: its imports then run beside the batch's own (~0.5 s of a batch's fixed start on 2
    cores). Not for --ray or --help; unused when the batch stops first (bad flags, a bad tasks
    file), it ends with the batch's process (its socket closes). `fork`: this process is the
    `agentica` command (not a caller of main(argv)), so the zygote may be a fork of it."""
    global _early
    if _early is not None or any(a in ("--ray", "-h", "--help") or a.startswith("--ray=") for a in args):
        return
    if zygote_wanted(()):
        try:
            _early = Zygote(base_url=command_line_base_url(args), fork=fork)
        except (OSError, ZygoteError):
            _early = None  # run_local tries again and says why


def take_early() -> Zygote | None:
    """The zygote start_early() started, once."""
    global _early
    zygote, _early = _early, None
    return zygote
