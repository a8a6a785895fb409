"""DeepAgent with the builtin tools, and an McpTool connected by the loop, over real HTTP."""

from __future__ import annotations

import asyncio

from conftest import scripted_model
from mcp_servers.support import demo_command

from agentica_cli.agent import Agent, Decision
from agentica_cli.deep import CODING_AGENT_PROMPT, DeepAgent
from agentica_cli.testing import turns
from agentica_cli.tools.mcp import McpTool


def test_deep_agent_reads_and_edits_with_the_builtin_tools(scripted, tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    asked = []

    def approve(call):
        asked.append(call.name)
        return Decision.allow()

    server = scripted(
        turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "calc.py", "old_string": "a - b",
                                                  "new_string": "a + b"}, id="e")),
        turns.text("Fixed add()."),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, exclude_tools=("task",), approve=approve,
                      instructions="Project rule: keep it simple.")
    assert {"read_file", "write_file", "edit_file", "glob", "grep", "execute", "write_todos"} <= set(agent.functions)
    result = agent.run_sync("fix add")
    assert result.content == "Fixed add()."
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert asked == ["edit_file"]
    read_result = server.requests[1]["messages"][-1]["content"]
    assert "return a - b" in read_result
    system = server.requests[0]["messages"][0]["content"]
    assert system.startswith(CODING_AGENT_PROMPT + "\n\nProject rule: keep it simple.")
    assert f"- Working directory: {tmp_path.resolve()} (relative paths resolve against it)." in system


def test_an_unconnected_mcp_tool_is_connected_before_the_first_request(scripted, tmp_path):
    server = scripted(turns.tool_calls(turns.call("demo__echo", {"text": "hello mcp"}, id="m")), turns.text("ok"))
    mcp = McpTool(demo_command(), name="demo", log_file=tmp_path / "demo.log")
    agent = Agent(scripted_model(server), tools=[mcp])

    async def main():
        try:
            return await agent.run("echo")
        finally:
            await mcp.close()

    result = asyncio.run(main())
    assert result.content == "ok"
    assert "demo__echo" in [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert server.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "m", "content": "hello mcp"}


def test_task_sub_agent_events_reach_the_parent_stream_marked_as_its_own(scripted, tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    server = scripted(
        turns.tool_calls(turns.call("task", {"description": "inspect calc", "prompt": "What does calc.py define?"},
                                    id="t1")),
        turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r1")),
        turns.text("calc.py defines add(a, b)."),
        turns.text("The project has one function, add."),
    )
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path)

    async def main():
        return [event async for event in agent.run_stream("what is in the project?")]

    events = asyncio.run(main())
    assert events[-1].content == "The project has one function, add." and events[-1].source == ""
    sub = [e for e in events if e.source == "task:t1"]
    assert [e.type for e in sub if e.type not in ("text_delta", "usage")] == [
        "turn_started", "model_request_started", "tool_call_started", "tool_call_finished",
        "model_request_started", "turn_finished"]
    assert next(e for e in sub if e.type == "tool_call_started").name == "read_file"
    assert sub[-1].content == "calc.py defines add(a, b)."
    # the sub-agent's events arrive while the task call runs, between its start and finish
    kinds = [(e.type, e.source) for e in events]
    assert kinds.index(("tool_call_started", "")) < kinds.index(("turn_started", "task:t1"))
    assert kinds.index(("turn_finished", "task:t1")) < kinds.index(("tool_call_finished", ""))
    sub_request = server.requests[1]["messages"]
    assert sub_request[1] == {"role": "user", "content": "What does calc.py define?"}
    assert "task" not in [t["function"]["name"] for t in server.requests[1]["tools"]]
    assert server.requests[3]["messages"][-1] == {"role": "tool", "tool_call_id": "t1",
                                                  "content": "calc.py defines add(a, b)."}


def test_an_mcp_server_that_cannot_start_costs_its_tools_not_the_run(scripted, tmp_path):
    server = scripted(turns.text("answered without MCP"))
    mcp = McpTool(str(tmp_path / "no-such-server"), name="broken", log_file=tmp_path / "broken.log")
    agent = Agent(scripted_model(server), tools=[mcp])

    async def main():
        try:
            return [event async for event in agent.run_stream("hi")]
        finally:
            await mcp.close()

    events = asyncio.run(main())
    notices = [e for e in events if e.type == "notice"]
    assert len(notices) == 1 and notices[0].kind == "warning"
    assert notices[0].message.startswith("Tool 'broken' could not connect (")
    assert notices[0].message.endswith("continuing without its tools.")
    assert events[-1].type == "turn_finished" and events[-1].content == "answered without MCP"
    assert "tools" not in server.requests[0]


def test_work_dir_and_allowed_dirs_expand_the_home_folder(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "proj").mkdir()
    (tmp_path / "lib").mkdir()
    server = scripted(turns.text("ok"))
    agent = DeepAgent(scripted_model(server), work_dir="~/proj", allowed_dirs=["~/lib"], exclude_tools=("task",))
    assert agent.work_dir == (tmp_path / "proj").resolve()
    assert agent.allowed_dirs == ((tmp_path / "lib").resolve(),)
    agent.run_sync("hi")
    system = server.requests[0]["messages"][0]["content"]
    assert f"Working directory: {(tmp_path / 'proj').resolve()} " in system
    assert str((tmp_path / "lib").resolve()) in system
