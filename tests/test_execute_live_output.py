"""execute's live output: ToolOutput events while the command runs, throttled, through the
agent's stream; the result the model gets is unchanged."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from builtin_support import call_tool
from conftest import collect, scripted_model

from agentica_cli.agent import Agent
from agentica_cli.agent.events import ToolCallFinished, ToolOutput
from agentica_cli.testing import turns
from agentica_cli.tools.context import ToolContext
from builtin_tools import BuiltinExecuteTool


def _run_collecting(tmp_path: Path, command: str) -> tuple[str, list[tuple[float, ToolOutput]]]:
    seen: list[tuple[float, ToolOutput]] = []
    ctx = ToolContext(call_id="c1", emit=lambda event: seen.append((time.monotonic(), event)))
    call = call_tool(BuiltinExecuteTool(tmp_path), "execute", tool_context=ctx, command=command, timeout=30)
    assert call.error is None, call.error
    return call.result, seen


def test_output_arrives_while_the_command_runs(tmp_path: Path) -> None:
    result, seen = _run_collecting(tmp_path, "echo first-line; sleep 1; echo second-line >&2")
    assert all(isinstance(event, ToolOutput) and event.call_id == "c1" for _, event in seen)
    texts = [event.text for _, event in seen]
    assert texts[0] == "first-line\n"  # sent on its own, a second before the rest was printed
    assert "".join(texts) == "first-line\nsecond-line\n"  # both streams, in the order they came
    assert seen[-1][0] - seen[0][0] > 0.5
    assert result.splitlines()[1:] == ["--- stdout ---", "first-line", "--- stderr ---", "second-line"]


def test_a_flood_of_output_is_throttled_and_cut_to_its_end(tmp_path: Path) -> None:
    started = time.monotonic()
    result, seen = _run_collecting(tmp_path, "seq 1 200000")
    elapsed = time.monotonic() - started
    assert len(seen) <= 2 + elapsed * 10 * 1.5  # about ten a second at most, not one per chunk
    assert all(len(event.text) <= 4000 for _, event in seen)
    assert seen[-1][1].text.endswith("199999\n200000\n")  # the end always arrives
    assert "lines omitted" in result  # the model's result is the usual head and tail


def test_a_character_split_between_chunks_is_not_garbled(tmp_path: Path) -> None:
    # "é" is two bytes; printf writes them in two writes a moment apart.
    _, seen = _run_collecting(tmp_path, r"printf 'caf\xc3'; sleep 0.3; printf '\xa9\n'")
    assert "".join(event.text for _, event in seen) == "café\n"


def test_the_agent_stream_carries_the_output_of_its_call(scripted, tmp_path: Path) -> None:
    server = scripted(
        turns.tool_calls(turns.call("execute", {"command": "echo live-one; sleep 0.5; echo live-two"}, id="x1")),
        turns.text("ran"),
    )
    agent = Agent(scripted_model(server), tools=[BuiltinExecuteTool(tmp_path)])
    events = asyncio.run(collect(agent, "run it"))
    outputs = [e for e in events if e.type == "tool_output"]
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolCallFinished))
    assert outputs and all(e.call_id == "x1" and e.source == "task:x1" for e in outputs)
    assert max(events.index(e) for e in outputs) < finished  # all of it before the call ends
    assert outputs[0].to_dict() == {"type": "tool_output", "source": "task:x1", "call_id": "x1",
                                    "text": "live-one\n"}
