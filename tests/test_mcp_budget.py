"""The result budget (every tool, here an MCP one returning 3 MB), null for optional
parameters, and a context-length refusal: against the scripted model on 127.0.0.1 and
the real stdio demo server."""

from __future__ import annotations

import asyncio
import json
import re
import stat
from pathlib import Path

from conftest import scripted_model
from mcp_servers.support import demo_command

from agentica_cli.agent import Agent, ToolConfig
from agentica_cli.agent.events import Error, Notice
from agentica_cli.deep import DeepAgent
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp import McpTool

LINES = 50_000  # x 60 characters: a 3 MB result


def tool_messages(body: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def saved_path(text: str) -> str:
    match = re.search(r"saved to (\S+\.txt)", text)
    assert match, text[:500]
    return match.group(1)


def test_a_3mb_mcp_result_is_saved_and_paged_with_read_file(tmp_path: Path) -> None:
    """The model gets head, tail and a path; the next request stays small; read_file pages
    through the saved file; `null` for the optional `width` takes its default."""

    def read_page(body: dict) -> dict:  # type: ignore[type-arg]
        path = saved_path(tool_messages(body)[-1])
        return turns.tool_calls(turns.call("read_file", {"file_path": path, "offset": 25_000, "limit": 2}, id="r"))

    server = ScriptedModelServer([
        turns.tool_calls(turns.call("demo__big_text", {"lines": LINES, "width": None}, id="big")),
        read_page,
        turns.text("done"),
    ]).start()
    results = tmp_path / "session" / "tool-results"

    async def main() -> None:
        async with McpTool(demo_command(), name="demo", include_tools=["big_text"],
                           log_file=tmp_path / "demo.log") as mcp:
            agent = DeepAgent(scripted_model(server), work_dir=tmp_path, tools=[mcp],
                              tool_config=ToolConfig(result_dir=str(results)))
            result = await agent.run("read the big one")
            assert result.content == "done"

    try:
        asyncio.run(main())
    finally:
        server.stop()
    second, third = server.requests[1], server.requests[2]
    preview = tool_messages(second)[-1]
    assert len(json.dumps(second)) < 60_000  # not the 3 MB
    assert preview.startswith("[Result too large for the context (3,")
    assert "00000001 xxx" in preview and f"{LINES:08d} xxx" in preview  # head and tail
    path = Path(saved_path(preview))
    assert path.parent == results
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(results.stat().st_mode) == 0o700
    saved = path.read_text()
    assert len(saved) == LINES * 61 - 1 and saved.endswith(f"{LINES:08d} " + "x" * 51)
    page = tool_messages(third)[-1]
    assert "00025000 xxx" in page and "00025001 xxx" in page and "00025002 xxx" not in page, page[:300]


def test_small_results_and_a_disabled_budget_are_untouched(tmp_path: Path) -> None:
    def echo(text: str) -> str:
        """Echo."""
        return text

    big = "y" * 200_000
    server = ScriptedModelServer([
        turns.tool_calls(turns.call("echo", {"text": big}, id="a")),
        turns.text("ok"),
        turns.tool_calls(turns.call("echo", {"text": big}, id="b")),
        turns.text("ok"),
    ]).start()
    try:
        off = Agent(scripted_model(server), tools=[echo], tool_config=ToolConfig(max_result_tokens=None))
        off.run_sync("go")
        on = Agent(scripted_model(server), tools=[echo])  # the default budget, 25k tokens
        on.run_sync("go")
    finally:
        server.stop()
    assert tool_messages(server.requests[1])[-1] == big
    bounded = tool_messages(server.requests[3])[-1]
    assert bounded.startswith("[Result too large") and len(bounded) < 12_000
    assert Path(saved_path(bounded)).read_text() == big  # a temporary folder for a library agent


def test_a_context_length_refusal_compacts_and_retries_once(tmp_path: Path) -> None:
    history = []
    for i in range(6):
        history += [{"role": "user", "content": f"question {i} " + "q" * 2000},
                    {"role": "assistant", "content": f"answer {i}"}]
    refusal = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."
    server = ScriptedModelServer([
        turns.error(400, refusal),
        turns.text("SUMMARY of the earlier questions"),
        turns.text("the answer"),
    ]).start()
    try:
        agent = Agent(scripted_model(server), messages=list(history))
        events = asyncio.run(_events(agent, "and now?"))
    finally:
        server.stop()
    assert [type(e).__name__ for e in events if isinstance(e, Error)] == []
    assert any(isinstance(e, Notice) and e.kind == "compaction" for e in events)
    refused, retried = server.requests[0], server.requests[2]
    assert len(json.dumps(retried)) < len(json.dumps(refused)) / 2
    assert "SUMMARY of the earlier questions" in json.dumps(retried)
    assert agent.messages[-1]["content"] == "the answer"


def test_a_refusal_that_cannot_be_compacted_is_a_clear_error_and_the_next_run_compacts_first() -> None:
    refusal = "prompt is too long: 300000 tokens > 200000 maximum"
    server = ScriptedModelServer([
        turns.error(400, refusal),       # nothing older to summarise yet: a clear error
        turns.text("SUMMARY"),           # the next run compacts before it sends anything
        turns.text("fine now"),
    ]).start()
    try:
        agent = Agent(scripted_model(server), tool_config=ToolConfig(compact_keep_messages=1))
        events = asyncio.run(_events(agent, "x" * 5000))
        errors = [e for e in events if isinstance(e, Error)]
        assert len(errors) == 1 and errors[0].kind == "context_length"
        assert "too long for the model's context" in errors[0].message and "/compact" in errors[0].message
        second = asyncio.run(_events(agent, "short question"))
    finally:
        server.stop()
    assert not [e for e in second if isinstance(e, Error)]
    assert len(server.requests) == 3
    summary_request = json.dumps(server.requests[1])
    assert "Summarise this conversation" in summary_request
    assert "x" * 5000 not in json.dumps(server.requests[2])  # the refused request was not sent again
    assert agent.messages[-1]["content"] == "fine now"


async def _events(agent: Agent, prompt: str) -> list:  # type: ignore[type-arg]
    return [event async for event in agent.run_stream(prompt)]


def test_null_for_an_optional_parameter_takes_its_default() -> None:
    from agentica_cli.tools.base import Function, FunctionCall

    def repeat(text: str, times: int = 2, sep: str | None = "-") -> str:
        """Repeat."""
        return (sep or "").join([text] * times)

    call = FunctionCall(Function.from_callable(repeat), "1", {"text": "a", "times": None, "sep": None})
    asyncio.run(call.execute())
    assert (call.result, call.error) == ("a-a", None)
    required = FunctionCall(Function.from_callable(repeat), "2", {"text": None})
    asyncio.run(required.execute())
    assert required.error and "text" in required.error


def test_a_long_result_line_reaches_the_sdk_reader_whole_not_in_pipe_sized_pieces(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    """The SDK's stdio reader joins its unfinished line to every chunk and splits it all
    again: fed 64 KB pieces of one 12 MB message it did that ~190 times over a growing
    string (quadratic: a 50 MB result took 105 s). Its stdout now hands it whole lines
    only, so the joins are of nothing; bench/bench_mcp_result.py has the timings."""
    from anyio.streams.text import TextReceiveStream

    chunks: list[tuple[int, bool]] = []
    receive = TextReceiveStream.receive

    async def recording(self):  # type: ignore[no-untyped-def]
        text = await receive(self)
        chunks.append((len(text), text.endswith("\n")))
        return text

    monkeypatch.setattr(TextReceiveStream, "receive", recording)
    lines = 100_000  # 6.1 MB of text; the JSON line carries it twice (content and structuredContent)

    async def main() -> str:
        async with McpTool(demo_command(), name="demo", include_tools=["big_text"],
                           log_file=tmp_path / "demo.log") as mcp:
            return await mcp.functions["demo__big_text"].entrypoint(lines=lines)

    text = asyncio.run(main())
    assert len(text) == lines * 61 - 1 and text.endswith(f"{lines:08d} " + "x" * 51)
    big = [c for c in chunks if c[0] > 1_000_000]
    assert len(big) == 1 and big[0][1], chunks[:10]  # the whole message at once, ending at its newline
    assert all(ends for _, ends in chunks), "a chunk ended inside a line: the reader re-joins a growing buffer"
