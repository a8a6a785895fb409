"""File content and commands through the editor, when it offers them.

`ClientFileAccess` is the file tools' FileAccess (builtin_tools/file_access.py): read_file
sees the editor's buffer (unsaved changes included) and edits land in the editor. The file
tools are sync and run in worker threads, so each call is handed to the event loop that owns
the connection and waited for.

The editor opens the path we give it by name, following symlinks. A path checked inside the
project can be redirected between our check and the editor's open by a process that swaps
a folder on the way with a symlink leading out (renameat2 RENAME_EXCHANGE): the editor would
read ~/.ssh/id_rsa for the model, or write outside. Nothing we check before handing over a
name closes that window, so the editor is used only while no such process can exist: until
the session runs its first tool that can start processes (anything but the file tools, grep
and todos; `task` itself neither, its sub-agent's calls are watched the same way: see
`CommandWatch`). From then on, for the rest of the session, file content is
read and written on the disk by us, through descriptors opened beneath the project's roots
without following any symlink (agentica_cli.tools.local.safe_open); the editor reloads a changed file
from the disk as it does for any outside change. docs/editor.md says what that costs.

`ClientTerminalRunner` is execute's runner: the command (already wrapped by the sandbox, with
the environment execute computed, secrets scrubbed) runs in a terminal the editor creates and
shows inside the tool call.
"""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import stat
from pathlib import Path
from typing import Any

CLIENT_CALL_TIMEOUT = 60.0  # seconds for one fs call (the editor may be loading a large file)
TERMINAL_OUTPUT_LIMIT = 1_000_000  # bytes the editor keeps of a command's output


class ClientFileAccess:
    def __init__(self, conn: Any, session_id: str, loop: asyncio.AbstractEventLoop, journal: Any = None,
                 sandbox: Any = None):
        self.conn = conn
        self.session_id = session_id
        self.loop = loop
        self.journal = journal  # acp/checkpoints.EditJournal: each turn's writes, for /undo
        self.sandbox = sandbox  # the file tools' PathSandbox: the disk I/O opens beneath its roots
        # Whether the editor may still open paths by name: True until a tool that can start a
        # process runs in this session (CommandWatch), then False for good (see the module doc).
        self.through_editor = True

    def stop_using_the_editor(self) -> None:
        self.through_editor = False

    def _call(self, coro: Any) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:  # it would wait for itself
            coro.close()
            raise RuntimeError("ClientFileAccess is called from tool worker threads, not the event loop")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(CLIENT_CALL_TIMEOUT)

    def _on_disk(self) -> bool:
        if self.through_editor:
            return False
        if self.sandbox is None:  # no roots to open beneath: refuse rather than open by name
            raise PermissionError("file access through the editor is off for this session and no path sandbox "
                                  "is known to read the disk safely")
        return True

    def read_text(self, path: Path) -> str:
        from acp import RequestError

        if self._on_disk():
            return _read_beneath(self.sandbox, path)
        try:
            return self._call(self.conn.read_text_file(session_id=self.session_id, path=str(path))).content
        except RequestError as err:
            # Editors answer an error for a file that does not exist; a real failure on a
            # file that does is the model's to hear about.
            if not os.path.lexists(path):
                raise FileNotFoundError(str(path)) from None
            raise OSError(f"the editor could not read {path}: {err}") from None

    def write_text(self, path: Path, text: str) -> None:
        from acp import RequestError

        before: str | None = None
        if self.journal is not None and self.journal.needs_before(str(path)):
            try:
                before = self.read_text(path)  # what /undo puts back
            except FileNotFoundError:
                before = None
        if self._on_disk():
            _write_beneath(self.sandbox, path, text)
        else:
            try:
                self._call(self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text))
            except RequestError as err:
                raise OSError(f"the editor could not write {path}: {err}") from None
        if self.journal is not None:
            self.journal.wrote(str(path), before, text)

    def remove(self, path: Path) -> None:
        """Delete a file (for /undo of a turn that created it): the entry itself, never
        through a symlink on the way; a missing file is fine."""
        if self.sandbox is None:
            raise PermissionError("no path sandbox is known to remove files safely")
        try:
            dir_fd = self.sandbox.open_parent(path)
        except (FileNotFoundError, NotADirectoryError):
            return
        try:
            info = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(f"{path} is a folder now; not removed")
            os.unlink(path.name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        finally:
            os.close(dir_fd)


def _read_beneath(sandbox: Any, path: Path) -> str:
    """The text of `path` read through a descriptor opened beneath the sandbox's roots."""
    from agentica_cli.tools.local.safe_open import changed_error

    real = sandbox.resolve(path)  # inside the roots now, or PathOutsideRootsError
    try:
        dir_fd = sandbox.open_parent(real)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(str(path)) from None
    try:
        fd = os.open(real.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP:  # the file itself is a symlink now
            raise changed_error(str(path)) from None
        raise
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise PermissionError(f"{path} is not a regular file; not read")
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise OSError(f"{path} is not UTF-8 text") from None


def _write_beneath(sandbox: Any, path: Path, text: str) -> None:
    """Replace (or create) `path` atomically through a descriptor opened beneath the roots."""
    from agentica_cli.tools.local.safe_open import changed_error, lstat_at
    from builtin_tools.atomic_write import atomic_write_at

    real = sandbox.resolve(path)
    dir_fd = sandbox.open_parent(real, create=True)
    try:
        existing = lstat_at(dir_fd, real.name)
        if existing is not None and stat.S_ISLNK(existing.st_mode):
            raise changed_error(str(path))
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise PermissionError(f"{path} is not a regular file; refusing to write it")
        atomic_write_at(dir_fd, real.name, text.encode("utf-8"), existing)
    finally:
        os.close(dir_fd)


class CommandWatch:
    """A before_tool_call hook: the first tool that can start a process (execute, task, an MCP
    or toolkit tool: anything but `safe_names`) turns editor file access off for the session."""

    def __init__(self, access: ClientFileAccess, safe_names: set[str]):
        self.access = access
        self.safe_names = safe_names

    def before_tool_call(self, call: Any) -> None:
        if getattr(call, "name", "") not in self.safe_names:
            self.access.stop_using_the_editor()


class ClientTerminalRunner:
    """Runs execute's foreground commands in editor terminals, one per call."""

    def __init__(self, conn: Any, session_id: str, on_terminal: Any):
        self.conn = conn
        self.session_id = session_id
        self.on_terminal = on_terminal  # (call_id, terminal_id) -> awaitable: shows it in the tool call

    async def run(self, argv: list[str], *, cwd: str, env: dict[str, str], timeout: float, ctx: Any = None) -> Any:
        from agentica_cli.tools.local.output_capture import OutputCapture
        from agentica_cli.tools.local.process_group import CommandOutcome

        # `env -i`: exactly execute's environment, not the editor's (which may hold keys).
        args = ["-i", *(f"{k}={v}" for k, v in env.items() if "=" not in k), *argv]
        created = await self.conn.create_terminal(session_id=self.session_id, command="env", args=args, cwd=cwd,
                                                  output_byte_limit=TERMINAL_OUTPUT_LIMIT)
        terminal_id = created.terminal_id
        timed_out = False
        try:
            call_id = getattr(ctx, "call_id", "")
            if call_id:
                await self.on_terminal(call_id, terminal_id)
            try:
                exit_status = await asyncio.wait_for(
                    self.conn.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id), timeout)
            except asyncio.TimeoutError:
                timed_out = True
                await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
                exit_status = None
            output = await self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal_id)
        except asyncio.CancelledError:
            await asyncio.shield(self._kill(terminal_id))
            raise
        finally:
            await asyncio.shield(self._release(terminal_id))
        status = exit_status or output.exit_status
        capture = OutputCapture()
        capture.feed(output.output.encode("utf-8", errors="replace"))
        if output.truncated:
            capture.feed(b"\n[the editor kept only the last part of the output]\n")
        return CommandOutcome(_returncode(status), capture, OutputCapture(), timed_out=timed_out)

    async def _kill(self, terminal_id: str) -> None:
        try:
            await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
        except Exception:
            pass

    async def _release(self, terminal_id: str) -> None:
        try:
            await self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        except Exception:
            pass  # the editor went away: nothing to release


def _returncode(status: Any) -> int | None:
    if status is None:
        return None
    if status.exit_code is not None:
        return status.exit_code
    name = str(status.signal or "")
    try:
        return -int(getattr(signal, name if name.startswith("SIG") else f"SIG{name}"))
    except (AttributeError, TypeError, ValueError):
        return -1 if name else None
