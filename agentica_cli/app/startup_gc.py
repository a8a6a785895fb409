"""The cyclic garbage collector held off while `agentica -p` starts.

Before its first model request a `-p` run imports ~490 modules. That allocates millions of
objects and makes almost no garbage cycles, yet every 700 allocations the collector runs, and
now and then it walks every object made so far: ~40 M instructions, 3.6% of a whole one-answer
`-p` run under callgrind. So the entry point calls `hold()` and the session calls `release()`
just before its loop starts (headless/printers.py). `release()` moves everything then alive into
the permanent generation (`gc.freeze`), which later collections do not walk, and turns the
collector back on. A session's own garbage (asyncio's cycles, tracebacks) is collected as always.

Only the `agentica -p` process holds it (cli/app.py, the console script's `main()`): its start
is a straight line to `release()`. A caller of `main(argv)` (a test, a zygote's child, a program
embedding agentica) keeps its collector as it is; the REPL, the servers and the batch start
other ways and keep the default. The batch's zygote holds it while it imports (batch/zygote.py)
and releases it before it forks its first child.
"""

from __future__ import annotations

import gc

_held = False


def hold() -> None:
    """Turn the collector off until `release()` (when it is on: a caller's choice is kept)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Everything alive now into the permanent generation, and the collector on again, if
    `hold()` turned it off; else nothing."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
