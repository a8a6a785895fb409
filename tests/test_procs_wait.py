"""procs.wait_for_exit: a child's exit noticed as it happens, not at Popen.wait's next poll."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentica_cli.procs import wait_for_exit


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)


def test_the_exit_code_is_returned_and_the_child_reaped() -> None:
    proc = _child("import sys; sys.exit(3)")
    assert wait_for_exit(proc, 30) == 3
    assert proc.returncode == 3  # reaped: no zombie left


def test_a_child_that_outlives_the_timeout_raises_and_keeps_running() -> None:
    proc = _child("import time; time.sleep(30)")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_for_exit(proc, 0.2)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_a_child_reaped_already_gives_its_code() -> None:
    proc = _child("pass")
    proc.wait()
    assert wait_for_exit(proc, 5) == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfd_open is Linux's")
def test_the_exit_is_waited_for_not_polled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Popen.wait(timeout) looks for the exit, sleeping 0.5, 1, 2 ... 50 ms between looks, so it
    sees an exit up to twice as late as it happens; wait_for_exit sleeps on the child's pidfd,
    which wakes at the exit. Popen's sleeps are refused here: only a waiter that does not poll
    gets the code of a child that is still running when the wait begins."""
    def no_polling(seconds: float) -> None:
        raise AssertionError(f"polled: slept {seconds} s between looks")

    proc = _child("import time; time.sleep(0.3)")
    monkeypatch.setattr(subprocess.time, "sleep", no_polling)
    assert wait_for_exit(proc, 30) == 0
