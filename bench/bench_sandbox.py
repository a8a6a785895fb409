"""The command sandbox's added cost per command, for each backend this machine has.

`true` is started 30 times unconfined and 30 times through each backend (the argv the
execute tool runs, with the default policy: the work folder writable, ~/.ssh & co hidden,
no network); the added cost is the backend's median minus the unconfined median.
Targets: < 15 ms for bubblewrap, < 3 ms for Landlock.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_result, median, print_machine

from agentica_cli.sandbox import BACKENDS, Sandbox, SandboxPolicy, backend_available

RUNS = 30
COMMAND = ["/bin/true"]


def p50_ms(argv: list[str], cwd: str, env: dict[str, str] | None = None) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return median(times)


def main() -> None:
    print_machine("sandbox: added cost per command (p50 of 30 runs of `true`)")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as work:
        p50_ms(COMMAND, work)  # warm the page cache
        none = p50_ms(COMMAND, work)
        figures["none_ms"] = round(none, 2)
        print(f"unconfined: {none:.2f} ms")
        for backend in BACKENDS:
            if not backend_available(backend):
                print(f"{backend}: not available here")
                continue
            sandbox = Sandbox(SandboxPolicy.build("workspace-write", work), backend)
            argv = sandbox.wrap(COMMAND, work)
            p50_ms(argv, work)
            total = p50_ms(argv, work)
            figures[f"{backend}_added_ms"] = round(total - none, 2)
            print(f"{backend}: {total:.2f} ms, added {total - none:.2f} ms")
    emit_result("sandbox", figures)


if __name__ == "__main__":
    main()
