"""builtin_tools/watched_process.py: the asyncio Process look-alike agentica's own children run
as (`!cmd`, hooks, the status line command); that they die with agentica is in
tests/test_security_process.py."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from builtin_tools.watched_process import start_watched_process


def _run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_communicate_feeds_more_than_a_pipe_holds_and_keeps_the_streams_apart(tmp_path: Path) -> None:
    data = b"x" * 1_000_003  # far beyond a pipe's buffer: written while stdout is read

    async def main() -> tuple[bytes | None, bytes | None, int | None]:
        proc = await start_watched_process(["/bin/sh", "-c", "cat; echo oops >&2; exit 3"],
                                           cwd=tmp_path, env=dict(os.environ))
        out, err = await proc.communicate(data)
        return out, err, proc.returncode

    assert _run(main()) == (data, b"oops\n", 3)


def test_a_command_that_reads_no_stdin_and_merged_or_discarded_stderr(tmp_path: Path) -> None:
    async def main() -> list[tuple[bytes | None, bytes | None, int | None]]:
        results = []
        for stderr in ("stdout", "devnull"):
            proc = await start_watched_process(["/bin/sh", "-c", "echo out; echo err >&2"], cwd=tmp_path,
                                               env=dict(os.environ), stderr=stderr)  # type: ignore[arg-type]
            out, err = await proc.communicate(b"y" * 1_000_000)  # never read: no BrokenPipeError
            results.append((out, err, proc.returncode))
        return results

    assert _run(main()) == [(b"out\nerr\n", None, 0), (b"out\n", None, 0)]


def test_the_environment_cwd_and_group_are_the_commands_own(tmp_path: Path) -> None:
    async def main() -> tuple[bytes | None, int]:
        proc = await start_watched_process(["/bin/sh", "-c", 'echo "$MARK $(pwd) $$"; ps -o pgid= -p $$'],
                                           cwd=tmp_path, env={"PATH": os.environ["PATH"], "MARK": "m"},
                                           stdin="devnull")
        out, _ = await proc.communicate()
        return out, proc.pid

    out, pid = _run(main())
    assert out is not None
    first, pgid = out.decode().splitlines()
    assert first == f"m {tmp_path} {pid}"
    assert int(pgid) == pid  # a session, so a group, of its own


def test_a_command_that_cannot_start_raises_and_leaves_no_watcher(tmp_path: Path) -> None:
    async def main() -> None:
        await start_watched_process(["/nonexistent/program"], cwd=tmp_path, env={})

    try:
        _run(main())
    except FileNotFoundError:
        pass
    else:
        raise AssertionError("no error")
    assert not [p for p in Path("/proc").glob("[0-9]*") if _is_our_watcher(p)]


def _is_our_watcher(proc: Path) -> bool:
    from builtin_tools.process_group import WATCHER_NAME

    try:
        return (WATCHER_NAME.encode() in (proc / "cmdline").read_bytes()
                and int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid())
    except (OSError, ValueError, IndexError):
        return False
