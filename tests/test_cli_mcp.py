"""MCP servers from config.toml in the `agentica` command: trust, tools offered, failures, /mcp."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pexpect
import pytest
from cli_support import model_args, run_cli, tool_results
from mcp_repl_support import spawn_repl, wait_until_server_ready

from agentica_cli.testing import ScriptedModelServer, turns

DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"
TASKS = Path(__file__).resolve().parent / "mcp_servers" / "tasks_server.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".agentica").mkdir(parents=True)
    (path / ".agentica" / "config.toml").write_text(
        f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{DEMO}"]\n\n'
        f'[mcp_servers.broken]\ncommand = "{sys.executable}"\nargs = ["{DEMO}", "--fail-start", "no database"]\n'
    )
    return path


def offered(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def test_untrusted_project_servers_are_not_started(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert f"agentica: ignoring 'mcp_servers' from untrusted {project / '.agentica' / 'config.toml'}" in proc.stderr
    assert not any(name.startswith("demo__") for name in offered(requests[0]))


def test_trusted_project_servers_start_and_their_tools_are_called(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("demo__add", {"a": 2, "b": 3}, id="m1")),
        turns.text("2 + 3 = 5"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "add", "--trust", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert {"demo__add", "demo__echo", "read_file"} <= offered(requests[0])
    assert not any(name.startswith("broken__") for name in offered(requests[0]))
    assert tool_results(requests[1])["m1"] == "5"
    assert proc.stderr.count("MCP server 'broken' failed to start") == 1
    assert "no database" in proc.stderr
    assert proc.stdout == "2 + 3 = 5\n"
    # trusted once, remembered: the next run needs no flag
    with ScriptedModelServer([turns.text("ok")]) as server:
        again = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
        assert "demo__add" in offered(server.requests[0])
    assert "ignoring" not in again.stderr


def test_bad_mcp_table_is_a_config_error(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[mcp_servers.x]\nurl = "http://127.0.0.1:1/mcp"\nargs = ["a"]\n')
    proc = run_cli(["-p", "hi", "--api-key", "k"], cwd=project, home=home)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"agentica: config error: {home / 'config.toml'}: mcp_servers.x.args applies to")


def wait_until_demo_is_ready(child: pexpect.spawn) -> None:
    wait_until_server_ready(child, "demo", tries=40)


def test_repl_lists_servers_with_mcp_command(home: Path, project: Path) -> None:
    with ScriptedModelServer([]) as server:
        child = spawn_repl(home, project, server)
        try:
            child.expect("❯")
            # told as it happens (AppSession's mcp_live_notices), with where to look next
            child.expect(r"MCP server 'broken' failed to start: .*no database.*?\(see /mcp\)")
            wait_until_demo_is_ready(child)  # 'broken' may fail before 'demo' is ready
            child.expect(r"tools: .*demo__add")
            child.expect(r"broken\s+failed")
            child.expect(r"error: .*no database")  # why it failed, under its line
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert child.exitstatus == 0


def test_repl_mcp_command_marks_tools_that_run_as_tasks(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "tasks"
    (project / ".agentica").mkdir(parents=True)
    (project / ".agentica" / "config.toml").write_text(
        f'[mcp_servers.tasks]\ncommand = "{sys.executable}"\nargs = ["{TASKS}"]\nprotocol = "legacy"\n')
    with ScriptedModelServer([]) as server:
        child = spawn_repl(home, project, server)
        try:
            child.expect("❯")
            wait_until_server_ready(child, "tasks", tries=40)
            child.expect(r"tools: ([^\r\n]*)\r?\n")
            tools = child.match.group(1).strip().split(", ")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    # taskSupport "required": called as a task; "optional" (lookup) stays a plain call.
    assert {"tasks__research (task)", "tasks__confirm (task)", "tasks__lookup", "tasks__task_log"} == set(tools)


def test_repl_server_that_crashes_mid_session_is_offered_again_and_restarted(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "crashy"
    (project / ".agentica").mkdir(parents=True)
    (project / ".agentica" / "config.toml").write_text(
        f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{DEMO}"]\n')
    script = [
        turns.tool_calls(turns.call("demo__crash", {}, id="c1")),
        turns.text("It crashed."),
        turns.tool_calls(turns.call("demo__increment", {}, id="c2")),
        turns.text("Counter is back."),
    ]
    with ScriptedModelServer(script) as server:
        child = spawn_repl(home, project, server, "--yes")
        try:
            child.expect("❯")
            wait_until_demo_is_ready(child)  # so the first turn offers its tools
            child.expect("❯")
            screen = io.StringIO()
            child.logfile_read = screen
            child.send("crash it\r")
            child.expect("It crashed.")
            child.expect("❯")
            # Told once, during or right after the turn (whichever notices the dead server first).
            told = r"MCP\s+server\s+'demo'\s+stopped:[\s\S]*?its\s+next\s+call\s+restarts\s+it"  # wrapped at words
            assert len(re.findall(told, screen.getvalue())) == 1
            child.send("count\r")
            child.expect("Counter is back.")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert "demo__increment" in offered(server.requests[2])  # still offered after the crash
        assert tool_results(server.requests[3])["c2"] == "1"  # a fresh server process answered
