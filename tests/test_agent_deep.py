"""DeepAgent with the builtin tools, and an McpTool connected by the loop, over real HTTP."""

from __future__ import annotations

import asyncio

from conftest import scripted_model
from mcp_servers.support import demo_command

from agentica_cli.agent import Agent, Decision, DeepAgent
from agentica_cli.agent.deep import CODING_AGENT_PROMPT
from agentica_cli.testing import tool_call_problems, turns
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
    for body in server.requests:
        assert tool_call_problems(body["messages"]) == []


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
