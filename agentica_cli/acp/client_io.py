"""File content and commands through the editor, when it offers them.

`ClientFileAccess` is the file tools' FileAccess (builtin_tools/file_access.py): read_file
sees the editor's buffer (unsaved changes included) and edits land in the editor. The file
tools are sync and run in worker threads, so each call is handed to the event loop that owns
the connection and waited for.

`ClientTerminalRunner` is execute's runner: the command (already wrapped by the sandbox, with
the environment execute computed, secrets scrubbed) runs in a terminal the editor creates and
shows inside the tool call.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

CLIENT_CALL_TIMEOUT = 60.0  # seconds for one fs call (the editor may be loading a large file)
TERMINAL_OUTPUT_LIMIT = 1_000_000  # bytes the editor keeps of a command's output


class ClientFileAccess:
    def __init__(self, conn: Any, session_id: str, loop: asyncio.AbstractEventLoop, journal: Any = None):
        self.conn = conn
        self.session_id = session_id
        self.loop = loop
        self.journal = journal  # acp/checkpoints.EditJournal: each turn's writes, for /undo

    def _call(self, coro: Any) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:  # it would wait for itself
            coro.close()
            raise RuntimeError("ClientFileAccess is called from tool worker threads, not the event loop")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(CLIENT_CALL_TIMEOUT)

    def read_text(self, path: Path) -> str:
        from acp import RequestError

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
        try:
            self._call(self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text))
        except RequestError as err:
            raise OSError(f"the editor could not write {path}: {err}") from None
        if self.journal is not None:
            self.journal.wrote(str(path), before, text)


class ClientTerminalRunner:
    """Runs execute's foreground commands in editor terminals, one per call."""

    def __init__(self, conn: Any, session_id: str, on_terminal: Any):
        self.conn = conn
        self.session_id = session_id
        self.on_terminal = on_terminal  # (call_id, terminal_id) -> awaitable: shows it in the tool call

    async def run(self, argv: list[str], *, cwd: str, env: dict[str, str], timeout: float, ctx: Any = None) -> Any:
        from builtin_tools.output_capture import OutputCapture
        from builtin_tools.process_group import CommandOutcome

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
