"""The command sandbox's added cost per command, for each backend this machine has.

`true` is started 60 times unconfined and 60 times through each backend, the way the
execute tool starts it (Sandbox.prepare: bwrap's argv; for Landlock the confined spawn
thread, no launcher), with the default policy: the work folder writable, ~/.ssh & co
hidden, no network. Each backend's runs alternate with unconfined ones (one of each per
round) so a busy machine slows both alike; the added cost is the backend's median minus
the unconfined median of the same rounds, also given as a ratio. The process is made
non-dumpable first, as the agentica CLI is (harden_process); `landlock_library` is the same
spawn in a dumpable process (a library user's script), which switches that off and on
around each spawn. `landlock_launcher` is the `python -I -S landlock.py` launcher that MCP
servers still use (their process is started by the MCP SDK from an argv). Targets: < 15 ms
for bubblewrap, < 3 ms for Landlock.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import emit_result, median, print_machine

from agentica_cli.sandbox import Launch, Sandbox, SandboxPolicy, backend_available

RUNS = 60
COMMAND = ["/bin/true"]
PR_SET_DUMPABLE = 4


def starter(sandbox: Sandbox | None, work: str, *, launcher: bool = False) -> Callable[[], float]:
    """One timed start-and-wait of COMMAND, in milliseconds."""
    if sandbox is None:
        launch = Launch(COMMAND)
    elif launcher:
        launch = Launch(sandbox.wrap(COMMAND, work))
    else:
        launch = sandbox.prepare(COMMAND, work)

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(launch.argv, cwd=work, stdin=subprocess.DEVNULL, start_new_session=True)

    def once() -> float:
        _keep = sandbox  # its private temp folder lives as long as the sandbox object
        began = time.perf_counter()
        if launch.start(popen).wait() != 0:
            raise SystemExit(f"{launch.argv[0]} failed")
        return (time.perf_counter() - began) * 1000

    return once


def measure(cases: dict[str, Callable[[], float]]) -> dict[str, float]:
    for once in cases.values():  # warm the page cache and the ruleset caches
        once()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(RUNS):
        for name, once in cases.items():
            times[name].append(once())
    return {name: median(values) for name, values in times.items()}


def main() -> None:
    print_machine(f"sandbox: added cost per command (p50 of {RUNS} runs of `true`, each backend interleaved with "
                  "unconfined runs)")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as work:
        policy = SandboxPolicy.build("workspace-write", work)
        cases: dict[str, Callable[[], float]] = {}
        for backend in ("bubblewrap", "landlock", "seatbelt"):
            if not backend_available(backend):
                print(f"{backend}: not available here")
                continue
            cases[backend] = starter(Sandbox(policy, backend), work)
            if backend == "landlock":
                cases["landlock_launcher"] = starter(Sandbox(policy, backend), work, launcher=True)
        unconfined = starter(None, work)
        if "landlock" in cases:  # first, while this process is still dumpable (a library user's script)
            library = starter(Sandbox(policy, "landlock"), work)
            figures["landlock_library_added_ms"] = _report(measure({"none": unconfined, "landlock_library": library}),
                                                           "landlock_library")
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # as agentica's harden_process does
        nones = []
        for name, once in cases.items():
            # Pairwise: a heavy backend's aftermath (bwrap's namespaces torn down by the kernel) must
            # not land on another backend's runs.
            results = measure({"none": unconfined, name: once})
            nones.append(results["none"])
            figures[f"{name}_added_ms"] = _report(results, name)
            figures[f"{name}_ratio"] = round(results[name] / results["none"], 2)
        figures["none_ms"] = round(median(nones), 2) if nones else float("nan")
    emit_result("sandbox", figures)


def _report(results: dict[str, float], name: str) -> float:
    added = results[name] - results["none"]
    print(f"{name}: {results[name]:.2f} ms, unconfined {results['none']:.2f} ms: added {added:.2f} ms "
          f"({results[name] / results['none']:.2f}x)")
    return round(added, 2)


if __name__ == "__main__":
    main()
