"""McpTool against a real stdio MCP server (tests/mcp_servers/demo_server.py), calling its
Functions the way the agent does: FunctionCall(...).execute()."""

from __future__ import annotations

import asyncio
import os
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from mcp_servers.support import PYTHON, demo_command, process_gone, wait_gone

from agentica_cli.tools.base import FunctionCall
from agentica_cli.tools.mcp import McpServerError, McpTool

ALL_TOOLS = [
    "echo",
    "add",
    "slow_read",
    "increment",
    "delete_notes",
    "add_note",
    "fail",
    "pid",
    "getenv",
    "cwd",
    "log",
    "picture",
    "document",
    "big_text",
    "crash",
    "hang",
    "freeze",
]


def demo(tmp_path: Path, *options: str, **kwargs) -> McpTool:  # type: ignore[no-untyped-def]
    kwargs.setdefault("name", "demo")
    return McpTool(demo_command(*options), log_file=tmp_path / "demo.log", **kwargs)


async def call(tool: McpTool, name: str, arguments: str | dict = "{}") -> FunctionCall:  # type: ignore[type-arg]
    return await FunctionCall(tool.functions[name], "call_1", arguments).execute()


# -- construction (no server needed) ------------------------------------------------------


def test_command_string_is_split_like_a_shell():
    tool = McpTool("python 'my server.py' --flag x")
    assert (tool.target.transport, tool.target.command, tool.target.args) == (
        "stdio",
        "python",
        ("my server.py", "--flag", "x"),
    )
    assert tool.name == "my_server"
    assert tool.state == "idle" and tool.functions == {}


def test_command_with_args_env_cwd():
    tool = McpTool(command="npx", args=["-y", "@acme/files-server@1.2"], env={"A": "1"}, cwd="/tmp")
    assert tool.target.command == "npx"
    assert tool.target.args == ("-y", "@acme/files-server@1.2")
    assert dict(tool.target.env) == {"A": "1"} and tool.target.cwd == "/tmp"
    assert tool.name == "files-server"
    assert McpTool("python -m my_pkg.server --debug").name == "my_pkg_server"
    assert McpTool("/usr/local/bin/weather-mcp").name == "weather-mcp"


def test_url_picks_the_transport():
    assert McpTool(url="http://127.0.0.1:8000/sse").transport == "sse"
    assert McpTool(url="http://127.0.0.1:8000/mcp").transport == "streamable-http"
    assert McpTool(url="http://127.0.0.1:8000/sse", transport="streamable-http").transport == "streamable-http"
    assert McpTool(url="http://127.0.0.1:8000/x", transport="http").transport == "streamable-http"
    tool = McpTool(url="https://tools.example.test/mcp", headers={"Authorization": "Bearer t"})
    assert tool.name == "tools_example_test"
    assert dict(tool.target.headers) == {"Authorization": "Bearer t"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of a command"),
        ({"command": "x", "url": "http://127.0.0.1/mcp"}, "exactly one of a command"),
        ({"url": "ftp://127.0.0.1/mcp"}, "must start with http"),
        ({"url": "http://127.0.0.1/mcp", "transport": "carrier-pigeon"}, "unknown MCP transport"),
        ({"command": "x", "transport": "sse"}, "needs url="),
        ({"url": "http://127.0.0.1/mcp", "args": ["a"]}, "stdio servers only"),
        ({"command": "   "}, "empty command"),
    ],
)
def test_bad_constructor_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        McpTool(**kwargs)


def test_function_names_are_safe_for_chat_apis():
    tool = McpTool("python srv.py", name="my files")
    assert tool.name == "my_files"
    assert tool.function_name("read.file v2") == "my_files__read_file_v2"
    long = tool.function_name("x" * 100)
    assert len(long) == 64 and long.startswith("my_files__xxx")
    assert McpTool("python srv.py", tool_name_prefix="").function_name("a/b") == "a_b"


def test_results_rendered_as_text():
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ResourceLink,
        TextContent,
    )

    from agentica_cli.tools.mcp.results import render_result

    result = CallToolResult(
        content=[
            TextContent(type="text", text="two attachments:"),
            AudioContent(type="audio", data="AAAA" * 512, mime_type="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///a.bin", blob="AAAA", mime_type="application/zip"),
            ),
            ResourceLink(type="resource_link", name="report", uri="file:///r.pdf", description="the Q3 report"),
        ]
    )
    assert render_result(result) == (
        "two attachments:\n[audio: audio/wav, 1.5 KB]\n[resource: file:///a.bin, application/zip, 3 bytes]\n"
        "[resource link: report <file:///r.pdf>] the Q3 report"
    )
    assert render_result(CallToolResult(content=[], structured_content={"temp": 21})) == '{"temp": 21}'


# -- functions from the server's tool list -------------------------------------------------


def test_functions_schema_flags_and_results(tmp_path):
    async def main() -> None:
        async with demo(tmp_path) as mcp:
            assert mcp.state == "ready"
            assert list(mcp.functions) == [f"demo__{name}" for name in ALL_TOOLS]
            add = mcp.functions["demo__add"]
            # The server's inputSchema, passed through unchanged.
            assert add.parameters == {
                "type": "object",
                "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
                "required": ["a", "b"],
                "title": "addArguments",
            }
            assert add.description == "Add two integers."
            assert add.validate_arguments is False
            assert add.to_openai()["function"]["name"] == "demo__add"

            def flags(name: str) -> tuple[bool, bool, bool]:
                f = mcp.functions[f"demo__{name}"]
                return (f.is_read_only, f.concurrency_safe, f.is_destructive)

            assert flags("echo") == (True, True, False)  # readOnlyHint
            assert flags("increment") == (False, False, False)  # destructiveHint=false
            assert flags("delete_notes") == (False, False, True)  # destructiveHint=true
            assert flags("add_note") == (False, False, True)  # no hints at all

            done = await call(mcp, "demo__add", '{"a": 2, "b": 3}')
            assert (done.result, done.error) == ("5", None)
            failed = await call(mcp, "demo__fail", {"message": "disk on fire"})
            assert failed.error == failed.result == "Error: McpToolError: Error executing tool fail: disk on fire"
            picture = await call(mcp, "demo__picture")
            assert picture.result == "a pixel\n[image: image/png, 70 bytes]"
            document = await call(mcp, "demo__document")
            assert document.result == "see the attached file\n[resource: file:///notes.txt, text/plain]\nline one"
            # Arguments are checked by the server against its own schema.
            bad = await call(mcp, "demo__add", '{"a": "two", "b": 3}')
            assert bad.error is not None and bad.error.startswith("Error: McpToolError: ")
            assert "a" in bad.error and "integer" in bad.error
        assert mcp.state == "closed" and mcp.pid is None and mcp.functions == {}

    asyncio.run(main())


def test_one_session_keeps_state_between_calls(tmp_path):
    async def main() -> None:
        async with demo(tmp_path) as mcp:
            pid = mcp.pid
            assert pid is not None and not process_gone(pid)
            counts = [(await call(mcp, "demo__increment")).result for _ in range(3)]
            assert counts == ["1", "2", "3"]
            assert (await call(mcp, "demo__pid")).result == str(pid)
            assert mcp.restarts == 0

    asyncio.run(main())


def test_include_exclude_and_prefix(tmp_path):
    async def main() -> None:
        tools = [
            demo(tmp_path, include_tools=["echo", "add", "fail"], exclude_tools=["fail"]),
            demo(tmp_path, include_tools=["echo"], tool_name_prefix=""),
            demo(tmp_path, name="files", include_tools=["echo"]),
            demo(tmp_path, name="x", tool_name_prefix="srv", exclude_tools=ALL_TOOLS[1:]),
        ]
        await asyncio.gather(*(tool.connect() for tool in tools))
        try:
            assert [list(tool.functions) for tool in tools] == [
                ["demo__echo", "demo__add"],
                ["echo"],
                ["files__echo"],
                ["srv__echo"],
            ]
            assert [t.name for t in tools[0].mcp_tools] == ["echo", "add"]
            assert (await call(tools[1], "echo", {"text": "hi"})).result == "hi"
        finally:
            await asyncio.gather(*(tool.close() for tool in tools))

    asyncio.run(main())


def test_minimal_environment_and_cwd(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("AGENTICA_API_KEY", "also-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")

    async def main() -> None:
        async with demo(tmp_path, env={"SERVER_TOKEN": "given"}, cwd=tmp_path) as mcp:
            async def env(name: str) -> str | None:
                return (await call(mcp, "demo__getenv", {"name": name})).result

            assert await env("OPENAI_API_KEY") == "<unset>"
            assert await env("AGENTICA_API_KEY") == "<unset>"
            assert await env("SERVER_TOKEN") == "given"
            assert await env("LANG") == "C.UTF-8"
            assert await env("PATH") == os.environ["PATH"]
            assert (await call(mcp, "demo__cwd")).result == str(tmp_path)

    asyncio.run(main())


def test_server_stderr_goes_to_the_log_file(tmp_path, capfd):
    async def main() -> None:
        async with demo(tmp_path) as mcp:
            assert (await call(mcp, "demo__log", {"message": "a line for the log"})).result == "logged"

    asyncio.run(main())
    captured = capfd.readouterr()
    assert "a line for the log" not in captured.err + captured.out
    log = (tmp_path / "demo.log").read_text()
    assert "starting MCP server 'demo'" in log and "a line for the log" in log


def test_server_instructions_go_into_the_system_prompt(tmp_path):
    async def main() -> None:
        async with demo(tmp_path, include_tools=["echo"]) as mcp:
            assert mcp.get_system_prompt() == (
                "## MCP server 'demo' (tools named demo__...)\nDemo server for the agentica tests."
            )

    asyncio.run(main())


# -- failures: crash, hang, timeouts, restarts ----------------------------------------------


def test_crash_mid_call_is_an_error_then_the_server_restarts(tmp_path):
    async def main() -> None:
        async with demo(tmp_path) as mcp:
            first_pid = mcp.pid
            assert (await call(mcp, "demo__increment")).result == "1"
            crashed = await call(mcp, "demo__crash")
            assert crashed.error == (
                "Error: McpServerError: MCP server 'demo' stopped during the call: the server process exited "
                f"(its stderr is in {tmp_path / 'demo.log'}). It will be restarted on the next call."
            )
            assert mcp.status == "failed"
            assert wait_gone(first_pid)
            again = await call(mcp, "demo__increment")
            assert (again.result, again.error) == ("1", None)  # a new process: fresh state
            assert mcp.status == "ready" and mcp.restarts == 1
            assert mcp.pid not in (None, first_pid)

    asyncio.run(main())


def test_server_killed_while_idle_is_restarted_transparently(tmp_path):
    async def main() -> None:
        async with demo(tmp_path) as mcp:
            first_pid = mcp.pid
            os.kill(first_pid, 9)
            assert wait_gone(first_pid)
            done = await call(mcp, "demo__echo", {"text": "still here"})
            assert (done.result, done.error) == ("still here", None)
            assert mcp.restarts == 1 and mcp.pid != first_pid

    asyncio.run(main())


def test_failed_restart_then_unavailable_until_connect(tmp_path):
    block = tmp_path / "block-start"

    async def main() -> None:
        async with demo(tmp_path, "--fail-start-if-exists", str(block)) as mcp:
            echo = mcp.functions["demo__echo"]  # as the running agent holds it
            block.write_text("x")
            await call(mcp, "demo__crash")
            assert mcp.restart_pending
            failed = await FunctionCall(echo, "c1", {"text": "a"}).execute()
            assert failed.error is not None
            assert failed.error.startswith(
                "Error: McpServerError: MCP server 'demo' could not be restarted: the server process exited; "
                "its last stderr output:\n"
            )
            assert f"refusing to start: {block} exists" in failed.error
            assert mcp.error is not None and f"refusing to start: {block} exists" in mcp.error
            # No second automatic restart: later calls fail at once with the reason (a restart
            # would take the server through "starting" again, which the listener would see).
            states: list[str] = []
            mcp.listeners.append(lambda tool: states.append(tool.state))
            again = await FunctionCall(echo, "c2", {"text": "b"}).execute()
            assert states == []
            assert again.error is not None
            assert again.error.startswith("Error: McpServerError: MCP server 'demo' is unavailable: ")
            assert mcp.status == "failed" and not mcp.restart_pending
            assert mcp.functions == {}  # the next run offers none of its tools
            block.unlink()
            await mcp.connect()
            assert (await call(mcp, "demo__echo", {"text": "c"})).result == "c"

    asyncio.run(main())


def test_a_slow_call_times_out_but_a_responsive_server_keeps_its_session(tmp_path):
    async def main() -> None:
        async with demo(tmp_path, timeout=0.5) as mcp:
            pid = mcp.pid
            assert (await call(mcp, "demo__increment")).result == "1"
            started = time.monotonic()
            slow = await call(mcp, "demo__hang")
            assert slow.error == (
                "Error: McpServerError: MCP tool 'hang' on server 'demo' did not finish within 0.5 s "
                "and was cancelled (the server is still responding)."
            )
            assert time.monotonic() - started < 2.0
            assert (await call(mcp, "demo__increment")).result == "2"  # same session, same state
            assert mcp.pid == pid and mcp.restarts == 0

    asyncio.run(main())


def test_a_hung_server_is_stopped_and_restarted(tmp_path):
    async def main() -> None:
        async with demo(tmp_path, timeout=0.5) as mcp:
            hung_pid = mcp.pid
            started = time.monotonic()
            frozen = await call(mcp, "demo__freeze")
            elapsed = time.monotonic() - started
            assert frozen.error == (
                "Error: McpServerError: MCP server 'demo' stopped responding (no answer within "
                "0.5 s); it was stopped and will be restarted on the next call."
            )
            # call timeout 0.5 s + the probe's 5 s (a hung server answers nothing), never the SDK's own long waits
            assert 5.3 <= elapsed < 9.0
            assert wait_gone(hung_pid, timeout=1.0)
            assert (await call(mcp, "demo__echo", {"text": "back"})).result == "back"
            assert mcp.restarts == 1

    asyncio.run(main())


def test_cancelling_a_call_leaves_the_session_usable(tmp_path):
    async def main() -> None:
        async with demo(tmp_path) as mcp:
            task = asyncio.create_task(call(mcp, "demo__slow_read", {"seconds": 30}))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            started = time.monotonic()
            assert (await call(mcp, "demo__echo", {"text": "ok"})).result == "ok"
            assert time.monotonic() - started < 1.0 and mcp.restarts == 0

    asyncio.run(main())


def test_connect_failures_say_why(tmp_path):
    async def main() -> None:
        missing = McpTool("definitely-not-a-command-4711 --x", name="ghost", log_file=tmp_path / "g.log")
        with pytest.raises(McpServerError, match="command not found: definitely-not-a-command-4711"):
            await missing.connect()
        assert missing.state == "failed" and "command not found" in (missing.error or "")

        broken = demo(tmp_path, "--fail-start", "config file is missing")
        with pytest.raises(McpServerError) as info:
            await broken.connect()
        command = demo_command("--fail-start", "config file is missing")
        assert str(info.value).startswith(f"MCP server 'demo' ({command}) failed to start: ")
        assert "config file is missing" in str(info.value)
        assert broken.state == "failed"

        slow = demo(tmp_path, "--slow-start", "30", connect_timeout=0.5)
        started = time.monotonic()
        with pytest.raises(McpServerError, match=r"did not start within 0\.5 s"):
            await slow.connect()
        assert time.monotonic() - started < 2.0  # the timeout, then a kill: never the 30 s
        assert slow.state == "failed"
        # The half-started process was killed, not left behind.
        await asyncio.sleep(0.1)
        children = subprocess.run(["ps", "-o", "args=", "--ppid", str(os.getpid())], capture_output=True, text=True)
        assert "--slow-start" not in children.stdout

    asyncio.run(main())


# -- no orphan processes --------------------------------------------------------------------


def test_close_stops_the_server_process(tmp_path):
    async def main() -> int:
        mcp = demo(tmp_path)
        await mcp.connect()
        pid = int((await call(mcp, "demo__pid")).result or 0)
        assert pid == mcp.pid and not process_gone(pid)
        started = time.monotonic()
        await mcp.close()
        assert time.monotonic() - started < 2.0  # the server exits on stdin EOF: no kill needed
        return pid

    pid = asyncio.run(main())
    assert process_gone(pid)


EXIT_SCRIPT = textwrap.dedent(
    """
    import asyncio, atexit, sys, threading, time
    # registered first, so it runs last: after the tool's own exit handler stopped the server
    atexit.register(lambda: print("stopped", time.time(), flush=True))
    sys.path.insert(0, {root!r})
    from agentica_cli.tools.mcp import McpTool

    mode = sys.argv[1]
    tool = McpTool({command!r}, log_file={log!r})

    async def connect():
        await tool.connect()
        # A server busy in a call that blocks its event loop does not notice its stdin
        # closing, so only we can stop it.
        asyncio.ensure_future(tool.call_tool("freeze"))
        await asyncio.sleep(0.3)
        print(tool.pid, time.time(), flush=True)  # from here on, Python is on its way out

    if mode == "loop-ends":
        # asyncio.run() ends with the tool still connected: the loop's shutdown cancels
        # the session's owner task, whose cleanup stops the server.
        asyncio.run(connect())
    elif mode == "thread-dies":
        # The loop runs in a daemon thread that is simply dropped at exit: only the
        # atexit handler is left to stop the server.
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(connect(), loop).result()
    else:
        asyncio.run(connect())
    """
)


@pytest.mark.parametrize("mode", ["loop-ends", "thread-dies"])
def test_no_server_left_when_python_exits_without_close(tmp_path, mode):
    root = str(Path(__file__).resolve().parents[1])
    script = EXIT_SCRIPT.format(root=root, command=demo_command(), log=str(tmp_path / "x.log"))
    done = subprocess.run([PYTHON, "-c", script, mode], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    pid_text, connected_at, said, stopped_at = done.stdout.split()
    assert said == "stopped"
    assert wait_gone(int(pid_text), timeout=10.0)
    # Exit does not wait out the SDK's 2 s grace for a server that ignores its stdin closing:
    # the server is terminated at once (SIGTERM, then SIGKILL after 0.5 s at the latest). The
    # span is timed inside the process, from the last output to the end of the exit handlers.
    assert float(stopped_at) - float(connected_at) < 1.5


@pytest.mark.parametrize("busy", [False, True])
def test_no_server_left_when_the_agent_process_is_killed(tmp_path, busy):
    """SIGKILL (or a closed terminal's SIGHUP) leaves us no chance to clean up. An idle server
    sees its stdin close and exits; a busy one, whose event loop is blocked, never reads its
    stdin: the kernel's parent-death signal, set up at spawn, stops it (Linux)."""
    root = str(Path(__file__).resolve().parents[1])
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {root!r})
        from agentica_cli.tools.mcp import McpTool

        async def main():
            tool = McpTool({demo_command()!r}, log_file={str(tmp_path / "k.log")!r})
            await tool.connect()
            if {busy!r}:
                asyncio.ensure_future(tool.call_tool("freeze"))
                await asyncio.sleep(0.3)
            print(tool.pid, flush=True)
            await asyncio.sleep(60)

        asyncio.run(main())
        """
    )
    agent = subprocess.Popen([PYTHON, "-c", script], stdout=subprocess.PIPE, text=True)
    assert agent.stdout is not None
    pid = int(agent.stdout.readline())
    try:
        assert not process_gone(pid)
        agent.kill()
        agent.wait()
        assert wait_gone(pid, timeout=3.0)
    finally:
        if not process_gone(pid):  # do not leave a frozen server behind a failed test
            os.kill(pid, 9)



def test_a_session_from_another_event_loop_is_replaced_not_used(tmp_path):
    """A tool connected in one loop (a notebook's, a helper thread's) and then called from
    another gets a fresh session in the caller's loop; the old one is closed in its own."""
    import threading

    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever, daemon=True)
    thread.start()
    try:
        mcp = demo(tmp_path, include_tools=["pid"])
        asyncio.run_coroutine_threadsafe(mcp.connect(), other).result(timeout=20)
        first = mcp.pid

        async def use() -> str | None:
            done = await call(mcp, "demo__pid")
            second = int(done.result or 0)
            assert second not in (0, first)
            await mcp.close()
            return done.result

        second = int(asyncio.run(use()) or 0)
        assert wait_gone(first) and wait_gone(second)
    finally:
        other.call_soon_threadsafe(other.stop)
        thread.join(timeout=5)
