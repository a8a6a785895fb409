"""MCP client features against a real stdio server (tests/mcp_servers/features_server.py):
tools/list_changed, task-required tools, progress, elicitation, sampling (answered by the
scripted model), roots, prompts and resources."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import scripted_model
from mcp_servers.support import HERE, PYTHON

from agentica_cli.agent import Agent
from agentica_cli.agent.events import ToolOutput
from agentica_cli.models.base import ModelError
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp import McpTool
from agentica_cli.tools.mcp.client_features import (
    ElicitAnswer,
    ElicitRequest,
    McpClientHandlers,
    SamplingRequest,
    coerce_form_value,
)

FEATURES = str(HERE / "features_server.py")


def features(tmp_path: Path, handlers: McpClientHandlers | None = None, **kwargs) -> McpTool:  # type: ignore[no-untyped-def]
    return McpTool(PYTHON, args=[FEATURES], name="feat", protocol="legacy", handlers=handlers,
                   log_file=tmp_path / "feat.log", **kwargs)


def offered(body: dict) -> list[str]:  # type: ignore[type-arg]
    return [t["function"]["name"] for t in body.get("tools") or ()]


def test_list_changed_changes_the_tools_of_the_next_request_and_task_tools_are_left_out(tmp_path: Path) -> None:
    server = ScriptedModelServer([
        turns.tool_calls(turns.call("feat__unlock", {}, id="u")),
        turns.tool_calls(turns.call("feat__secret", {}, id="s")),
        turns.text("done"),
    ]).start()

    async def main() -> None:
        async with features(tmp_path) as mcp:
            assert "research" in mcp.left_out and "feat__research" not in mcp.functions
            agent = Agent(scripted_model(server), tools=[mcp])
            assert (await agent.run("unlock it")).content == "done"

    try:
        asyncio.run(main())
    finally:
        server.stop()
    first, second, _ = (offered(r) for r in server.requests)
    assert "feat__secret" not in first and "feat__research" not in first
    assert "feat__secret" in second  # the same run's next request
    assert [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"][-1] == "the secret is 42"


def test_progress_is_shown_on_the_running_call(tmp_path: Path) -> None:
    server = ScriptedModelServer([turns.tool_calls(turns.call("feat__count", {}, id="c")), turns.text("ok")]).start()

    async def main() -> list:  # type: ignore[type-arg]
        async with features(tmp_path) as mcp:
            agent = Agent(scripted_model(server), tools=[mcp])
            return [e async for e in agent.run_stream("count")]

    try:
        events = asyncio.run(main())
    finally:
        server.stop()
    lines = [e.text.strip() for e in events if isinstance(e, ToolOutput) and e.call_id == "c"]
    assert lines == ["[progress 1/3] step 1", "[progress 2/3] step 2", "[progress 3/3] step 3"]


def test_elicitation_answered_declined_and_without_a_handler(tmp_path: Path) -> None:
    asked: list[ElicitRequest] = []

    async def accept(request: ElicitRequest) -> ElicitAnswer:
        asked.append(request)
        return ElicitAnswer("accept", {"name": "Ada", "age": 36})

    async def decline(request: ElicitRequest) -> ElicitAnswer:
        return ElicitAnswer("decline")

    async def main() -> tuple[str, str]:
        async with features(tmp_path, McpClientHandlers(elicit=accept)) as mcp:
            yes = await mcp.call_tool("register")
        async with features(tmp_path, McpClientHandlers(elicit=decline)) as mcp:
            no = await mcp.call_tool("register")
        return yes, no

    yes, no = asyncio.run(main())
    assert yes == "registered Ada, 36" and no == "not registered (decline)"
    assert asked[0].message == "Who are you?" and asked[0].required == ["name", "age"]
    assert asked[0].properties["age"]["type"] == "integer"
    assert coerce_form_value({"type": "integer"}, " 36 ") == 36
    assert coerce_form_value({"type": "boolean"}, "yes") is True
    with pytest.raises(ValueError):
        coerce_form_value({"type": "string", "enum": ["a", "b"]}, "c")


def test_sampling_goes_to_the_scripted_model_after_approval_with_limits(tmp_path: Path) -> None:
    server = ScriptedModelServer([turns.text("leaves fall softly")]).start()
    model = scripted_model(server)
    seen: list[SamplingRequest] = []

    async def approve_and_sample(request: SamplingRequest) -> str | None:
        seen.append(request)
        messages = [{"role": role, "content": text} for role, text in request.messages]
        return (await model.response(messages, None)).content

    async def refuse(request: SamplingRequest) -> str | None:
        return None

    async def main() -> tuple[str, str]:
        async with features(tmp_path, McpClientHandlers(sample=approve_and_sample)) as mcp:
            ok = await mcp.call_tool("haiku", {"topic": "autumn"})
        async with features(tmp_path, McpClientHandlers(sample=refuse)) as mcp:
            try:
                refused = await mcp.call_tool("haiku", {"topic": "autumn"})
            except Exception as exc:  # the server's tool fails: its error names the refusal
                refused = str(exc)
        return ok, refused

    try:
        ok, refused = asyncio.run(main())
    finally:
        server.stop()
    assert ok == "model wrote: leaves fall softly"
    assert "declined" in refused
    assert seen[0].messages == [("user", "A haiku about autumn")]
    assert seen[0].max_tokens == 4096  # the server asked for 100,000
    assert server.requests[0]["messages"][-1]["content"] == "A haiku about autumn"
    assert ModelError  # the model's own failures would reach the server as a sampling error


def test_roots_prompts_and_resources(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    server = ScriptedModelServer([
        turns.tool_calls(turns.call("feat__list_resources", {}, id="l"),
                         turns.call("feat__read_resource", {"uri": "demo://readme"}, id="r")),
        turns.text("read"),
    ]).start()

    async def main() -> None:
        async with features(tmp_path, McpClientHandlers(roots=[tmp_path, extra])) as mcp:
            roots = await mcp.call_tool("list_roots")
            assert roots.splitlines() == [tmp_path.resolve().as_uri(), extra.resolve().as_uri()]
            prompts = await mcp.list_prompts()
            assert [(p.name, [(a.name, a.required) for a in p.arguments]) for p in prompts] == [
                ("review", [("file", True), ("focus", False)])]
            assert await mcp.get_prompt("review", {"file": "a.py"}) == [
                ("user", "Please review a.py, looking for bugs.")]
            assert await mcp.read_resource("demo://notes/cats") == "notes about cats"
            agent = Agent(scripted_model(server), tools=[mcp])
            await agent.run("what is there?")

    try:
        asyncio.run(main())
    finally:
        server.stop()
    results = {m["tool_call_id"]: m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"}
    assert results["l"].splitlines() == ["demo://readme  readme (text/plain): The project readme.",
                                         "demo://notes/{topic}  note (template)"]
    assert results["r"] == "README: the demo project"


def test_after_run_sync_the_tool_no_longer_says_ready(tmp_path: Path) -> None:
    """run_sync's event loop ends with the run, and the server with it: the state says so."""
    from mcp_servers.support import demo_command, wait_gone

    server = ScriptedModelServer([turns.text("hi"), turns.text("again")]).start()
    tool = McpTool(demo_command(), name="demo", log_file=tmp_path / "demo.log")
    pids: list[int] = []
    tool.listeners.append(lambda t: pids.append(t.pid) if t.state == "ready" and t.pid else None)
    try:
        agent = Agent(scripted_model(server), tools=[tool])
        assert agent.run_sync("hello").content == "hi"
        assert tool.state == "failed" and tool.pid is None
        assert pids and wait_gone(pids[0])
        assert agent.run_sync("once more").content == "again"  # the next run connects again
        assert len(pids) == 2 and pids[1] != pids[0]
    finally:
        server.stop()
