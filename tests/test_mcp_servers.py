"""McpServerSet / McpServerConfig: `[mcp_servers.NAME]` tables, parallel background start,
state, failures reported once, restart and close, with real stdio and HTTP demo servers."""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp_servers.support import DEMO_SERVER, PYTHON, HttpDemoServer, shared_http_server, wait_gone

from agentica_cli.tools.base import FunctionCall
from agentica_cli.tools.mcp.servers import McpConfigError, McpServerConfig, McpServerSet


def stdio_table(*options: str, **extra) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return {"command": PYTHON, "args": [str(DEMO_SERVER), *options], **extra}


# -- config tables ---------------------------------------------------------------------------


def test_config_from_tables():
    stdio = McpServerConfig.from_dict(
        "files",
        {
            "command": "npx",
            "args": ["-y", "files-server"],
            "env": {"ROOT": "/srv"},
            "cwd": "sub",
            "enabled": True,
            "timeout": 30,
            "include_tools": ["read"],
            "exclude_tools": ["write"],
        },
    )
    assert stdio == McpServerConfig(
        name="files",
        command="npx",
        args=["-y", "files-server"],
        env={"ROOT": "/srv"},
        cwd="sub",
        timeout=30.0,
        include_tools=["read"],
        exclude_tools=["write"],
    )
    http = McpServerConfig.from_dict("web", {"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}})
    assert (http.url, http.headers, http.transport, http.enabled) == ("http://127.0.0.1:1/mcp", {"A": "b"}, None, True)
    tool = http.build_tool()
    assert (tool.name, tool.transport, tool.managed) == ("web", "streamable-http", False)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"command": "x", "comand": "y"}, "mcp_servers.s: unknown key 'comand'"),
        ({"command": 3}, "mcp_servers.s.command must be a string, got 3"),
        ({"command": "x", "args": "a b"}, "mcp_servers.s.args must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "mcp_servers.s.env must be a table of strings"),
        ({"command": "x", "enabled": "yes"}, "mcp_servers.s.enabled must be true or false"),
        ({"command": "x", "timeout": 0}, "mcp_servers.s.timeout must be a positive number of seconds"),
        ({}, "set either 'command' (stdio) or 'url'"),
        ({"command": "x", "url": "http://127.0.0.1/mcp"}, "set either 'command' (stdio) or 'url'"),
        ({"url": "http://127.0.0.1/mcp", "args": ["a"]}, "mcp_servers.s.args applies to a 'command' server"),
        ({"command": "x", "headers": {"A": "b"}}, "'headers' and HTTP transports need 'url'"),
        ({"url": "http://127.0.0.1/mcp", "transport": "grpc"}, "mcp_servers.s.transport must be one of"),
    ],
)
def test_bad_tables_name_the_key(table, message):
    with pytest.raises(McpConfigError) as info:
        McpServerConfig.from_dict("s", table)
    assert message in str(info.value)


def test_env_and_header_values_may_name_our_environment_variables(monkeypatch):
    monkeypatch.setenv("DEMO_TOKEN", "t-123")
    config = McpServerConfig.from_dict(
        "s", {"url": "http://127.0.0.1/mcp", "headers": {"Authorization": "Bearer ${DEMO_TOKEN}"}}
    )
    assert dict(config.build_tool().target.headers) == {"Authorization": "Bearer t-123"}
    monkeypatch.delenv("DEMO_TOKEN")
    with pytest.raises(McpConfigError, match=r"mcp_servers\.s\.headers\.Authorization refers to \$\{DEMO_TOKEN\}"):
        config.build_tool()


# -- the set --------------------------------------------------------------------------------


def test_start_in_parallel_in_the_background_and_report_failures_once(tmp_path):
    changes: list[tuple[str, str]] = []
    when: dict[tuple[str, str], float] = {}

    def changed(status) -> None:  # type: ignore[no-untyped-def]
        changes.append((status.name, status.state))
        when.setdefault((status.name, status.state), time.monotonic())

    async def main() -> None:
        tables = {
            "one": stdio_table("--slow-start", "1.0"),
            "two": stdio_table("--slow-start", "1.0", include_tools=["echo"]),
            "broken": stdio_table("--fail-start", "no database configured"),
            "off": stdio_table(enabled=False),
        }
        servers = McpServerSet.from_tables(tables, log_dir=tmp_path, on_change=changed)
        assert [t.name for t in servers.tools] == ["one", "two", "broken"]
        servers.start()
        # Never delays the first prompt: it returns with the servers still on their way up (each
        # sleeps 1 s before serving), not once they are ready.
        assert {s.name: s.state for s in servers.statuses()}["one"] != "ready"
        assert await servers.wait_ready(timeout=20)
        try:
            by_name = {s.name: s for s in servers.statuses()}
            assert by_name["one"].state == "ready" and by_name["two"].state == "ready"
            assert by_name["two"].tools == ("two__echo",)
            assert "one__add" in by_name["one"].tools and by_name["one"].pid is not None
            assert by_name["one"].log_path == tmp_path / "one.log"
            assert by_name["off"].state == "disabled" and by_name["off"].tools == ()
            broken = by_name["broken"]
            assert broken.state == "failed" and broken.tools == ()
            assert broken.error is not None and "no database configured" in broken.error
            assert broken.error.startswith("the server process exited; its last stderr output:")
            # Two servers that each sleep 1 s before serving start together: both were
            # starting before either was ready, and they got ready within 1 s of each other
            # (one after the other, the second would need its whole 1 s sleep plus its ~0.7 s
            # SDK import more).
            assert max(when["one", "starting"], when["two", "starting"]) < min(
                when["one", "ready"], when["two", "ready"]
            )
            assert abs(when["one", "ready"] - when["two", "ready"]) < 1.0
            assert (broken.ever_ready, by_name["one"].ever_ready) == (False, True)
            assert [s.name for s in servers.new_failures()] == ["broken"]
            assert servers.new_failures() == []  # reported once
            assert [t.name for t in servers.ready_tools()] == ["one", "two"]
            assert [t.name for t in servers.usable_tools()] == ["one", "two"]  # a failed start is out
            done = await FunctionCall(servers.tools[0].functions["one__add"], "c", {"a": 1, "b": 1}).execute()
            assert done.result == "2"
            pids = [by_name["one"].pid, by_name["two"].pid]
        finally:
            await servers.close()
        assert all(wait_gone(pid) for pid in pids)
        assert {s.state for s in servers.statuses()} == {"closed", "disabled"}

    asyncio.run(main())
    assert ("one", "starting") in changes and ("one", "ready") in changes
    assert ("broken", "failed") in changes and ("off", "ready") not in changes


def test_managed_tools_are_left_to_the_set(tmp_path):
    async def main() -> None:
        servers = McpServerSet.from_tables({"s": stdio_table(include_tools=["echo"])}, log_dir=tmp_path)
        (tool,) = servers.tools
        assert tool.managed
        await tool.connect()  # what the Agent does before a run: a no-op for a managed tool
        assert tool.state == "idle" and tool.functions == {}
        async with servers:
            await servers.wait_ready()
            assert tool.state == "ready" and list(tool.functions) == ["s__echo"]
        assert tool.state == "closed"

    asyncio.run(main())


def test_restart_one_server_and_close_while_starting(tmp_path):
    async def main() -> None:
        servers = McpServerSet.from_tables(
            {"a": stdio_table(include_tools=["pid"]), "slow": stdio_table("--slow-start", "30")}, log_dir=tmp_path
        )
        servers.start()
        while servers.status("slow").state != "starting":  # wait on the state, not a guessed sleep
            await asyncio.sleep(0.01)
        while servers.status("a").state != "ready":
            await asyncio.sleep(0.05)
        first = servers.status("a").pid
        status = await servers.restart("a")
        assert status.state == "ready" and status.pid not in (None, first)
        assert wait_gone(first)
        assert servers.status("slow").state == "starting"
        started = time.monotonic()
        await servers.close()  # the slow one is still starting: it is stopped, not waited for
        assert time.monotonic() - started < 20  # far under its 30 s sleep, however busy the machine
        assert servers.status("slow").state == "closed"
        assert wait_gone(status.pid)

    asyncio.run(main())


def test_a_config_that_cannot_build_its_tool_is_a_failed_server(tmp_path, monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)

    async def main() -> None:
        servers = McpServerSet.from_tables(
            {"needs_secret": stdio_table(env={"TOKEN": "${NOT_SET_ANYWHERE}"})}, log_dir=tmp_path
        )
        assert servers.tools == []
        servers.start()
        (status,) = servers.new_failures()
        assert status.state == "failed"
        assert status.error == (
            "mcp_servers.needs_secret.env.TOKEN refers to ${NOT_SET_ANYWHERE}, which is not set in the environment"
        )
        await servers.close()

    asyncio.run(main())


def test_http_servers_in_the_set(tmp_path):
    async def main(server: HttpDemoServer) -> None:
        tables = {
            "sse": {"url": server.url("/sse"), "include_tools": ["echo"]},
            "http": {"url": server.url("/mcp"), "transport": "http", "include_tools": ["echo"]},
        }
        async with McpServerSet.from_tables(tables, log_dir=tmp_path) as servers:
            assert await servers.wait_ready(timeout=10)
            assert [(s.name, s.state, s.transport, s.tools) for s in servers.statuses()] == [
                ("sse", "ready", "sse", ("sse__echo",)),
                ("http", "ready", "streamable-http", ("http__echo",)),
            ]

    asyncio.run(main(shared_http_server()))


def test_a_crash_after_start_is_visible_in_the_set(tmp_path):
    seen: list[tuple[str, bool, int]] = []

    async def main() -> None:
        servers = McpServerSet.from_tables(
            {"s": stdio_table(include_tools=["crash", "echo"])},
            log_dir=tmp_path,
            on_change=lambda st: seen.append((st.state, st.ever_ready, st.restarts)),
        )
        async with servers:
            await servers.wait_ready()
            (tool,) = servers.tools
            crashed = await FunctionCall(tool.functions["s__crash"], "c1", {}).execute()
            assert crashed.error is not None and "will be restarted on the next call" in crashed.error
            status = servers.status("s")
            assert (status.state, status.ever_ready, status.tools) == ("failed", True, ())
            assert status.error == f"the server process exited (its stderr is in {tmp_path / 's.log'})"
            assert [f.name for f in servers.new_failures()] == ["s"]
            # Not ready, but still offered: the next call is what restarts it.
            assert servers.ready_tools() == [] and servers.usable_tools() == [tool]
            echoed = await FunctionCall(tool.functions["s__echo"], "c2", {"text": "back"}).execute()
            assert echoed.result == "back"
            assert (servers.status("s").state, servers.status("s").restarts) == ("ready", 1)
            assert servers.usable_tools() == [tool]

    asyncio.run(main())
    assert seen[:2] == [("starting", False, 0), ("ready", True, 0)]
    assert seen[2:] == [("failed", True, 0), ("starting", True, 0), ("ready", True, 1), ("closed", True, 1)]


def test_a_server_is_ready_once_its_prompts_are_listed(tmp_path):
    """Between the connection and the prompts' listing (slow under load) a server is still
    starting: /mcp never shows it ready without its prompts' slash commands, and on_change says
    "ready" once, with them."""
    told: list[tuple[str, list[str]]] = []
    features = DEMO_SERVER.parent / "features_server.py"

    async def main() -> None:
        table = {"command": PYTHON, "args": [str(features)], "protocol": "legacy"}
        servers = McpServerSet.from_tables(
            {"feat": table}, log_dir=tmp_path,
            on_change=lambda st: told.append((st.state, list(servers.prompt_commands()))))
        (tool,) = servers.tools
        listing, release = asyncio.Event(), asyncio.Event()
        list_prompts = tool.list_prompts

        async def held_list_prompts():  # type: ignore[no-untyped-def]
            listing.set()
            await release.wait()
            return await list_prompts()

        tool.list_prompts = held_list_prompts  # type: ignore[method-assign]
        async with servers:
            await asyncio.wait_for(listing.wait(), 60)
            assert tool.status == "ready"  # connected, its tools listed
            status = servers.status("feat")
            assert (status.state, status.tools, servers.prompt_commands()) == ("starting", (), {})
            release.set()
            assert await servers.wait_ready(timeout=30)
            assert servers.status("feat").state == "ready"
            assert list(servers.prompt_commands()) == ["mcp__feat__review"]

    asyncio.run(main())
    assert told[0] == ("starting", []) and told.count(("starting", [])) == len(told) - 2
    assert told[-2:] == [("ready", ["mcp__feat__review"]), ("closed", [])]
