"""The Agent loop against the scripted server: events, multi-turn, prompt assembly, retries, errors."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import collect, scripted_model

from agentica_cli.agent import Agent, RunResult, ToolConfig
from agentica_cli.models import TokenUsage
from agentica_cli.testing import turns
from agentica_cli.tools import Function, Tool, tool


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather for a city.

    Args:
        city: City name, e.g. "Beijing"
        unit: "celsius" or "fahrenheit"
    """
    return f"{city}: 21 degrees {unit}"




def test_run_sync_with_a_tool_call_then_answer(scripted):
    server = scripted(
        turns.tool_calls(turns.call("get_weather", {"city": "Shanghai"}, id="w1"),
                         usage={"prompt_tokens": 40, "completion_tokens": 6}),
        turns.text("It is 21 degrees in Shanghai.", usage={"prompt_tokens": 50, "completion_tokens": 8}),
    )
    agent = Agent(model=scripted_model(server), tools=[get_weather])
    result = agent.run_sync("Weather in Shanghai?")
    assert isinstance(result, RunResult)
    assert result.content == "It is 21 degrees in Shanghai."
    assert result.stop_reason == "completed" and result.error is None
    second = server.requests[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Shanghai"}'}
    assert second[-1] == {"role": "tool", "tool_call_id": "w1", "content": "Shanghai: 21 degrees celsius"}
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert server.requests[0]["tools"] == [Function.from_callable(get_weather).to_openai()]
    assert result.usage == TokenUsage(90, 14, 104)


def test_event_sequence_of_a_run(scripted):
    server = scripted(turns.tool_calls(turns.call("get_weather", {"city": "Paris"}, id="c1"), content="Checking."),
                      turns.text("Sunny."))
    agent = Agent(scripted_model(server), tools=[get_weather])
    events = asyncio.run(collect(agent, "Paris?"))
    kinds = [e.type for e in events]
    assert kinds[0] == "turn_started" and events[0].prompt == "Paris?"
    assert kinds[-1] == "turn_finished" and events[-1].content == "Sunny." and events[-1].stop_reason == "completed"
    # request 1: started, text, usage; the tool; request 2: started, text, usage
    compact = [k for i, k in enumerate(kinds) if not (k == "text_delta" and kinds[i - 1] == "text_delta")]
    assert compact == ["turn_started", "model_request_started", "text_delta", "usage", "tool_call_started",
                       "tool_call_finished", "model_request_started", "text_delta", "usage", "turn_finished"]
    assert "".join(e.text for e in events[: kinds.index("usage")] if e.type == "text_delta") == "Checking."
    started = events[kinds.index("tool_call_started")]
    assert (started.call_id, started.name, started.args) == ("c1", "get_weather", {"city": "Paris", "unit": "celsius"})
    finished = events[kinds.index("tool_call_finished")]
    assert (finished.status, finished.result, finished.error) == ("ok", "Paris: 21 degrees celsius", None)
    assert [e.step for e in events if e.type == "model_request_started"] == [1, 2]
    assert all(e.source == "" for e in events)
    json.dumps([e.to_dict() for e in events])  # every event serialises (stream-json output)


def test_multi_turn_continues_the_conversation_and_totals_usage(scripted):
    server = scripted(turns.text("Hi Ann.", usage={"prompt_tokens": 10, "completion_tokens": 2}),
                      turns.text("Your name is Ann.", usage={"prompt_tokens": 20, "completion_tokens": 5}))
    seen: list[dict] = []
    agent = Agent(scripted_model(server), instructions="Be brief.", on_message=seen.append)
    first = agent.run_sync("I am Ann.")
    second = agent.run_sync("What is my name?")
    assert (first.content, second.content) == ("Hi Ann.", "Your name is Ann.")
    assert server.requests[1]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I am Ann."},
        {"role": "assistant", "content": "Hi Ann."},
        {"role": "user", "content": "What is my name?"},
    ]
    assert (second.usage.input_tokens, second.usage.output_tokens, second.usage.total_tokens) == (20, 5, 25)
    assert agent.usage == TokenUsage(30, 7, 37)
    assert seen == agent.messages and len(seen) == 4
    agent.reset()
    assert agent.messages == []


def test_prior_messages_resume_a_session(scripted):
    server = scripted(turns.text("Still here."))
    history = [{"role": "system", "content": "old system prompt is dropped"},
               {"role": "user", "content": "earlier"}, {"role": "assistant", "content": "reply"}]
    agent = Agent(scripted_model(server), messages=history)
    agent.run_sync("again")
    assert server.requests[0]["messages"] == [{"role": "user", "content": "earlier"},
                                              {"role": "assistant", "content": "reply"},
                                              {"role": "user", "content": "again"}]


class Notes(Tool):
    def __init__(self):
        super().__init__(name="notes")
        self.register(self.read_notes, is_read_only=True, concurrency_safe=True)

    def read_notes(self) -> str:
        """Read the notes."""
        return "n1"

    def get_system_prompt(self) -> str:
        return "Read the notes before answering."


def test_system_prompt_assembly_order_and_tool_forms(scripted):
    @tool(name="shout", description="Upper-case text.")
    async def shout_it(text: str) -> str:
        return text.upper()

    explicit = Function(name="raw", entrypoint=lambda: "r", parameters={"type": "object", "properties": {}})
    server = scripted(turns.text("ok"))
    agent = Agent(scripted_model(server), tools=[get_weather, shout_it, explicit, Notes()],
                  instructions="You are a test agent.", tool_config=ToolConfig(tool_call_limit=5))
    assert list(agent.functions) == ["get_weather", "shout", "raw", "read_notes"]
    expected = ("You are a test agent.\n\n# Using the tools\n\nRead the notes before answering.\n\n"
                "# Context\n\n- You may make at most 5 tool calls to answer this request.")
    assert agent.system_prompt() == expected
    agent.run_sync("x")
    assert server.requests[0]["messages"][0] == {"role": "system", "content": expected}
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["get_weather", "shout", "raw", "read_notes"]


def test_no_system_message_and_no_tools_when_there_are_none(scripted):
    server = scripted(turns.text("ok"))
    Agent(scripted_model(server)).run_sync("x")
    assert server.requests[0]["messages"] == [{"role": "user", "content": "x"}]
    assert "tools" not in server.requests[0]


def test_429_then_200_makes_two_requests_and_one_answer(scripted):
    server = scripted(turns.error(429, "rate limited", retry_after=0.05), turns.text("fine"))
    agent = Agent(scripted_model(server))
    events = asyncio.run(collect(agent, "x"))
    notices = [e for e in events if e.type == "notice"]
    assert len(notices) == 1 and notices[0].kind == "retry" and "HTTP 429: rate limited" in notices[0].message
    assert events[-1].content == "fine" and len(server.requests) == 2
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]


def test_500_every_time_ends_with_a_clear_error_event(scripted):
    server = scripted(*[turns.error(500, "upstream down")] * 4)
    agent = Agent(scripted_model(server, max_retries=2))
    events = asyncio.run(collect(agent, "x"))
    errors = [e for e in events if e.type == "error"]
    assert len(errors) == 1
    assert errors[0].message == "HTTP 500: upstream down (gave up after 3 attempts)"
    assert (errors[0].kind, errors[0].status_code) == ("api", 500)
    assert events[-1].type == "turn_finished" and events[-1].stop_reason == "error"
    assert len(server.requests) == 3
    result = Agent(scripted_model(server, max_retries=0)).run_sync("y")
    assert result.stop_reason == "error" and result.error == "HTTP 500: upstream down (gave up after 1 attempt)"


def test_401_is_one_request_and_an_auth_error(scripted):
    server = scripted(turns.error(401, "invalid api key"), turns.text("fixed"))
    agent = Agent(scripted_model(server))
    result = agent.run_sync("x")
    assert result.stop_reason == "error"
    assert result.error == "HTTP 401: invalid api key (check the API key)"
    assert len(server.requests) == 1
    # The failed prompt is closed by a note, so the next request does not send two user
    # messages in a row (strict chat templates reject that).
    assert agent.run_sync("y").content == "fixed"
    assert server.requests[1]["messages"] == [
        {"role": "user", "content": "x"},
        {"role": "assistant",
         "content": "[No answer: the request failed (HTTP 401: invalid api key (check the API key)).]"},
        {"role": "user", "content": "y"},
    ]


def test_a_model_that_raises_something_unexpected_ends_with_an_error_event():
    from agentica_cli.models import Model

    class BrokenModel(Model):
        id = "broken"

        async def response_stream(self, messages, tools=None):
            raise KeyError("choices")
            yield  # an async generator, like every model

    events = asyncio.run(collect(Agent(BrokenModel()), "x"))
    assert [e.type for e in events] == ["turn_started", "model_request_started", "error", "turn_finished"]
    assert events[2].message == "the model request failed: KeyError: 'choices'"
    assert events[-1].stop_reason == "error"


def test_missing_key_is_a_config_error_event_without_a_request(scripted, monkeypatch):
    from agentica_cli.models import DeepSeek

    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    server = scripted(turns.text("never"))
    events = asyncio.run(collect(Agent(DeepSeek(base_url=server.base_url)), "x"))
    error = next(e for e in events if e.type == "error")
    assert error.kind == "config" and "DEEPSEEK_API_KEY" in error.message
    assert server.requests == []


def test_stream_cut_after_half_a_tool_call_is_retried_and_the_tool_runs_once(scripted):
    calls = []

    def write_note(text: str) -> str:
        """Write a note.

        Args:
            text: the note
        """
        calls.append(text)
        return "written"

    call = turns.call("write_note", {"text": "a fairly long note that is split over chunks"}, id="n1")
    # chunks: role, header, first third of the arguments -> cut in the middle of the call
    server = scripted(turns.cut(turns.tool_calls(call), after=3), turns.tool_calls(call), turns.text("done"))
    agent = Agent(scripted_model(server), tools=[write_note])
    events = asyncio.run(collect(agent, "note it"))
    assert calls == ["a fairly long note that is split over chunks"]
    assert [e.type for e in events].count("tool_call_started") == 1
    assert len(server.requests) == 3
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "tool", "assistant"]


def test_text_of_a_cut_attempt_is_not_part_of_the_answer(scripted):
    answer = "The full answer, streamed in several pieces."
    server = scripted(turns.cut(turns.text(answer), after=3), turns.text(answer))
    agent = Agent(scripted_model(server))
    events = asyncio.run(collect(agent, "x"))
    kinds = [e.type for e in events]
    retry = kinds.index("notice")
    assert events[retry].kind == "retry" and "incomplete chunked read" in events[retry].message
    void = "".join(e.text for e in events[:retry] if e.type == "text_delta")
    assert void and answer.startswith(void) and void != answer  # part of the answer came, then the cut
    assert "".join(e.text for e in events[retry:] if e.type == "text_delta") == answer
    assert events[-1].content == answer
    assert agent.messages == [{"role": "user", "content": "x"}, {"role": "assistant", "content": answer}]


def test_max_turns_stops_a_model_that_never_answers(scripted):
    server = scripted(turns.repeat_tool("get_weather", 10, arguments={"city": "X"}))
    result = Agent(scripted_model(server), tools=[get_weather], tool_config=ToolConfig(max_turns=3)).run_sync("x")
    assert result.stop_reason == "max_turns" and len(server.requests) == 3
    assert result.messages[-1]["role"] == "tool"


def test_run_sync_works_inside_a_running_event_loop(scripted):
    server = scripted(turns.text("from a thread"))
    agent = Agent(scripted_model(server))

    async def main():
        return agent.run_sync("x")

    assert asyncio.run(main()).content == "from a thread"


def test_reasoning_is_streamed_separately(scripted):
    server = scripted(turns.text("answer", reasoning="let me think"))
    events = asyncio.run(collect(Agent(scripted_model(server)), "x"))
    assert "".join(e.text for e in events if e.type == "reasoning_delta") == "let me think"
    assert "".join(e.text for e in events if e.type == "text_delta") == "answer"


def test_reasoning_of_a_tool_call_turn_is_sent_back(scripted):
    # DeepSeek's and Kimi's thinking modes answer 400 when a tool-call turn comes back
    # without its reasoning_content; a plain answer's reasoning is not sent back.
    server = scripted(turns.tool_calls(turns.call("get_weather", {"city": "Oslo"}, id="w"), reasoning="need weather"),
                      turns.text("Cold.", reasoning="it is cold"), turns.text("Bye."))
    agent = Agent(scripted_model(server), tools=[get_weather])
    agent.run_sync("Oslo?")
    agent.run_sync("thanks")
    assert server.requests[1]["messages"][1] == {
        "role": "assistant", "content": None, "reasoning_content": "need weather",
        "tool_calls": [{"id": "w", "type": "function", "function": {"name": "get_weather",
                                                                    "arguments": '{"city": "Oslo"}'}}]}
    assert server.requests[2]["messages"][3] == {"role": "assistant", "content": "Cold."}


def test_an_empty_answer_is_kept_as_empty_text_not_null(scripted):
    # A reasoning-only reply: null content without tool calls would make the next request invalid.
    server = scripted(turns.text("", reasoning="thought only"), turns.text("ok"))
    agent = Agent(scripted_model(server))
    assert agent.run_sync("x").content == ""
    agent.run_sync("y")
    assert server.requests[1]["messages"] == [{"role": "user", "content": "x"}, {"role": "assistant", "content": ""},
                                              {"role": "user", "content": "y"}]


def test_concurrent_runs_on_one_agent_are_refused(scripted):
    server = scripted(turns.text("slow", delay=0.3), turns.text("x"))
    agent = Agent(scripted_model(server))

    async def main():
        first = asyncio.create_task(agent.run("a"))
        await asyncio.sleep(0.05)
        with pytest.raises(RuntimeError, match="already running"):
            await agent.run("b")
        return await first

    assert asyncio.run(main()).content == "slow"
