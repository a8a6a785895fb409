"""The cyclic garbage collector held back while `agentica` starts (`-p` and the REPL).

Before its first model request a `-p` run imports ~490 modules. That allocates millions of
objects and makes almost no garbage cycles, yet every 700 allocations the collector runs, and
now and then it walks every object made so far: ~40 M instructions, 3.6% of a whole one-answer
`-p` run under callgrind; holding it brings the REPL's prompt ~17 ms sooner (median of 15 paired runs).

So the entry point calls `hold()`, and the session calls `release()` once it has started: `-p`
just before its loop (headless/printers.py), the REPL once its prompt is painted
(tui/repl.py). `hold()` does not turn the collector off. It raises the young generation's
threshold from 700 allocations to HELD_THRESHOLD, which under callgrind spares as much as
turning it off did. A start that never reaches `release()` (a path this module does not know
of) still collects, only rarely. `release()` moves everything then alive into the permanent
generation (`gc.freeze`), which later collections do not walk, and puts the thresholds back.
A session's own garbage (asyncio's cycles, tracebacks) is collected as always.

Only the `agentica` process holds it (cli/app.py, the console script's `main()`, for the main
command: `-p` or the REPL). A caller of `main(argv)` (a test, a zygote's child, a program
embedding agentica) keeps its collector as it is, and so do the subcommands. The batch's zygote
holds it while it imports (batch/zygote.py) and releases it before it forks its first child.
"""

from __future__ import annotations

import gc

HELD_THRESHOLD = 200_000  # young-generation allocations between collections while held
_thresholds: tuple[int, ...] | None = None  # the ones hold() replaced, until release()


def hold() -> None:
    """Collect rarely until `release()` (nothing when the collector is off: the caller's choice,
    or when held already)."""
    global _thresholds
    if _thresholds is None and gc.isenabled():
        _thresholds = gc.get_threshold()
        gc.set_threshold(HELD_THRESHOLD, *_thresholds[1:])


def release() -> None:
    """Everything alive now into the permanent generation, and the thresholds back, if `hold()`
    raised them; else nothing."""
    global _thresholds
    if _thresholds is not None:
        kept, _thresholds = _thresholds, None
        gc.freeze()
        gc.set_threshold(*kept)


def held() -> bool:
    return _thresholds is not None
