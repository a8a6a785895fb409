"""The stdio MCP server as an operating-system process: its environment, its stderr log,
finding its pid, and killing it (also when Python exits without closing it).

The SDK's `stdio_client` spawns the server in a new session (its own process group) but
does not expose the process. We tag each server's environment with a unique marker and
find the child carrying it under /proc (Linux); elsewhere the pid stays unknown and only
the SDK's own shutdown (close stdin, SIGTERM, SIGKILL) applies.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentica_cli.procs import is_running

MARKER_VAR = "AGENTICA_MCP_SERVER_ID"

# What a stdio server inherits from us: enough to find programs, write temp files and
# decode text, and nothing that carries credentials (no *_API_KEY, no tokens).
INHERITED_ENV_VARS = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    # Windows needs these to start most programs at all.
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "COMSPEC",
    "PATHEXT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "TEMP",
    "TMP",
)


def minimal_environment(extra: Mapping[str, str] | None = None, marker: str | None = None) -> dict[str, str]:
    """The environment a stdio server starts with: a few safe variables of ours plus `extra`."""
    env = {k: v for k in INHERITED_ENV_VARS if (v := os.environ.get(k)) is not None and not v.startswith("()")}
    env.update(extra or {})
    if marker:
        env[MARKER_VAR] = marker
    return env


# Linux: the server runs under a guardian process (guardian.py) that stops its whole tree
# when we die, however we die, also when it was started through `sh -c`, npx or uvx.
GUARDIAN = Path(__file__).with_name("guardian.py")


def server_command(
    command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None
) -> tuple[str, list[str]]:
    """The program and arguments to start a stdio server with: on Linux, under the guardian
    so that the server and all it starts die with us; elsewhere, or when the program cannot
    be found (the spawn then fails with the usual clear error), unchanged."""
    if not sys.platform.startswith("linux") or not sys.executable:
        return command, list(args)
    program = command  # a path is exec'd after the spawn's chdir, as it would be unwrapped
    if os.sep in command:
        where = os.path.join(cwd or os.getcwd(), command)
        if not (os.path.isfile(where) and os.access(where, os.X_OK)):
            return command, list(args)
    else:
        found = shutil.which(command, path=env.get("PATH", os.defpath))
        if found is None:
            return command, list(args)
        program = found
    return sys.executable, ["-I", "-S", str(GUARDIAN), str(os.getpid()), program, *args]


def default_log_dir() -> Path:
    """~/.agentica/logs/mcp, or under $AGENTICA_HOME (the CLI's home-folder override)."""
    home = os.environ.get("AGENTICA_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".agentica"
    return base / "logs" / "mcp"


def read_log_tail(path: Path, offset: int, max_lines: int = 6, max_chars: int = 800) -> str:
    """The last lines the server wrote to its log since `offset` (for error messages)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return ""
    lines = [line.rstrip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
    text = "\n".join(lines[-max_lines:])
    return text[-max_chars:]


def find_child_pid(marker: str, parent: int | None = None) -> int | None:
    """The pid of a child process of ours (or of `parent`) whose environment carries `marker`,
    if /proc can tell."""
    me = str(parent if parent is not None else os.getpid())
    needle = f"{MARKER_VAR}={marker}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            # The command name may contain spaces and parentheses; fields follow the last ')'.
            fields = stat[stat.rindex(b")") + 2 :].split()
            if fields[1].decode() != me:
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    return int(entry)
        except (OSError, ValueError, IndexError):
            continue
    return None


# Windows has neither SIGKILL nor process groups; there the pid is never known anyway.
HARD_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def kill_process_group(pid: int, sig: int = HARD_KILL) -> None:
    """Signal the server and everything it started (it leads its own process group)."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is None:
            raise OSError("no process groups here")
        killpg(pid, sig)
    except OSError:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


# -- servers still running when Python exits ------------------------------------------------

_live_pids: set[int] = set()


def track(pid: int) -> None:
    _live_pids.add(pid)


def untrack(pid: int) -> None:
    _live_pids.discard(pid)


def _terminate_leftovers() -> None:
    """At interpreter exit, stop servers nobody closed: SIGTERM, a short grace, then SIGKILL."""
    pids = [pid for pid in _live_pids if is_running(pid)]
    for pid in pids:
        kill_process_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + 0.5
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = [pid for pid in pids if is_running(pid)]
    for pid in pids:
        kill_process_group(pid, HARD_KILL)
    _live_pids.clear()


atexit.register(_terminate_leftovers)
