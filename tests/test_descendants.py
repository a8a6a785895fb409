"""sandbox/descendants.end_descendants: what agentica does at exit with the processes below it.
Run in a process of its own (it ends every descendant of the process that calls it)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")

SCRIPT = textwrap.dedent("""
    import json, os, subprocess, sys, time
    from agentica_cli.sandbox.descendants import end_descendants, end_descendants_at_exit
    assert end_descendants_at_exit()
    exited = subprocess.Popen(["true"])  # ends at once: a zombie until reaped
    alive = subprocess.Popen(["sleep", "60"])
    # an orphan: its parent (sh) ends at once, the subreaper (this process) adopts it
    subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 </dev/null & echo $!"], capture_output=True, text=True)
    time.sleep(0.3)
    def state(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return "gone"
    before = state(exited.pid)
    killed = end_descendants() if sys.argv[1] == "all" else None
    print(json.dumps({"before": before, "killed": killed, "exited": state(exited.pid), "alive": state(alive.pid)}))
""")

ONLY_EXITED = textwrap.dedent("""
    import json, subprocess, time
    from agentica_cli.sandbox.descendants import end_descendants, end_descendants_at_exit
    assert end_descendants_at_exit()
    exited = subprocess.Popen(["true"])
    time.sleep(0.3)
    print(json.dumps({"killed": end_descendants()}))
""")


def _run(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_live_descendants_are_killed_and_exited_ones_only_reaped() -> None:
    result = _run(SCRIPT, "all")
    assert result["before"] == "Z"  # the probe saw a zombie
    assert result["killed"] == 2  # the sleep child and the adopted orphan; not the zombie
    assert result["exited"] == "gone" and result["alive"] == "gone"


def test_nothing_alive_below_means_nothing_killed() -> None:
    """Only an exited child left (as bubblewrap's probe leaves one): reaped, nobody killed, and
    no round of waiting for orphans (it was a 20 ms sleep at every `agentica -p` exit)."""
    result = _run(ONLY_EXITED)
    assert result["killed"] == 0
