"""Background processes in the CLI: /ps lists them, /kill stops one, and the end of the
session (REPL Ctrl-D, the end of a -p run) stops them all, with no process left (checked in
/proc). The REPL runs in a pseudo-terminal, the model is the scripted server."""

from __future__ import annotations

import os
import re
import sys
import time
import uuid
from pathlib import Path

import pytest
from cli_support import model_args, run_cli, tool_results
from screen_support import flat
from test_builtin_execute import alive, group_members
from test_repl import project  # noqa: F401 (fixture)

from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="finds processes in /proc (Linux)")

# A stand-in for a dev server: says it is ready, then runs until stopped. SIGTERM (the
# graceful stop) leaves a file behind; the SIGKILL of the group watcher would not.
SERVER_SCRIPT = """
import os, signal, sys, time
def stop(*_):
    open("terminated-" + sys.argv[1], "w").close()
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", sys.argv[1], flush=True)
open("ready-" + sys.argv[1], "w").close()
time.sleep(300)
"""


def server_command(marker: str) -> str:
    return f"{sys.executable} -u -c '{SERVER_SCRIPT}' {marker}"


def start_script(marker: str, reply: str) -> list:
    return [
        turns.tool_calls(turns.call("execute", {"command": server_command(marker), "background": True}, id="bg")),
        turns.text(reply),
    ]


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds `marker` (whatever wrapped them)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read() and alive(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found


def started(server: ScriptedModelServer) -> tuple[str, int]:
    """(id, pid) from execute's result, which the model got in its second request."""
    result = tool_results(server.requests[1])["bg"]
    assert "keeps running" in result, result
    found = re.search(r"process (bg\d+) \(pid (\d+)\)", result)
    assert found, result
    return found.group(1), int(found.group(2))


def wait_for(path: Path, deadline_s: float = 15) -> None:
    deadline = time.monotonic() + deadline_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def assert_all_gone(pid: int, marker: str, deadline_s: float = 15) -> None:
    deadline = time.monotonic() + deadline_s
    while (alive(pid) or group_members(pid) or processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    assert group_members(pid) == []
    assert processes_with(marker) == []


def test_ps_lists_a_background_process_and_kill_stops_it(start_repl, project: Path) -> None:  # noqa: F811
    marker = f"bg{uuid.uuid4().hex[:12]}"
    with ScriptedModelServer(start_script(marker, "The server runs.")) as server:
        repl = start_repl(server)
        repl.send_line("start the dev server")
        question = flat(repl.expect(r"Allow\?"))
        assert "background=true" in question  # the user sees that it will keep running
        repl.child.send("y")
        repl.expect("The server runs.")
        repl.expect_prompt()
        process_id, pid = started(server)
        wait_for(project / f"ready-{marker}")

        repl.send_line("/ps")
        listing = flat(repl.expect("Stop one with /kill"))
        assert re.search(rf"{process_id} running pid {pid} up \d+s", listing), listing
        assert f"ready {marker}" in listing  # its last lines
        repl.expect_prompt()

        repl.send_line(f"/kill {process_id}")
        repl.expect(f"Stopped {process_id}")
        repl.expect_prompt()
        assert_all_gone(pid, marker)
        assert (project / f"terminated-{marker}").exists()  # SIGTERM first: it could clean up

        repl.send_line("/ps")
        assert re.search(rf"{process_id} stopped", flat(repl.expect("Stop one with /kill")))
        repl.send_line("/kill bg999999")
        repl.expect("no background process 'bg999999'")
        repl.expect_prompt()
        assert repl.exit() == 0


def test_leaving_the_repl_stops_its_background_processes(start_repl, project: Path) -> None:  # noqa: F811
    marker = f"bg{uuid.uuid4().hex[:12]}"
    with ScriptedModelServer(start_script(marker, "The server runs.")) as server:
        repl = start_repl(server)
        repl.send_line("start the dev server")
        repl.expect(r"Allow\?")
        repl.child.send("y")
        repl.expect("The server runs.")
        repl.expect_prompt()
        _, pid = started(server)
        wait_for(project / f"ready-{marker}")
        assert alive(pid)
        repl.child.sendcontrol("d")
        repl.expect("Stopped 1 background process")
        assert repl.exit() == 0
    assert_all_gone(pid, marker)
    assert (project / f"terminated-{marker}").exists()


def test_a_print_run_stops_its_background_processes_when_it_ends(home: Path, project: Path) -> None:  # noqa: F811
    marker = f"bg{uuid.uuid4().hex[:12]}"
    with ScriptedModelServer(start_script(marker, "Started it.")) as server:
        proc = run_cli(["-p", "start the dev server", "--yes", *model_args(server)], cwd=project, home=home)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "Started it.\n"
        _, pid = started(server)
    assert_all_gone(pid, marker)
    assert (project / f"terminated-{marker}").exists()  # stopped by the run's end, not only by the watcher
