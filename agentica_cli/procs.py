"""Whether a process is still running, for any layer (sessions' lock holders, MCP servers):
no UI, no imports beyond the standard library."""

from __future__ import annotations

import os


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a process we may not signal counts as
    running: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"
    except (OSError, ValueError, IndexError):  # no /proc (macOS): kill() said it exists
        return True
