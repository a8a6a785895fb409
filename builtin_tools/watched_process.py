"""A child process for agentica's own use (the REPL's `!cmd`, lifecycle and config hooks, the
status line command) that dies with agentica, however agentica dies: an asyncio.subprocess.Process
look-alike started under process_group's watcher.

asyncio.create_subprocess_* makes the output pipes itself and awaits between the start and the
return, so the watcher could neither find the command by its pipes nor learn its group in time.
Here the pipes are ours (their inode numbers go to the watcher before the command starts) and the
command is a subprocess.Popen started by process_group.start_watched, which hands the watcher its
pgid with no await in between. The watcher is told the command ended once `wait()` saw it end;
the caller's timeout and output handling stay what they were with asyncio's Process.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from typing import BinaryIO, Literal

from agentica_cli.tools.local.process_group import _StartedProcess, kill_group, start_watched, unwatch_group

StdinMode = Literal["pipe", "devnull"]
StderrMode = Literal["pipe", "stdout", "devnull"]


class WatchedProcess:
    """The parts of asyncio.subprocess.Process that agentica's callers use: pid, returncode,
    stdin (StreamWriter), stdout/stderr (StreamReader), wait(), communicate(); and
    kill_group(), where asyncio's kill() would reach the command alone."""

    def __init__(self, popen: subprocess.Popen[bytes], watcher: subprocess.Popen[bytes] | None):
        self._process = _StartedProcess(popen)
        self._watcher = watcher
        self.pid = popen.pid
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def kill_group(self) -> None:
        """SIGKILL the command and whatever it started in its group (its own session)."""
        kill_group(self.pid)

    async def wait(self) -> int:
        """The exit code; once the command has ended, its watcher is told so and exits."""
        code = await self._process.wait()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            await asyncio.shield(unwatch_group(watcher))  # a cancellation must not leave it unreaped
        return code

    async def _feed(self, data: bytes | None) -> None:
        assert self.stdin is not None
        try:
            if data:
                self.stdin.write(data)
                await self.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):  # the command did not read it all: as asyncio
            pass
        finally:
            self.stdin.close()

    async def communicate(self, input: bytes | None = None) -> tuple[bytes | None, bytes | None]:
        """As asyncio's: feed `input`, read stdout and stderr to their end, wait for the exit."""
        async def drained(reader: asyncio.StreamReader | None) -> bytes | None:
            return None if reader is None else await reader.read()

        feeding = self._feed(input) if self.stdin is not None else asyncio.sleep(0)
        _, out, err = await asyncio.gather(feeding, drained(self.stdout), drained(self.stderr))
        await self.wait()
        return out, err


async def start_watched_process(argv: list[str], *, cwd: str | os.PathLike[str], env: dict[str, str],
                                stdin: StdinMode = "pipe", stderr: StderrMode = "pipe") -> WatchedProcess:
    """Start `argv` in a session (and so a process group) of its own, with its stdout (and stderr,
    unless merged into stdout or discarded) on pipes read through asyncio, under a watcher that
    kills the group if this process dies first. Raises OSError as Popen does (nothing left behind)."""
    loop = asyncio.get_running_loop()
    ours: list[int] = []  # read ends (stdout, stderr) and stdin's write end: kept
    theirs: list[int] = []  # the child's ends: closed here once it has them
    try:
        out_r, out_w = os.pipe()
        ours.append(out_r)
        theirs.append(out_w)
        err_r = err_w = None
        if stderr == "pipe":
            err_r, err_w = os.pipe()
            ours.append(err_r)
            theirs.append(err_w)
        in_r = in_w = None
        if stdin == "pipe":
            in_r, in_w = os.pipe()
            ours.append(in_w)
            theirs.append(in_r)
        inodes = [os.fstat(fd).st_ino for fd in (out_r, err_r) if fd is not None]
        stderr_target = {"pipe": err_w, "stdout": subprocess.STDOUT, "devnull": subprocess.DEVNULL}[stderr]

        def popen() -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL if in_r is None else in_r,
                                    stdout=out_w, stderr=stderr_target, start_new_session=True)

        command, watcher = start_watched(popen, inodes)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    process = WatchedProcess(command, watcher)
    files = {fd: os.fdopen(fd, "wb" if fd == in_w else "rb", buffering=0) for fd in ours}
    try:
        process.stdout = await _reader(loop, files.pop(out_r))
        if err_r is not None:
            process.stderr = await _reader(loop, files.pop(err_r))
        if in_w is not None:
            transport, protocol = await loop.connect_write_pipe(
                lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), files.pop(in_w))
            process.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
    except BaseException:  # cancelled while connecting the pipes: the command must not run on
        for file in files.values():
            file.close()
        kill_group(command.pid)
        await asyncio.shield(process.wait())
        raise
    return process


async def _reader(loop: asyncio.AbstractEventLoop, pipe: BinaryIO) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return reader
