"""The REPL with MCP servers, through a pseudo-terminal: spawning it and waiting, by asking
`/mcp`, until a server is ready (a stdio server may still be idle or starting at first)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import model_args
from screen_support import spawn_agentica


def spawn_repl(home: Path, project: Path, server: Any, *flags: str, timeout: float = 20) -> pexpect.spawn:
    """`agentica --trust FLAGS` in `project`, on a 40x160 terminal."""
    return spawn_agentica(home, project, [*model_args(server), "--trust", *flags], columns=160, timeout=timeout)


def wait_until_server_ready(child: pexpect.spawn, name: str, tries: int) -> None:
    """Ask `/mcp` until server `name` says ready; returns right after that line, so the caller
    reads the rest of the listing and the prompt."""
    for _ in range(tries):
        child.send("/mcp\r")
        if child.expect([rf"{name}\s+ready\s+stdio", rf"{name}\s+(?:idle|starting)\s+stdio"]) == 0:
            return
        child.expect("❯")
        time.sleep(0.25)
    pytest.fail(f"the {name} server never became ready")
