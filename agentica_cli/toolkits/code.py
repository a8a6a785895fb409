"""CodeTool: run Python code in a fresh interpreter and report what it did.

Each call is a new `python -I` process (isolated: no user site-packages, no PYTHON*
variables, the script's folder not on sys.path) in a scratch folder, in its own process
group, with a time limit (the whole group is killed), an address-space limit (RLIMIT_AS, so
a memory hog gets MemoryError instead of the machine's memory) and, where the OS sandbox
exists (bubblewrap, Landlock ABI 4+, Seatbelt), no network and writes only in the scratch
folder. The result: the value of the last expression (as in a notebook), stdout, stderr and
the files the code wrote or changed in the scratch folder.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext

# Runs inside the child: limit memory, run all but the last statement, then evaluate the
# last one if it is an expression and write its repr where the parent reads it.
_RUNNER = r"""
import ast, sys  # noqa
code_path, value_path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
if limit > 0:
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
with open(code_path, encoding="utf-8") as f:
    source = f.read()
import linecache
linecache.cache["<code>"] = (len(source), None, source.splitlines(True), "<code>")  # tracebacks show the lines
def main():
    tree = ast.parse(source, "<code>")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    scope = {"__name__": "__main__", "__builtins__": __builtins__}
    sys.argv = ["<code>"]
    exec(compile(tree, "<code>", "exec"), scope)
    if last is not None:
        value = eval(compile(last, "<code>", "eval"), scope)
        if value is not None:
            with open(value_path, "w", encoding="utf-8") as f:
                f.write(repr(value)[:20000])
try:
    main()
except SystemExit:
    raise
except BaseException as exc:  # printed by traceback (it reads linecache), without this runner's frame
    import traceback
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    traceback.print_exception(type(exc), exc, tb)
    sys.exit(1)
"""
_PRIVATE = ".agentica-code"  # our files in the scratch folder, not reported as written
MAX_VALUE_CHARS = 5_000


class CodeTool(Tool):
    """`run_python(code)`: Python in a fresh subprocess.

    timeout: seconds before the process group is killed. memory_mb: the address-space limit
    (0: none). work_dir: the scratch folder (default: a new temporary folder, removed with the
    tool). sandbox: "auto" (the OS sandbox when this machine has one: no network, writes
    only in the scratch folder), None (no sandbox), or an agentica_cli.sandbox.Sandbox.
    network: let the code open connections (with sandbox="auto").
    """

    def __init__(self, timeout: int = 30, memory_mb: int = 512, work_dir: str | os.PathLike[str] | None = None,
                 *, sandbox: Any = "auto", network: bool = False, max_output_chars: int = 20_000):
        super().__init__(name="code")
        if timeout < 1:
            raise ValueError(f"timeout must be at least 1 second, got {timeout}")
        self.timeout = timeout
        self.memory_mb = memory_mb
        if work_dir is None:
            folder = tempfile.mkdtemp(prefix="agentica-code-")
            weakref.finalize(self, _remove_tree, folder)
            work_dir = folder
        self.work_dir = Path(os.path.realpath(os.path.expanduser(os.fspath(work_dir))))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.network = network
        self.max_output_chars = max_output_chars
        self._sandbox_arg = sandbox
        self._sandbox: Any = None
        self.register(self.run_python, is_destructive=True)

    @property
    def sandbox(self) -> Any:
        """The Sandbox the code runs in (None: none), built on first use for "auto"."""
        if self._sandbox is None and self._sandbox_arg == "auto":
            from agentica_cli.sandbox import Sandbox, SandboxPolicy

            self._sandbox = Sandbox(SandboxPolicy.build("workspace-write", self.work_dir, network=self.network))
        elif self._sandbox is None and self._sandbox_arg not in (None, "auto"):
            self._sandbox = self._sandbox_arg
        return self._sandbox

    @property
    def confined(self) -> bool:
        return self.sandbox is not None and self.sandbox.confines

    def get_system_prompt(self) -> str:
        limits = [f"{self.timeout} s"] + ([f"{self.memory_mb} MB of memory"] if self.memory_mb else [])
        net = " and no network" if self.confined and self.sandbox.network_confined else ""
        return (f"run_python runs Python code in a fresh process (nothing persists between calls but files) in the "
                f"scratch folder {self.work_dir}, with {' and '.join(limits)}{net}. The value of the last "
                "expression is returned, like in a notebook; print what else you need.")

    async def run_python(self, code: str, ctx: ToolContext = None) -> str:  # type: ignore[assignment]
        """Run Python in a fresh interpreter: returns the last expression's value, stdout, stderr, files written.

        Args:
            code: Python source. End with an expression to get its value back.
        """
        from agentica_cli.tools.local.execute import scrubbed_environment
        from agentica_cli.tools.local.process_group import run_in_group

        if not code.strip():
            raise ValueError("code is empty.")
        private_fd = self._open_private()
        private = self.work_dir / _PRIVATE
        stamp = f"{os.getpid()}-{time.monotonic_ns()}"
        code_name, value_name = f"code-{stamp}.py", f"value-{stamp}.txt"
        try:
            _write_new(private_fd, code_name, code.encode("utf-8"))
            before = _listing(self.work_dir)
            argv = [sys.executable, "-I", "-c", _RUNNER, str(private / code_name), str(private / value_name),
                    str(self.memory_mb * 1024 * 1024)]
            env = scrubbed_environment(os.environ)
            env.pop("PYTHONPATH", None)
            env["PYTHONIOENCODING"] = "utf-8"
            sandbox = self.sandbox
            if sandbox is not None and sandbox.confines:
                argv, env = sandbox.wrap(argv, self.work_dir), sandbox.environment(env)
            started = time.monotonic()
            outcome = await run_in_group(argv, cwd=str(self.work_dir), env=env, timeout=self.timeout)
            value = _read_ours(private_fd, value_name)
        finally:
            for name in (code_name, value_name):
                try:
                    os.unlink(name, dir_fd=private_fd)
                except OSError:
                    pass
            os.close(private_fd)
        return self._report(outcome, value, _changed(before, _listing(self.work_dir)), time.monotonic() - started)

    def _open_private(self) -> int:
        """A descriptor of our folder in the scratch folder, never through a symlink.

        The code runs with write access to the scratch folder, so an earlier call may have
        replaced `.agentica-code` with a symlink (or a file): writing our script or reading
        the value back by name would then reach wherever it points. What is there and is not
        a real folder is removed (it is ours) and the folder made again; everything after
        goes through this descriptor, with O_NOFOLLOW.
        """
        from agentica_cli.tools.local.safe_open import PathChangedError, lstat_at, open_dir_beneath, open_root

        root_fd = open_root(self.work_dir)
        try:
            for _ in range(3):
                info = lstat_at(root_fd, _PRIVATE)
                if info is not None and not stat.S_ISDIR(info.st_mode):
                    os.unlink(_PRIVATE, dir_fd=root_fd)  # unlinks the symlink itself, not its target
                try:
                    return open_dir_beneath(root_fd, [_PRIVATE], _PRIVATE, create=True)
                except (PathChangedError, NotADirectoryError, FileExistsError):
                    continue  # swapped again meanwhile
            raise PermissionError(f"{self.work_dir / _PRIVATE} keeps being replaced by a symlink or a file; "
                                  "the code was not run.")
        finally:
            os.close(root_fd)

    def _report(self, outcome: Any, value: str | None, written: list[str], elapsed: float) -> str:
        code = outcome.returncode if outcome.returncode is not None else -1
        err_text = outcome.stderr.render(self.max_output_chars // 2).rstrip("\n") if outcome.stderr.total_bytes else ""
        if outcome.timed_out:
            status = f"killed: timed out after {self.timeout} s"
        elif code < 0:
            status = f"killed by signal {-code}"
        else:
            status = f"exit code {code}"
        if "MemoryError" in err_text and self.memory_mb:
            status += f"; the memory limit ({self.memory_mb} MB) was reached"
        parts = [f"[{status}; {elapsed:.1f} s]"]
        if value is not None:
            shown = value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "... [cut]"
            parts += ["--- value ---", shown]
        if outcome.stdout.total_bytes:
            parts += ["--- stdout ---", outcome.stdout.render(self.max_output_chars // 2).rstrip("\n")]
        if err_text:
            parts += ["--- stderr ---", err_text]
        if written:
            parts += ["--- files written ---", *written]
        if len(parts) == 1:
            parts.append("(no value, no output)")
        return "\n".join(parts)


def _write_new(dir_fd: int, name: str, data: bytes) -> None:
    """Create `name` in the folder `dir_fd` (it must not exist: no symlink is followed)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _read_ours(dir_fd: int, name: str) -> str | None:
    """The text the runner wrote to `name`, None when it wrote none; a symlink or anything
    but a regular file there is not read (the code may have put it there)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read(80_000).decode("utf-8", "replace")  # the runner writes at most 20,000 characters


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    """Files under `root` (our private folder left out) -> (size, mtime_ns)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != _PRIVATE]
        for name in files:
            path = os.path.join(folder, name)
            try:
                info = os.stat(path, follow_symlinks=False)  # a symlink's target is not the scratch folder's
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (info.st_size, info.st_mtime_ns)
    return found


def _changed(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return [f"{name} ({size} bytes)" for name, (size, mtime) in sorted(after.items())
            if before.get(name) != (size, mtime)]


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
