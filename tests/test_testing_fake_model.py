"""The in-process fake models (agentica_cli.testing.fake_model): they drive the real agent loop
like the HTTP server does, the loop sends them the same conversation, and they refuse what a
provider refuses."""

from __future__ import annotations

import asyncio

import pytest
from conftest import collect, scripted_model

from agentica_cli.agent import Agent
from agentica_cli.agent.events import TextDelta, ToolCallFinished
from agentica_cli.models import ModelError
from agentica_cli.testing import FunctionModel, ScriptedModel, turns


def get_weather(city: str) -> str:
    """Get the weather.

    Args:
        city: the city
    """
    return f"{city}: 21 degrees"


SCRIPT = [
    turns.tool_calls(turns.call("get_weather", {"city": "Paris"}, id="w1"),
                     turns.call("get_weather", {"city": "Oslo"}, id="w2"), content="Looking."),
    turns.text("Paris 21, Oslo 21."),
]


def _conversation(requests: list[dict]) -> list[list[dict]]:
    """What the loop sent, request by request, without the fields only HTTP has."""
    return [[{k: v for k, v in m.items() if k != "reasoning_content"} for m in r["messages"]] for r in requests]


def test_the_loop_sends_the_fake_the_same_conversation_as_the_http_server(scripted) -> None:
    server = scripted(*SCRIPT)
    over_http = Agent(model=scripted_model(server), tools=[get_weather]).run_sync("Weather?")
    fake = ScriptedModel(SCRIPT)
    in_process = Agent(model=fake, tools=[get_weather]).run_sync("Weather?")

    assert in_process.content == over_http.content == "Paris 21, Oslo 21."
    assert _conversation(fake.requests) == _conversation(server.requests)
    assert [t["function"]["name"] for t in fake.requests[0]["tools"]] == ["get_weather"]
    assert fake.remaining == 0


def test_events_stream_in_pieces_and_tool_calls_end() -> None:
    agent = Agent(model=ScriptedModel([*SCRIPT]), tools=[get_weather])
    events = asyncio.run(collect(agent, "Weather?"))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 2 and "".join(deltas).endswith("Paris 21, Oslo 21.")
    assert sorted(e.call_id for e in events if isinstance(e, ToolCallFinished)) == ["w1", "w2"]


def test_a_broken_history_is_refused_as_a_provider_refuses_it() -> None:
    model = ScriptedModel([turns.text("never")])
    broken = [{"role": "user", "content": "hi"},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
              {"role": "user", "content": "again"}]

    async def ask() -> None:
        await model.response(broken, tools=[{"type": "function", "function": {"name": "get_weather"}}])

    with pytest.raises(ModelError) as refused:
        asyncio.run(ask())
    assert refused.value.status_code == 400 and "c1" in str(refused.value)


def test_a_call_to_a_tool_not_offered_and_an_exhausted_script_are_errors() -> None:
    model = ScriptedModel([])
    history = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "rm_rf", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    with pytest.raises(ModelError, match="not among the tools"):
        asyncio.run(model.response(history, tools=[{"type": "function", "function": {"name": "read_file"}}]))
    with pytest.raises(ModelError, match="no scripted turn left"):
        asyncio.run(model.response([{"role": "user", "content": "hi"}]))


def test_function_model_answers_from_the_request_and_error_turns_reach_the_run() -> None:
    def answer(body: dict) -> dict:
        last = body["messages"][-1]
        return turns.text(f"you said {last['content']!r}") if "boom" not in last["content"] else turns.error(401)

    agent = Agent(model=FunctionModel(answer))
    assert agent.run_sync("hello").content == "you said 'hello'"
    failed = Agent(model=FunctionModel(answer)).run_sync("boom")
    assert failed.error is not None and "401" in str(failed.error)
