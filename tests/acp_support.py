"""An editor for the ACP tests: the SDK's client side, with buffers, terminals and answers.

`EditorClient` implements the ACP client methods the way an editor does: it records every
session update, answers permission requests from a queue of choices, serves fs reads from its
open buffers (unsaved content wins over the disk) and keeps fs writes in them, and runs
terminal commands as real processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from acp import RequestError, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from cli_support import AGENTICA, cli_env, scripted_key_file


class Terminal:
    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self.output = bytearray()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output += chunk


class EditorClient:
    def __init__(self, *, fs: bool = True, terminal: bool = True, save_writes: bool = False):
        self.fs = fs
        self.save_writes = save_writes  # also save each fs write to the disk, by name, as an editor saving its buffer
        self.terminal = terminal
        self.updates: list[tuple[float, str, Any]] = []  # (perf_counter, session id, update)
        self.changed = asyncio.Event()
        self.answers: list[str] = []  # option ids to pick, in order ("cancel": the cancelled outcome)
        self.permission_requests: list[Any] = []
        self.buffers: dict[str, str] = {}  # path -> the editor's (unsaved) text
        self.fs_reads: list[str] = []
        self.fs_writes: list[tuple[str, str]] = []
        self.terminals: dict[str, Terminal] = {}
        self.terminal_commands: list[tuple[str, list[str], str | None]] = []
        self.on_permission: Any = None  # async hook run when a permission request arrives

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs), terminal=self.terminal,
        )

    # -- what the agent calls -------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((time.perf_counter(), session_id, update))
        self.changed.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        self.changed.set()
        if self.on_permission is not None:
            await self.on_permission(tool_call)
        answer = self.answers.pop(0) if self.answers else "no"
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.fs_reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.fs_writes.append((path, content))
        self.buffers[path] = content  # lands in the editor's buffer (unsaved), not on disk
        if self.save_writes:  # ... and saved: opened by name, symlinks followed, as editors do
            Path(path).write_text(content)
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: Any = None, cwd: str | None = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        self.terminal_commands.append((command, list(args or []), cwd))
        proc = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = Terminal(proc)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        term = self.terminals[terminal_id]
        code = await term.proc.wait()
        await term.reader
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                           signal=None if code >= 0 else f"SIG{-code}")

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        term = self.terminals[terminal_id]
        code = term.proc.returncode
        status = TerminalExitStatus(exit_code=code) if code is not None and code >= 0 else None
        return TerminalOutputResponse(output=term.output.decode(errors="replace"), truncated=False,
                                      exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        with contextlib.suppress(ProcessLookupError):
            self.terminals[terminal_id].proc.kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        term = self.terminals[terminal_id]
        if term.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                term.proc.kill()
        return ReleaseTerminalResponse()

    # -- for the tests --------------------------------------------------------------------

    def of_kind(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for _, sid, u in self.updates
                if u.session_update == kind and (session_id is None or sid == session_id)]

    async def wait_for(self, predicate: Any, timeout: float = 30) -> None:
        async def poll() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(poll(), timeout)


PATIENT_TRANSPORT = {"stderr": None, "shutdown_timeout": 30.0}


def agent_env(home: Path) -> dict[str, str]:
    return cli_env(home)


@contextlib.asynccontextmanager
async def editor_session(client: EditorClient, server: Any, project: Path, home: Path,
                         *extra: str) -> AsyncIterator[Any]:
    """`agentica acp` spawned as an editor does, against the scripted model server."""
    args = [*AGENTICA[1:], "acp", "--base-url", server.base_url, "--api-key-file", scripted_key_file(),
            "--model", "scripted-model", *extra]
    # The library waits 2 s for the agent to exit after stdin closes, then sends SIGTERM, and
    # its terminate() raises if the process ended in between: beside busy CPUs that race is
    # lost, so the agent is given time to end on its own.
    async with spawn_agent_process(client, AGENTICA[0], *args, env=agent_env(home), cwd=str(project),
                                   transport_kwargs=PATIENT_TRANSPORT) as (conn, _proc):
        await conn.initialize(protocol_version=1, client_capabilities=client.capabilities())
        yield conn


def message_text(client: EditorClient, session_id: str | None = None) -> str:
    return "".join(u.content.text for u in client.of_kind("agent_message_chunk", session_id)
                   if getattr(u.content, "type", "") == "text")
