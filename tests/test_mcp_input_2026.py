"""Elicitation, sampling and roots on the 2026-07-28 protocol path. There a server may not send
requests of its own: a tool that needs input returns an `InputRequiredResult` and the client
calls again with the answers (multi-round trip). The server is tests/mcp_servers/input_server.py
(`Resolve(...)` parameters); the client side is the same handlers as on the 2025 path: the
library, the REPL form through a pseudo-terminal, and -p declining."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pexpect
import pytest
from cli_support import model_args, run_cli, tool_results
from conftest import scripted_model
from mcp_repl_support import spawn_repl, wait_until_server_ready
from mcp_servers.support import HERE, PYTHON

from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp import McpTool, McpToolError
from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, McpClientHandlers, SamplingRequest

INPUT = str(HERE / "input_server.py")
ERA = "2026-07-28"


def test_library_handlers_answer_input_required_results(tmp_path: Path) -> None:
    model_server = ScriptedModelServer([turns.text("leaves fall softly")]).start()
    model = scripted_model(model_server)
    forms: list[ElicitRequest] = []
    samples: list[SamplingRequest] = []
    elicit_answers = [ElicitAnswer("accept", {"name": "Ada", "age": 36}), ElicitAnswer("decline")]
    approvals = [True, False]

    async def elicit(request: ElicitRequest) -> ElicitAnswer:
        forms.append(request)
        return elicit_answers.pop(0)

    async def sample(request: SamplingRequest) -> str | None:
        samples.append(request)
        if not approvals.pop(0):
            return None
        messages = [{"role": role, "content": text} for role, text in request.messages]
        return (await model.response(messages, None)).content

    async def main() -> list[str]:
        handlers = McpClientHandlers(roots=[tmp_path], elicit=elicit, sample=sample)
        async with McpTool(PYTHON, args=[INPUT], name="input", handlers=handlers, log_file=tmp_path / "i.log") as mcp:
            assert mcp._connection is not None and mcp._connection.modern
            out = [await mcp.call_tool("register"), await mcp.call_tool("register"),
                   await mcp.call_tool("haiku", {"topic": "autumn"}), await mcp.call_tool("list_roots")]
            with pytest.raises(McpToolError) as refused:
                await mcp.call_tool("haiku", {"topic": "rain"})
            return [*out, str(refused.value)]

    try:
        accepted, declined, haiku, roots, refused = asyncio.run(main())
    finally:
        model_server.stop()
    assert accepted == f"registered Ada, 36 ({ERA})"
    assert declined == f"not registered (decline, {ERA})"
    assert forms[0].message == "Who are you?" and forms[0].required == ["name", "age"]
    assert haiku == "model wrote: leaves fall softly"
    assert samples[0].messages == [("user", "A haiku about autumn")] and samples[0].max_tokens == 4096
    assert model_server.requests[0]["messages"][-1]["content"] == "A haiku about autumn"
    assert "tools" not in model_server.requests[0]
    assert roots == tmp_path.resolve().as_uri()
    assert "declined the sampling request" in refused
    assert len(model_server.requests) == 1  # the refused request never reached the model


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".agentica").mkdir(parents=True)
    (path / ".agentica" / "config.toml").write_text(  # protocol "auto": 2026 with this server
        f'[mcp_servers.input]\ncommand = "{sys.executable}"\nargs = ["{INPUT}"]\n')
    return path


def wait_until_ready(child: pexpect.spawn) -> None:
    wait_until_server_ready(child, "input", tries=120)
    child.expect("❯")


def test_repl_form_and_sampling_approval_on_the_2026_path(home: Path, project: Path) -> None:
    script = [
        turns.tool_calls(turns.call("input__register", {}, id="r1")),
        turns.text("You are registered."),
        turns.tool_calls(turns.call("input__haiku", {"topic": "autumn"}, id="h1")),
        turns.text("leaves fall softly"),  # the sampling request, after the user said yes
        turns.text("Here is your haiku."),
    ]
    with ScriptedModelServer(script) as server:
        child = spawn_repl(home, project, server, "--yes", timeout=30)
        try:
            child.expect("❯")
            wait_until_ready(child)
            child.send("register me\r")
            child.expect("MCP server 'input' asks: Who are you?")
            child.expect("Name")
            child.send("Ada\r")
            child.expect("Age")
            child.send("36\r")
            child.expect("You are registered.")
            child.expect("❯")
            child.send("a haiku please\r")
            child.expect("MCP server 'input' wants to ask the model")
            child.expect("A haiku about autumn")
            child.send("y")
            child.expect("Here is your haiku.")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    requests = server.requests
    assert tool_results(requests[1])["r1"] == f"registered Ada, 36 ({ERA})"
    assert requests[3]["messages"][-1]["content"] == "A haiku about autumn"
    assert tool_results(requests[4])["h1"] == "model wrote: leaves fall softly"


def test_print_mode_declines_on_the_2026_path(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("input__register", {}, id="r1"),
                               turns.call("input__haiku", {"topic": "x"}, id="h1")), turns.text("ok")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "register me", "--trust", "--yes", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    assert "agentica: MCP server 'input' asked for input (Who are you?); declined: -p cannot ask" in proc.stderr
    assert "agentica: MCP server 'input' asked to use the model; declined" in proc.stderr
    results = tool_results(server.requests[1])
    assert results["r1"] == f"not registered (decline, {ERA})"
    assert "declined the sampling request" in results["h1"]
    assert len(server.requests) == 2
