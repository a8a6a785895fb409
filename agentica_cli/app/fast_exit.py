"""Leaving the process without the interpreter's teardown: what `agentica -p`, `agentica
batch`, the batch zygote's sessions and the servers (`acp`, `mcp serve`) do once their work
is written.

The teardown frees every module and object one by one: ~30-40 ms after `-p` has printed its
answer (measured on 2 cores), which a shell loop or a CI job pays at every call. `finalize()`
does what the interpreter does at exit that matters (the non-daemon threads, the atexit
functions: agentica's end of its descendants, temporary folders, OpenTelemetry's exporters;
stdio flushed); `exit_now()` then ends the process with os._exit. Anything else that would
only be flushed by garbage collection at exit is a bug either way: agentica's files are
written and closed as they go (sessions, results, checkpoints).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import NoReturn

_finalized = False


def finalize() -> None:
    """What the interpreter does at exit, which os._exit() skips: wait for the non-daemon
    threads, run the atexit functions, flush stdio. Once per process."""
    global _finalized
    if _finalized:
        return
    _finalized = True
    import atexit

    try:
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def exit_now(code: int) -> NoReturn:
    """finalize(), then end the process with `code` at once."""
    finalize()
    os._exit(code)
