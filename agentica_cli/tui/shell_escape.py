"""`!cmd` in the REPL: run a shell command in the project, stream its output, and stop it
for sure on Ctrl-C.

The command runs in a session of its own (a Ctrl-C meant for agentica's prompt never reaches
it by accident), so Ctrl-C is passed on by hand: SIGINT to its process group, as a terminal
would. That is not always enough: `sh -c 'a; b'` catches SIGINT, and one that arrives between
two commands (after `a`, before `b` was started) is swallowed while `b` runs unsignalled. So
what still runs after a grace period gets SIGTERM, then SIGKILL; a second Ctrl-C kills at once.
Its group also dies with agentica, SIGKILL included (builtin_tools/watched_process.py).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

GRACE_S = 1.0  # after SIGINT, before SIGTERM; as long again before SIGKILL

Interrupt = Callable[[], None]


async def run_shell_escape(command: str, work_dir: Path,
                           set_interrupt: Callable[[Interrupt | None], None]) -> tuple[str, str]:
    """Run `command`, writing its output to stdout as it comes; (status, output), status being
    "interrupted" or "exit code N". `set_interrupt` receives what Ctrl-C should do meanwhile
    (None once the command is over)."""
    from agentica_cli.child_env import command_environment
    from builtin_tools.watched_process import start_watched_process

    proc = await start_watched_process(
        ["/bin/sh", "-c", command],  # as create_subprocess_shell's
        cwd=work_dir,
        env=command_environment(),  # the user's environment, not a key agentica got elsewhere
        stdin="devnull",
        stderr="stdout",
    )
    loop = asyncio.get_running_loop()
    escalations: list[asyncio.TimerHandle] = []

    def signal_group(sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def stop() -> None:
        if escalations:  # a second Ctrl-C
            signal_group(signal.SIGKILL)
            return
        signal_group(signal.SIGINT)
        escalations.append(loop.call_later(GRACE_S, signal_group, signal.SIGTERM))
        escalations.append(loop.call_later(2 * GRACE_S, signal_group, signal.SIGKILL))

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    parts: list[str] = []
    set_interrupt(stop)
    try:
        assert proc.stdout is not None
        # Until every process holding the output has gone, not just the shell: what the
        # command left running in its group is stopped by the same escalation.
        while chunk := await proc.stdout.read(65536):  # streamed: a long `!pytest` shows progress
            text = decoder.decode(chunk)
            parts.append(text)
            sys.stdout.write(text)
            sys.stdout.flush()
        await proc.wait()
    finally:
        set_interrupt(None)
        for handle in escalations:
            handle.cancel()
    parts.append(decoder.decode(b"", final=True))
    output = "".join(parts)
    if output and not output.endswith("\n"):
        sys.stdout.write("\n")
    elif escalations and sys.stdout.isatty():
        sys.stdout.write("\r\x1b[K")  # over the terminal's own "^C" echo, alone on its line
    return ("interrupted" if escalations else f"exit code {proc.returncode}"), output
