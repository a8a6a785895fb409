"""A process that keeps swapping two names with renameat2(RENAME_EXCHANGE), as a sandboxed
command racing a path check would (a folder and a symlink leading out change places)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
    print("renameat2 failed", ctypes.get_errno(), flush=True)
    sys.exit(3)
print("swapping", flush=True)
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
"""


def renameat2_available() -> bool:
    return sys.platform.startswith("linux")


@contextlib.contextmanager
def swapping(first: Path, second: Path, *, cwd: Path | None = None) -> Iterator[subprocess.Popen[str]]:
    """Swap `first` and `second` as fast as possible until the block ends."""
    if not renameat2_available():
        pytest.skip("renameat2 is Linux-only")
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(first), str(second)], cwd=cwd,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if line != "swapping":
            pytest.skip(f"renameat2(RENAME_EXCHANGE) does not work here: {line or proc.wait()}")
        yield proc
    finally:
        proc.kill()
        proc.wait()
        # leave the two names as they were (an odd number of swaps may have happened)
        if os.path.islink(first) and not os.path.islink(second):
            subprocess.run([sys.executable, "-c", SWAPPER.replace("while True:", "while False:"), str(first),
                            str(second)], capture_output=True)
        time.sleep(0)
