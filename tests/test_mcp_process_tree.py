"""No process of a stdio MCP server outlives agentica, however agentica dies: a server
started through `sh -c`, with a hung grandchild that ignores SIGTERM and left the process
group, all gone after a SIGKILL of the agent process (the process table is checked)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from mcp_servers.support import DEMO_SERVER, PYTHON

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the guardian (subreaper, parent-death) is Linux")

ROOT = str(Path(__file__).resolve().parents[1])

# The hung grandchild: leaves the process group (setsid), ignores SIGTERM, sleeps forever.
HUNG = "import os, signal, time; os.setsid(); signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"


def tagged_processes(tag: str) -> list[int]:
    """Every process whose environment carries AGENTICA_TEST_TAG=tag (zombies excluded)."""
    needle = f"AGENTICA_TEST_TAG={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            if stat[stat.rindex(b")") + 2 :].split()[0] != b"Z":
                found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def wait_for(predicate, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_sigkill_of_the_agent_leaves_no_process_of_a_wrapped_server(tmp_path: Path) -> None:
    busy = True  # the server's own event loop is blocked too: it never sees its stdin close
    tag = uuid.uuid4().hex
    wrapped = f"{shlex.quote(PYTHON)} -c {shlex.quote(HUNG)} & {shlex.quote(PYTHON)} {shlex.quote(str(DEMO_SERVER))}"
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {ROOT!r})
        from agentica_cli.tools.mcp import McpTool

        async def main():
            tool = McpTool("sh", args=["-c", {wrapped!r}], env={{"AGENTICA_TEST_TAG": {tag!r}}},
                           name="wrapped", log_file={str(tmp_path / "w.log")!r})
            await tool.connect()
            server = await tool.call_tool("pid")
            if {busy!r}:  # a server whose event loop is blocked never sees its stdin close
                asyncio.ensure_future(tool.call_tool("freeze"))
                await asyncio.sleep(0.3)
            print(server, flush=True)
            await asyncio.sleep(120)

        asyncio.run(main())
        """
    )
    agent = subprocess.Popen([PYTHON, "-c", script], stdout=subprocess.PIPE, text=True)
    assert agent.stdout is not None
    try:
        server = int(agent.stdout.readline())
        # guardian, sh, the server and the hung grandchild
        assert wait_for(lambda: len(tagged_processes(tag)) == 4, 10), tagged_processes(tag)
        assert server in tagged_processes(tag)
        agent.kill()
        agent.wait()
        assert wait_for(lambda: not tagged_processes(tag), 8), f"left running: {tagged_processes(tag)}"
    finally:
        for pid in tagged_processes(tag):  # never leave a hung process behind a failed test
            os.kill(pid, 9)
        if agent.poll() is None:
            agent.kill()
