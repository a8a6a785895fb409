"""The session reaper (agentica_cli/sandbox/reaper.py) fails safe: outside a signal-scoped
Landlock domain it could signal every process of the user (root: every process), so it must
kill nothing there. What it does inside one is tested end to end in test_sandbox_escapes.py
(agent SIGKILLed: the daemon gone, a bystander alive) and test_sandbox_escapes_cli.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agentica_cli.sandbox.sandbox_session import REAPER

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def test_without_signal_scoping_the_reaper_exits_at_once_and_kills_nothing() -> None:
    bystander = subprocess.Popen(["sleep", "60"])
    read_end, write_end = os.pipe()
    try:
        reaper = subprocess.Popen([sys.executable, "-I", "-S", REAPER, str(read_end), str(os.getpid())],
                                  pass_fds=(read_end,))
        os.close(read_end)
        assert reaper.wait(timeout=20) == 0  # it could signal this process: not scoped, so it does not wait
        os.close(write_end)
        write_end = -1
        assert bystander.poll() is None
    finally:
        if write_end >= 0:
            os.close(write_end)
        bystander.kill()
        bystander.wait()
