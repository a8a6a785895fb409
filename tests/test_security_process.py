"""Hardening of the agent process (issue 18): a command dies with the agent, and the agent's
own startup environment (/proc/<pid>/environ) shows no secret. Through the real `agentica`
command against the scripted model server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cli_support import AGENTICA, cli_env, model_args, tool_results
from test_builtin_execute import alive, group_members

from agentica_cli.testing import ScriptedModelServer, turns
from builtin_tools.process_group import WATCHER_NAME, run_in_group, start_watcher, unwatch_group_blocking

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/<pid>/environ (Linux)")


def _wait_for(condition, timeout: float = 30, interval: float = 0.02) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(interval)


def _kill_group_left(pgid: int) -> None:
    """Clean up after a failed test: the group the watcher did not kill."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


_WATCHER_ARG = b"\0" + WATCHER_NAME.encode() + b"\0"  # in a watcher's /proc/PID/cmdline


def _group_watcher_running(pgid: int) -> bool:
    """Whether a builtin_tools.process_group watcher holds group `pgid`: one was told that
    pgid (it then works in /proc/PGID) and waits for the command's end."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (_WATCHER_ARG in (proc / "cmdline").read_bytes()
                    and os.readlink(proc / "cwd") == f"/proc/{pgid}"):
                return True
        except OSError:
            continue
    return False


@contextmanager
def _agent_calling(home: Path, project: Path, name: str, arguments: dict[str, object],
                   *flags: str) -> Iterator[tuple[subprocess.Popen[bytes], ScriptedModelServer]]:
    """`agentica -p --yes FLAGS` in `project`, its model asking for one call of `name`;
    SIGKILLed (if still running) and reaped at the end."""
    script = [turns.tool_calls(turns.call(name, arguments, id="call_1")), turns.text("never reached")]
    with ScriptedModelServer(script) as server:
        proc = subprocess.Popen([*AGENTICA, "-p", "run it", "--yes", *flags, *model_args(server)], cwd=project,
                                env=cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            yield proc, server
        finally:
            proc.kill()
            proc.communicate(timeout=10)


def test_a_sigkilled_agent_takes_its_running_command_with_it(home: Path, tmp_path: Path) -> None:
    """Finding 11: the command (and its children) must not outlive a SIGKILLed agent and
    finish its effect later."""
    project = tmp_path / "project"
    project.mkdir()
    # 5 s: long enough that a busy machine still kills the agent before the command is done
    command = "echo $$ > started; (sleep 5; touch LATE_CHILD) & sleep 5; touch LATE"
    # --sandbox off: the unconfined path (test_sandbox_cli covers the sandboxed one, whose
    # command sees only its own PID namespace)
    with _agent_calling(home, project, "execute", {"command": command}, "--sandbox", "off"):
        started = project / "started"
        _wait_for(lambda: started.exists() and started.read_text().strip() != "")
        started_at = time.monotonic()
        pgid = int(started.read_text())
        assert group_members(pgid), "the command is not running"
        # The normal case: the watcher knows the group (a kill before that: the next test)
        _wait_for(lambda: _group_watcher_running(pgid))
    _wait_for(lambda: not group_members(pgid), timeout=5)
    time.sleep(max(0.0, started_at + 6 - time.monotonic()))  # past when the command would touch its files
    assert not (project / "LATE").exists()
    assert not (project / "LATE_CHILD").exists()
    assert group_members(pgid) == []


def _kill_when_started(agent: subprocess.Popen[bytes], marker: bytes, timeout: float = 30) -> int:
    """SIGKILL `agent` the moment a child of its main thread (where an unsandboxed command
    starts) runs a command line containing `marker`: from its exec, before it has run a line
    of it. A tight loop of raw reads, as a kill must land within a fraction of a millisecond
    to fall where the watcher once did not exist yet. The child's pid."""
    children = f"/proc/{agent.pid}/task/{agent.pid}/children"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(children, "rb") as f:
            pids = f.read().split()
        for pid in pids:
            try:
                with open(b"/proc/%s/cmdline" % pid, "rb") as f:
                    if marker in f.read():
                        agent.kill()
                        return int(pid)
            except OSError:
                continue
    raise AssertionError("the command did not start")


def test_an_agent_sigkilled_the_moment_its_command_started_still_takes_it(home: Path, tmp_path: Path) -> None:
    """No window between the command's start and its watcher: the agent is SIGKILLed as soon
    as the command's process runs it (its command line shows it), without waiting for
    anything else, and the group still dies."""
    project = tmp_path / "project"
    project.mkdir()
    command = "(sleep 30; touch LATE_CHILD) & sleep 30; touch LATE"
    with _agent_calling(home, project, "execute", {"command": command}, "--sandbox", "off") as (proc, server):
        _wait_for(lambda: bool(server.requests))  # the tool call is on its way: look closely now
        pgid = _kill_when_started(proc, b"touch LATE")
    try:
        # 30 s sleeps: a group nobody killed is still there when the wait gives up
        _wait_for(lambda: not group_members(pgid), timeout=10)
    finally:
        _kill_group_left(pgid)
    assert not (project / "LATE").exists()


def test_the_agents_proc_environ_shows_no_secret_to_a_command(home: Path, tmp_path: Path) -> None:
    """Finding 5: `env` in a command shows the secrets removed, but the agent's own
    /proc/<pid>/environ (its startup environment) showed them; now the values are gone."""
    project = tmp_path / "project"
    project.mkdir()
    # Walk up from the command's shell to the agentica process, print its pid and environ.
    command = textwrap.dedent("""\
        p=$PPID
        while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != agentica ]; do
          p=$(awk '/^PPid:/ {print $2}' /proc/$p/status)
        done
        echo "agent=$p"
        tr '\\0' '\\n' < /proc/$p/environ
    """)
    secrets = {"OPENAI_API_KEY": "sk-test-secret-4f9a8b7c6d5e", "GITHUB_TOKEN": "ghp_testtoken0123456789",
               "DB_PASSWORD": "hunter2-correct-horse"}
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="call_1")), turns.text("done")]
    with ScriptedModelServer(script) as server:
        args = list(model_args(server))
        key_at = args.index("--api-key-file")
        del args[key_at:key_at + 2]  # the key comes from OPENAI_API_KEY, as users usually give it
        env = cli_env(home, HARDENING_PROBE="visible-setting", **secrets)
        # --sandbox off: inside the sandbox the agent's process is not even visible (own /proc)
        proc = subprocess.Popen([*AGENTICA, "-p", "look", "--yes", "--sandbox", "off", *args], cwd=project, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=60)
        requests = server.requests
    assert proc.returncode == 0, err
    assert out == "done\n"  # the key still worked for the model requests
    result = tool_results(requests[1])["call_1"]
    assert f"agent={proc.pid}" in result, result[:500]  # it read the agentica process, not its own shell
    assert "HARDENING_PROBE=visible-setting" in result  # ... and the environ was really shown
    assert "OPENAI_API_KEY=" in result  # the variable is listed, its value is not
    for value in secrets.values():
        assert value not in result


def test_hardening_keeps_secrets_usable_inside_the_process(tmp_path: Path) -> None:
    """What the scrub must not break: os.environ, libc getenv and children that inherit the
    environment still see the values; the process is no longer dumpable."""
    script = textwrap.dedent(f"""
        import ctypes, os, subprocess, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from agentica_cli.app.process_hardening import harden_process
        harden_process()
        libc = ctypes.CDLL(None)
        libc.getenv.restype = ctypes.c_char_p
        environ = open("/proc/self/environ", "rb").read()
        child = subprocess.run("echo $GITHUB_TOKEN", shell=True, capture_output=True, text=True).stdout.strip()
        print(libc.prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
        print(b"ghp_in_process_secret" in environ, b"PLAIN_VALUE=kept" in environ)
        print(os.environ["GITHUB_TOKEN"], libc.getenv(b"GITHUB_TOKEN").decode(), child)
    """)
    env = {**os.environ, "GITHUB_TOKEN": "ghp_in_process_secret", "PLAIN_VALUE": "kept"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "0",
        "False True",
        "ghp_in_process_secret ghp_in_process_secret ghp_in_process_secret",
    ]


def test_an_agent_killed_mid_command_in_the_library_also_takes_the_group(tmp_path: Path) -> None:
    """The same guarantee without the CLI: any program running BuiltinExecuteTool."""
    started = tmp_path / "started"
    script = textwrap.dedent(f"""
        import asyncio, os, signal, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from builtin_tools import BuiltinExecuteTool

        async def main():
            task = asyncio.create_task(BuiltinExecuteTool({str(tmp_path)!r}).execute(
                "echo $$ > started; sleep 2; touch LATE"))
            while not os.path.exists({str(started)!r}) or not open({str(started)!r}).read().strip():
                await asyncio.sleep(0.01)
            os.kill(os.getpid(), signal.SIGKILL)

        asyncio.run(main())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    pgid = int(started.read_text())
    _wait_for(lambda: not alive(pgid), timeout=5)
    time.sleep(2.5)
    assert not (tmp_path / "LATE").exists()


_DIE_WHEN_STARTED = textwrap.dedent("""
    import asyncio, os, signal, sys
    sys.path.insert(0, {root!r})

    def start_then_die(popen):
        # A `start` hook (what a sandbox passes) that SIGKILLs this process as soon as the
        # command exists: before the starter returns, before anything else runs here.
        command = popen()
        with open("pgid", "w") as f:
            f.write(str(command.pid))
        os.kill(os.getpid(), signal.SIGKILL)

    argv = ["/bin/sh", "-c", "sleep 30 & sleep 30; touch LATE"]
""")


def _run_until_killed(tmp_path: Path, body: str) -> int:
    """Run a program that dies by SIGKILL the moment its command started; the command's pgid."""
    script = _DIE_WHEN_STARTED.format(root=str(Path(__file__).resolve().parents[1])) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return int((tmp_path / "pgid").read_text())


def _assert_group_dies(pgid: int) -> None:
    try:
        _wait_for(lambda: not group_members(pgid), timeout=10)  # the command sleeps 30 s
    finally:
        _kill_group_left(pgid)


def test_an_agent_killed_while_starting_a_command_takes_the_group(tmp_path: Path) -> None:
    """The watcher exists before the command does: killed between the command's start and
    telling the watcher its group, the agent still takes the command with it (the watcher
    finds it by its output pipes)."""
    pgid = _run_until_killed(tmp_path, """
        from builtin_tools.process_group import run_in_group
        asyncio.run(run_in_group(argv, cwd=".", env=dict(os.environ), timeout=60, start=start_then_die))
    """)
    _assert_group_dies(pgid)
    assert not (tmp_path / "LATE").exists()


def test_an_agent_killed_while_starting_a_background_process_takes_it(tmp_path: Path) -> None:
    """The same for execute(background=true), whose process outlives the call."""
    pgid = _run_until_killed(tmp_path, """
        from builtin_tools.background import BackgroundProcesses
        BackgroundProcesses().start(argv, command="sleep", cwd=".", env=dict(os.environ), start=start_then_die)
    """)
    _assert_group_dies(pgid)


def _pipe_writer(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    """A process group writing to a pipe whose read end this process keeps: (the group's
    leader, the read end, the pipe's inode)."""
    read_end, write_end = os.pipe()
    writer = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & sleep 30"], stdout=write_end, cwd=tmp_path,
                              start_new_session=True)
    os.close(write_end)
    return writer, read_end, os.fstat(read_end).st_ino


def test_a_watcher_that_loses_the_agent_before_the_pgid_kills_the_pipes_writers_only(tmp_path: Path) -> None:
    """End-of-file before the pgid: the writers to the command's pipes die (and their group),
    not the agent that reads them (here this test process, which holds the read end)."""
    writer, read_end, inode = _pipe_writer(tmp_path)
    try:
        watcher = start_watcher([inode])
        assert watcher is not None and watcher.stdin is not None
        watcher.stdin.close()  # what the kernel does when the agent dies
        assert watcher.wait(timeout=30) == 0
        assert writer.wait(timeout=10) == -signal.SIGKILL
        _wait_for(lambda: not group_members(writer.pid), timeout=10)
    finally:
        _kill_group_left(writer.pid)
        writer.wait()
        os.close(read_end)


def test_a_watcher_told_no_command_started_kills_nothing(tmp_path: Path) -> None:
    """The command failed to start: the agent says so (an empty first line) and the watcher
    exits without looking for anything to kill."""
    writer, read_end, inode = _pipe_writer(tmp_path)
    try:
        _wait_for(lambda: len(group_members(writer.pid)) == 3)  # sh and its two sleeps
        watcher = start_watcher([inode])
        assert watcher is not None
        unwatch_group_blocking(watcher)
        assert watcher.returncode == 0  # it exited: whatever it would kill, it has killed
        assert writer.poll() is None and len(group_members(writer.pid)) == 3
    finally:
        _kill_group_left(writer.pid)
        writer.wait()
        os.close(read_end)


def test_a_command_that_fails_to_start_leaves_no_watcher(tmp_path: Path) -> None:
    """A start that raises (no such folder) propagates, and its watcher is gone with it."""
    async def run() -> None:
        await run_in_group(["true"], cwd=str(tmp_path / "missing"), env=dict(os.environ), timeout=10)

    before = _my_watchers()  # other tests' background processes may have theirs
    with pytest.raises(FileNotFoundError):
        asyncio.run(run())
    assert _my_watchers() - before == set()


def _my_watchers() -> set[int]:
    """PIDs of the running watchers this process started (zombies do not count)."""
    found = set()
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                if _WATCHER_ARG in Path(f"/proc/{pid}/cmdline").read_bytes() and alive(int(pid)):
                    found.add(int(pid))
            except OSError:
                continue
    return found


# -- agentica's own child processes: the REPL's `!cmd`, hooks, the status line command ----------
# Each writes its shell's pid (its pgid: it runs in a session of its own) to `started`, then
# sleeps on, with a child in its group; agentica is SIGKILLed as soon as `started` is written.
_STARTED_THEN_SLEEP = "echo $$ > {started}; (sleep 30; touch {late}_CHILD) & sleep 30; touch {late}"


def _child_command(tmp_path: Path) -> str:
    return _STARTED_THEN_SLEEP.format(started=tmp_path / "started", late=tmp_path / "LATE")


def _assert_dies_with_agent(kill_agent, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Wait for the child's pgid in `started`, SIGKILL the agent, and wait for the group to go."""
    started = tmp_path / "started"
    _wait_for(lambda: started.exists() and started.read_text().strip() != "")
    pgid = int(started.read_text())
    assert group_members(pgid), "the child is not running"
    kill_agent()
    try:
        # 30 s sleeps: a group nobody killed is still there when the wait gives up
        _wait_for(lambda: not group_members(pgid), timeout=10)
    finally:
        _kill_group_left(pgid)
    assert not (tmp_path / "LATE").exists()


def _repl(home: Path, project: Path, server: ScriptedModelServer):  # type: ignore[no-untyped-def]
    from screen_support import Repl, spawn_agentica

    return Repl(spawn_agentica(home, project, model_args(server)))


def _kill_repl(repl) -> None:  # type: ignore[no-untyped-def]
    os.kill(repl.child.pid, signal.SIGKILL)
    repl.child.wait()


def test_a_sigkilled_repl_takes_its_shell_escape_with_it(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ScriptedModelServer([]) as server:
        repl = _repl(home, project, server)
        try:
            repl.expect_prompt()
            repl.send_line("!" + _child_command(tmp_path))
            _assert_dies_with_agent(lambda: _kill_repl(repl), tmp_path)
        finally:
            repl.child.terminate(force=True)


def test_a_sigkilled_repl_takes_its_statusline_command_with_it(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (home / "config.toml").write_text(f"[ui]\nstatusline = {json.dumps(_child_command(tmp_path))}\n")
    with ScriptedModelServer([]) as server:
        repl = _repl(home, project, server)
        try:
            # the command runs as the prompt is drawn; killed before its 2 s timeout would
            _assert_dies_with_agent(lambda: _kill_repl(repl), tmp_path)
        finally:
            repl.child.terminate(force=True)


@pytest.mark.parametrize("kind", ["lifecycle", "config"])
def test_a_sigkilled_agent_takes_its_running_hook_with_it(home: Path, tmp_path: Path, kind: str) -> None:
    """A lifecycle hook (settings.json, extensions/hooks.py) or a `[[hooks.before_tool_call]]`
    one (cli/hooks.py) still running when the agent is SIGKILLed."""
    project = tmp_path / "project"
    project.mkdir()
    command = _child_command(tmp_path)
    if kind == "lifecycle":
        hook = {"type": "command", "command": command, "timeout": 60}
        (home / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    else:
        (home / "config.toml").write_text(f"[[hooks.before_tool_call]]\ncommand = {json.dumps(command)}\n"
                                          "timeout = 60\n")
    with _agent_calling(home, project, "read_file", {"file_path": "x.txt"}) as (proc, _):
        _assert_dies_with_agent(proc.kill, tmp_path)


def test_a_config_hook_that_times_out_takes_what_it_started_with_it(tmp_path: Path) -> None:
    """`[[hooks.before_tool_call]]` (cli/hooks.py): at its timeout the hook's whole group is
    killed, not only its shell, so a `sleep` it started in the background does not linger."""
    from agentica_cli.app.hooks import CommandHook

    pid_file = tmp_path / "child.pid"
    hook = CommandHook(f"sleep 60 & echo $! > {pid_file}; wait", tools=None, timeout=1.0, work_dir=tmp_path)
    code, output = asyncio.run(hook.run({"event": "before_tool_call", "tool": "execute"}))
    assert (code, output) == (124, "timed out after 1 s")
    child = int(pid_file.read_text())
    _wait_for(lambda: not alive(child), timeout=10)
