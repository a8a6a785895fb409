"""The batch's zygote: one warm process that forks each task's `agentica -p` session.

Every task of a local batch is a session process of its own (its own cwd, environment, sandbox,
crash). Started as `python -m agentica_cli` each of them pays ~0.4-0.6 s of CPU for the
interpreter's start and the imports before its first model request; on a 2-core machine that,
not the model, caps how many tasks finish per second. The zygote pays it once: it imports what
`-p` needs, then forks a child per task, and the child runs the very entry point `agentica -p`
runs (`agentica_cli.cli.app:main`) with the task's argv, cwd, environment and stdio.

    python -m agentica_cli.batch.zygote --fd N [--preload MODULE]... [--later MODULE]... [--entry MODULE:FUNCTION]
                                         [--base-url URL]

Protocol, on the SOCK_SEQPACKET socket N (one JSON message a packet; zygote_client.py is the
other end): the zygote says {"ready": true, "pid"} once its imports are done (PRELOAD; LATER
follows while it waits for requests); a request
{"id", "argv", "cwd", "env"} carries three file descriptors (the child's stdin, stdout,
stderr) and is answered {"id", "pid"} (once the child leads a session of its own; the next request is
forked meanwhile, so answers may come in another order) or {"id", "error"}; when a child ends, {"id", "exit"}
(the exit code; minus the signal number when a signal ended it, as subprocess reports it)
with "cpu_s", the CPU time the child used (user + system, from wait4).
The zygote ends when the socket closes.

The zygote is single-threaded from the moment it is ready: fork() copies only the calling
thread, so a lock another thread held would stay locked in the child. (Before that, one thread
runs the probes that wait rather than compute beside the imports, and is joined, to the OS's
word, before "ready".) It refuses to fork (an "error" answer) when more than one thread runs.
Nothing is shared that must not be: no model client, HTTP connection or thread exists before
the fork (the imports make none), `random` reseeds itself in the child (os.register_at_fork),
the sandbox (bubblewrap, Landlock) is applied by each session to its own commands, and the
child replaces its environment, argv, cwd, stdio and signal handlers before any agentica code
runs. See docs/batch.md.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from agentica_cli.app.fast_exit import exit_now, finalize

# What `agentica -p --output-format stream-json` imports before its first model request: the
# command line, the start-up, the printers, the runtime (agent, tools, model transport).
PRELOAD = (
    "agentica_cli.cli.app",
    "agentica_cli.cli.plain_flags",  # a batch session's command line, read without typer (_session_argv's flags)
    "agentica_cli.cli.launch",
    "agentica_cli.app.process_hardening",
    "agentica_cli.app.startup_gc",
    "agentica_cli.app.dataclass_code_cache",
    "agentica_cli.sandbox.descendants",
    "agentica_cli.sandbox.sandbox",
    "agentica_cli.app.settings.config",
    "agentica_cli.app.settings.trust",
    "agentica_cli.app.startup",
    "agentica_cli.app.runtime",
    "agentica_cli.headless.printers",
    "agentica_cli.models.chat_http",
    "agentica_cli.deep",
    "builtin_tools",
    # imported inside functions on the way to the first request (found by diffing sys.modules
    # of a forked `-p` run before and after)
    "agentica_cli.agent.result_budget",
    "agentica_cli.app.checkpoint_setup",
    "agentica_cli.app.extension_setup",
    "agentica_cli.app.hooks",
    "agentica_cli.app.instruction_imports",
    "agentica_cli.app.instructions",
    "agentica_cli.app.permissions.approvals",
    "agentica_cli.app.permissions.permission_rules",
    "agentica_cli.app.permissions.tool_kinds",
    "agentica_cli.app.sandbox_settings",
    "agentica_cli.app.session_images",
    "agentica_cli.app.sessions",
    "agentica_cli.app.settings.mcp_json",
    "agentica_cli.app.settings.system_prompt_flags",
    "agentica_cli.app.toolkit_setup",
    "agentica_cli.app.usage",
    "agentica_cli.checkpoints.backups",
    "agentica_cli.checkpoints.journal",
    "agentica_cli.checkpoints.shadow",
    "agentica_cli.checkpoints.store",
    "agentica_cli.extensions.agents",
    "agentica_cli.extensions.commands",
    "agentica_cli.extensions.frontmatter",
    "agentica_cli.extensions.hook_config",
    "agentica_cli.extensions.loading",
    "agentica_cli.extensions.model_names",
    "agentica_cli.extensions.places",
    "agentica_cli.extensions.skills",
    "agentica_cli.extensions.tool_names",
    "agentica_cli.headless.claude_protocol",
    "agentica_cli.headless.stream_input",  # a batch session's prompt comes as stream-json (task_run.py)
    "agentica_cli.headless.stream_input_run",
    "agentica_cli.app.settings.api_key_input",  # --api-key-file, which a batch passes on to every session
    "agentica_cli.models.dialects",
    "agentica_cli.models.warmup",
    "agentica_cli.toolkits.catalog",
    "agentica_cli.tools.listing",
    "agentica_cli.tools.mcp.env_refs",
    "agentica_cli.tools.schema",
    "builtin_tools.task",
    "docstring_parser",
    "hmac",
    "secrets",
    "shlex",
    "encodings.ascii",
    # imported by every forked session and not above (found by a sys.modules diff in the child)
    "agentica_cli.app.prices",
    "agentica_cli.app.session",
    "agentica_cli.project_grants",
    # (and the HTTP client the sessions send with: preload() adds chat_http.transport_modules)
    "_ctypes",  # not ctypes (LATER): something before the first request loads the C module alone
)
# What sessions import after their first request (or only some of them: a shell command's
# parser, the sandbox's ctypes, a failed request's words): imported once the zygote is ready, one
# module at a time while no request waits, so the first sessions do not wait for them and the
# later ones (forked once they are in) do not import them again. The first sessions import what
# they need of them themselves, while they wait for their model's answer.
LATER = (
    "agentica_cli.app.permissions.shell_grammar",
    "agentica_cli.app.permissions.shell_parts",
    "agentica_cli.checkpoints.prune",
    "agentica_cli.models.provider_errors",
    "agentica_cli.worktrees",
    "ctypes",
)
ENTRY = "agentica_cli.cli.app:main"
MAX_MESSAGE = 1 << 20  # a request: argv, cwd and the whole environment


class ZygoteRefusal(Exception):
    """Why the zygote will not fork now (sent back as the request's "error")."""


def threads_running() -> int:
    """The threads of this process: Python's, and on Linux also any a C library started."""
    try:
        return max(threading.active_count(), len(os.listdir("/proc/self/task")))
    except OSError:
        return threading.active_count()


UNKNOWN_BASE_URL = _UNKNOWN = "?"  # preload()'s base_url when the batch's command line names none: maybe https


def preload(modules: tuple[str, ...] | list[str], base_url: str | None = _UNKNOWN) -> int:
    """Import `modules` (one that is missing is skipped: the child imports it itself, or fails
    as `agentica -p` would) and do the machine-wide probes whose answers are cached; the
    number of modules loaded. The probes that wait rather than compute (the sandbox's, which
    runs a process; the CA certificates, parsed in C with the GIL released) run on a thread
    beside the imports, joined before this returns: no thread outlives it (fork_child checks).
    `base_url`: the sessions' endpoint when the batch's command line names it; a plain http://
    one never needs the certificates (models/warmup.may_use_tls), so they are not loaded."""
    import importlib

    probes = _start_probes(modules, base_url, importlib.import_module)
    try:
        for name in filter(None, [*modules, *_transport_modules(modules, base_url)]):
            try:
                importlib.import_module(name)
            except ImportError:
                continue
    finally:
        if probes is not None:
            _join(probes)
    if _PROBE_MODULES["sandbox"][0] in modules:
        _settle_sandbox()
    if "builtin_tools" in sys.modules:
        _warm_tool_schemas()
    return len(sys.modules)


def _transport_modules(modules: tuple[str, ...] | list[str], base_url: str | None) -> tuple[str, ...]:
    """The HTTP client the sessions' first requests import (models/http1.py, or httpx2's stack
    where a proxy is set), when `modules` holds the model transport: each child would import it
    itself, N x ~15-60 ms of CPU in a wave of N."""
    if "agentica_cli.models.chat_http" not in modules:
        return ()
    try:
        from agentica_cli.models import chat_http

        return chat_http.transport_modules(chat_http.UNKNOWN_BASE_URL if base_url == _UNKNOWN else base_url)
    except Exception:
        return ()  # (a base URL chat_http cannot read: the children meet it and report it)


# What the probe thread runs, imported by the main thread before it starts: two threads importing
# at once can meet in a circular import (one then gets a half-initialised module, or a deadlock
# error), so the thread only runs code that is loaded already (and C code, and a process).
_PROBE_MODULES = {"sandbox": ("agentica_cli.sandbox.sandbox", "agentica_cli.sandbox.bwrap"),
                  "tls": ("agentica_cli.models.chat_http", "agentica_cli.models.warmup")}


def _start_probes(modules: tuple[str, ...] | list[str], base_url: str | None,
                  load: Callable[[str], object]) -> threading.Thread | None:
    sandbox = _PROBE_MODULES["sandbox"][0] in modules
    tls = _PROBE_MODULES["tls"][0] in modules
    if not (sandbox or tls):
        return None
    try:
        for name in (*(_PROBE_MODULES["sandbox"] if sandbox else ()), *(_PROBE_MODULES["tls"] if tls else ())):
            load(name)
    except ImportError:
        return None  # the import loop meets it again; each session probes for itself
    thread = threading.Thread(target=_probe, args=(sandbox, tls, base_url), name="agentica-zygote-probes",
                              daemon=True)
    thread.start()
    return thread


def _probe(sandbox: bool, tls: bool, base_url: str | None) -> None:
    if sandbox:  # whether bubblewrap works here (its probe runs a process): the same answer for
        # every task, asked once (bwrap_works caches it); the other backends after the join
        # (_settle_sandbox), in the main thread
        from agentica_cli.sandbox.sandbox import probe_bubblewrap

        probe_bubblewrap()
    if tls:  # the CA certificates in a TLS context (chat_http caches it), unless never needed
        try:
            from agentica_cli.models import chat_http
            from agentica_cli.models.warmup import may_use_tls

            if base_url == _UNKNOWN or may_use_tls(base_url):
                chat_http.tls_context()
            else:  # the client still holds a context, made without its CA certificates (never
                # loaded for plain http): made here once, each child inherits it (a process's first one: ~1.7 ms)
                chat_http.unloaded_tls_context()
        except Exception:
            pass  # the first https request meets the same failure and reports it


def _settle_sandbox() -> None:
    """The sessions' sandbox backend, asked once in the zygote's main thread once bubblewrap's
    probe is in: where bubblewrap does not work, Landlock is asked next, and its module (ctypes
    with it) is then loaded here for every child instead of in each."""
    try:
        from agentica_cli.sandbox.sandbox import best_backend

        best_backend()
    except Exception:
        pass  # each session asks again and reports it


def _join(thread: threading.Thread, timeout: float = 5.0) -> None:
    """Join the probe thread and wait until the OS no longer lists it (a joined thread's OS
    thread ends a moment after join() returns), so the first fork does not see two threads."""
    import time

    thread.join()
    deadline = time.monotonic() + timeout
    while threads_running() > 1 and time.monotonic() < deadline:
        time.sleep(0.0005)


def import_later(name: str) -> None:
    """One module of LATER, its objects then frozen as the preload's are."""
    import importlib

    try:
        importlib.import_module(name)
    except Exception:
        pass  # a child that needs it imports it itself, or fails as `agentica -p` would
    freeze_heap()


def freeze_heap() -> None:
    """Move everything the imports made into the collector's permanent generation (gc.freeze,
    meant for fork without exec): a child's collections then never walk the preloaded heap,
    which would write to every object's header and so copy every page of it (memory, and CPU
    in a long task). No gc.collect() first: it walks the whole heap (~28 ms of the zygote's
    start, which every batch waits for) to free the little garbage imports leave."""
    import gc

    gc.freeze()


def _warm_tool_schemas() -> None:
    """Build the builtin tools' schemas once: each session builds its own tools (and their
    schemas) again, but with the caches this fills (compiled regular expressions, typing's
    generic aliases, docstring_parser's) it takes ~5 ms instead of ~20."""
    import tempfile

    try:
        from builtin_tools import get_builtin_tools

        with tempfile.TemporaryDirectory(prefix="agentica-zygote-") as folder:
            for tool in get_builtin_tools(folder):
                for function in tool.functions.values():
                    function.to_openai()
    except Exception:
        pass  # each session builds its own and reports what fails


def resolve_entry(spec: str) -> Callable[[list[str]], int | None]:
    import importlib

    module, _, function = spec.partition(":")
    entry: Callable[[list[str]], int | None] = getattr(importlib.import_module(module), function or "main")
    return entry


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass  # the batch is gone: the loop sees the end of the socket next


def serve(sock: socket.socket, entry: Callable[[list[str]], int | None], later: tuple[str, ...] = ()) -> None:
    """Answer fork requests until the socket closes; reap the children and report their ends.
    `later`: modules to import once ready, one at a time whenever no request or child's end
    waits (a request waits for one module's import at most)."""
    pending = list(later)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # wakes the select() through the fd
    children: dict[int, Any] = {}
    starting: dict[int, tuple[int, Any]] = {}  # a forked child's "started" pipe -> (its pid, its request's id)
    open_socket = True
    try:
        _send(sock, {"ready": True, "pid": os.getpid(), "modules": len(sys.modules)})
        while open_socket:
            readable, _, _ = select.select([sock.fileno(), wake_r, *starting], [], [],
                                           0 if pending and not starting else 1.0)
            if not readable and pending:
                import_later(pending.pop(0))
                continue
            for fd in [fd for fd in readable if fd in starting]:
                _started(sock, starting, fd)
            if wake_r in readable:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            _reap(sock, children, starting)
            if sock.fileno() in readable:
                open_socket = _answer(sock, children, starting, entry, (wake_r, wake_w))
    finally:
        signal.set_wakeup_fd(-1)
        os.close(wake_r)
        os.close(wake_w)


def _started(sock: socket.socket, starting: dict[int, tuple[int, Any]], fd: int) -> None:
    """A child leads a session of its own (its end of the pipe closed): its pid goes to the batch."""
    pid, request_id = starting.pop(fd)
    os.close(fd)
    _send(sock, {"id": request_id, "pid": pid})


def _reap(sock: socket.socket, children: dict[int, Any], starting: dict[int, tuple[int, Any]]) -> None:
    while children:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        request_id = children.pop(pid, None)
        for fd in [fd for fd, (started, _) in starting.items() if started == pid]:
            _started(sock, starting, fd)  # (it ended before the loop saw its pipe close) its pid first
        if request_id is not None:
            _send(sock, {"id": request_id, "exit": os.waitstatus_to_exitcode(status),
                         "cpu_s": round(usage.ru_utime + usage.ru_stime, 4)})


def _answer(sock: socket.socket, children: dict[int, Any], starting: dict[int, tuple[int, Any]],
            entry: Callable[[list[str]], int | None], own_fds: tuple[int, ...]) -> bool:
    """Read one request and fork its child, whose pid is answered once it leads a session of its
    own (`starting`, watched by serve's loop: the next request is forked meanwhile; waiting here
    for each child to be scheduled made a wave of 8 forks take ~80 ms on 2 busy cores instead of
    ~20); False when the socket has closed."""
    try:
        data, fds, _flags, _address = socket.recv_fds(sock, MAX_MESSAGE, 3)
    except OSError:
        return False
    if not data:
        return False
    request_id: Any = None
    try:
        request = json.loads(data)
        request_id = request.get("id")
        if len(fds) != 3:
            raise ZygoteRefusal(f"a request carries 3 file descriptors (stdin, stdout, stderr), not {len(fds)}")
        argv, cwd, env = request["argv"], request["cwd"], request["env"]
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and argv):
            raise ZygoteRefusal("argv must be a non-empty list of strings")
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise ZygoteRefusal("env must map strings to strings")
        pid, started = _fork(argv, str(cwd), env, fds, entry, close=(sock.fileno(), *own_fds))
    except ZygoteRefusal as err:
        _send(sock, {"id": request_id, "error": str(err)})
        return True
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        _send(sock, {"id": request_id, "error": f"bad request: {err}"})
        return True
    except OSError as err:
        _send(sock, {"id": request_id, "error": f"fork failed: {err}"})
        return True
    finally:
        for fd in fds:
            os.close(fd)
    children[pid] = request_id
    starting[started] = (pid, request_id)
    return True


def fork_child(argv: list[str], cwd: str, env: dict[str, str], fds: list[int],
               entry: Callable[[list[str]], int | None], close: tuple[int, ...] = ()) -> int:
    """Fork a child that runs `entry(argv[1:])` as a process of its own; its pid, once the
    child leads a session and process group of its own (so that a signal sent to the group
    right after this returns reaches it, as with subprocess's start_new_session)."""
    pid, started = _fork(argv, cwd, env, fds, entry, close)
    try:
        os.read(started, 1)  # returns b"" once the child closed its end
    finally:
        os.close(started)
    return pid


def _fork(argv: list[str], cwd: str, env: dict[str, str], fds: list[int],
          entry: Callable[[list[str]], int | None], close: tuple[int, ...] = ()) -> tuple[int, int]:
    """Fork the child (fork_child's); its pid and a pipe that reads its end once the child leads
    a session and process group of its own."""
    running = threads_running()
    if running != 1:
        raise ZygoteRefusal(f"{running} threads are running in the zygote; fork() copies only one "
                            "(a lock another held would stay locked in the child)")
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    started_r, started_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(started_r)
            os.setsid()
        finally:
            os.close(started_w)  # tells the zygote setsid() is done (or failed: then it exits at once)
        _run_child(argv, cwd, env, fds, entry, close)
    os.close(started_w)
    return pid, started_r


def _run_child(argv: list[str], cwd: str, env: dict[str, str], fds: list[int],
               entry: Callable[[list[str]], int | None], close: tuple[int, ...]) -> None:
    code = 1
    try:
        _become_the_task(argv, cwd, env, fds, close)
        code = _exit_code_of(entry, argv[1:])
    except BaseException:  # nothing may return into the zygote's loop
        try:
            import traceback

            traceback.print_exc()
        except BaseException:
            pass
    finally:
        finalize()
        os._exit(code)


def _become_the_task(argv: list[str], cwd: str, env: dict[str, str], fds: list[int], close: tuple[int, ...]) -> None:
    """Everything the task's process must not share with the zygote: the socket, the signal
    set-up, stdio, the cwd, the environment, argv."""
    signal.set_wakeup_fd(-1)
    for fd in close:
        os.close(fd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, max_fd())  # the received fds, anything an import left open
    # the handlers a fresh interpreter has
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
                signal.SIGALRM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = list(argv)
    _new_stdio()
    from agentica_cli import child_env

    child_env.note_user_environment()  # the task's environment is the user's, not the zygote's


def max_fd() -> int:
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (ValueError, OSError):
        return 65536


def _new_stdio() -> None:
    """sys.stdin/stdout/stderr on the new fds 0-2, buffered as a fresh interpreter buffers them."""
    import io

    def stream(fd: int, mode: str, old: Any, line_buffering: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: Any = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(buffered, encoding=getattr(old, "encoding", None) or "utf-8",
                                errors=getattr(old, "errors", None) or "strict", line_buffering=line_buffering)

    for name, fd, mode, line_buffering in (("stdin", 0, "r", False), ("stdout", 1, "w", os.isatty(1)),
                                           ("stderr", 2, "w", True)):
        new = stream(fd, mode, getattr(sys, f"__{name}__"), line_buffering)
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)


def _exit_code_of(entry: Callable[[list[str]], int | None], args: list[str]) -> int:
    """Run `entry` as the interpreter runs a program: SystemExit's code, 1 after an uncaught
    exception (its traceback on stderr), and death by SIGINT after an uncaught Ctrl-C."""
    try:
        result = entry(args)
    except SystemExit as stop:
        result = stop.code  # type: ignore[assignment]
    except KeyboardInterrupt:
        finalize()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    if result is None:
        return 0
    if isinstance(result, int):
        return result & 0xFF
    print(result, file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agentica_cli.batch.zygote", description=__doc__.splitlines()[0])
    parser.add_argument("--fd", type=int, required=True, help="the SOCK_SEQPACKET socket to the batch")
    parser.add_argument("--preload", action="append", default=None, metavar="MODULE",
                        help="a module to import before forking (repeatable; default: what -p needs)")
    parser.add_argument("--later", action="append", default=None, metavar="MODULE",
                        help="a module to import once ready, while idle (repeatable; default: LATER "
                        "without --preload, else none)")
    parser.add_argument("--entry", default=ENTRY, metavar="MODULE:FUNCTION", help="what each child runs")
    parser.add_argument("--base-url", default=_UNKNOWN, metavar="URL",
                        help="the sessions' endpoint, when the batch names it (plain http: no CA certificates)")
    opts = parser.parse_args(argv)
    later = opts.later if opts.later is not None else (LATER if opts.preload is None else [])
    return run(socket.socket(fileno=opts.fd), tuple(opts.preload) if opts.preload is not None else PRELOAD,
               tuple(later), opts.entry, opts.base_url)


def run(sock: socket.socket, modules: tuple[str, ...] = PRELOAD, later: tuple[str, ...] = LATER,
        entry_spec: str = ENTRY, base_url: str | None = _UNKNOWN) -> int:
    """The zygote's life on the socket `sock`: import `modules`, say ready, fork on request
    until the socket closes. Started as `python -m` (main) or forked by the batch's process as
    it starts (zygote_client.fork_zygote)."""
    from agentica_cli.app.process_hardening import harden_process

    harden_process()  # as `agentica -p` does: its environment (the batch's) unreadable by others
    from agentica_cli.app import dataclass_code_cache, startup_gc

    startup_gc.hold()  # few garbage collections while importing, as in `agentica -p`
    dataclass_code_cache.hold()  # and dataclasses' methods compiled at an earlier start
    preload(modules, base_url)
    entry = resolve_entry(entry_spec)
    dataclass_code_cache.release()  # the children define theirs as anywhere else
    startup_gc.release()  # freeze_heap()'s gc.freeze, and the usual thresholds: the children start with them
    try:
        serve(sock, entry, tuple(filter(None, later)))
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    exit_now(main())  # the batch waits for this end: no interpreter teardown (~10 ms)
