"""Context management: old large tool results shortened, compaction when the prompt nears the window."""

from __future__ import annotations

import asyncio

from conftest import collect, scripted_model

from agentica_cli.agent import Agent, ToolConfig
from agentica_cli.agent.context import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX, shorten
from agentica_cli.testing import turns


def ping() -> str:
    """Ping."""
    return "pong"


def usage(prompt: int, completion: int = 10) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


def test_shorten_keeps_head_and_tail_and_says_what_was_cut():
    text = "H" * 100 + "\n".join("m" * 9 for _ in range(50)) + "T" * 100
    middle = len(text) - 200
    assert shorten(text, 100) == (f"{'H' * 100}\n[... {middle} characters (49 lines) cut from this old tool "
                                  f"result ...]\n{'T' * 100}")
    assert shorten("short", 100) == "short"


def test_old_large_tool_results_are_compressed_before_being_sent_again(scripted):
    big = "HEAD" + "x" * 5000 + "TAIL"

    def dump() -> str:
        """Dump a lot."""
        return big

    server = scripted(turns.tool_calls(turns.call("dump", {}, id="b1")),
                      turns.tool_calls(turns.call("ping", {}, id="s1")),
                      turns.text("done"))
    config = ToolConfig(compress_tool_results=True, compress_threshold_chars=1000, compress_keep_chars=100)
    agent = Agent(scripted_model(server), tools=[dump, ping], tool_config=config)
    agent.run_sync("go")
    second = {m.get("tool_call_id"): m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"}
    assert second["b1"] == big  # the model has not seen it yet: sent whole
    third = {m.get("tool_call_id"): m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"}
    assert third["b1"] == shorten(big, 100)
    assert third["b1"].startswith("HEAD" + "x" * 96 + "\n[... 4808 characters (0 lines) cut")
    assert third["s1"] == "pong"
    assert agent.messages[2]["content"] == big  # the history keeps it whole


def test_crossing_the_threshold_summarises_old_turns_and_the_run_continues(scripted):
    summary_requests = []

    def summarise(body):
        summary_requests.append(body)
        return turns.text("SUMMARY: the user asked to ping; two pings answered pong.", usage=usage(60, 15))

    server = scripted(
        turns.tool_calls(turns.call("ping", {}, id="a1"), usage=usage(100)),
        turns.tool_calls(turns.call("ping", {}, id="a2"), usage=usage(300)),
        turns.tool_calls(turns.call("ping", {}, id="a3"), usage=usage(900)),
        summarise,
        turns.text("All pings done.", usage=usage(150)),
    )
    config = ToolConfig(context_window=1000, context_overflow_threshold=0.8, compact_keep_messages=2)
    agent = Agent(scripted_model(server), tools=[ping], tool_config=config)
    events = asyncio.run(collect(agent, "ping three times"))
    assert events[-1].content == "All pings done."
    assert len(server.requests) == 5 and len(summary_requests) == 1
    summary_request = server.requests[3]
    assert "tools" not in summary_request
    assert summary_request["messages"][0] == {"role": "system", "content": SUMMARY_INSTRUCTIONS}
    transcript = summary_request["messages"][1]["content"]
    assert transcript.startswith("Summarise this conversation:\n\n[user]\nping three times\n\n")
    assert "[assistant calls ping (a1)] {}" in transcript and "[tool result a2]\npong" in transcript
    assert "(a3)" not in transcript  # the kept tail is not summarised
    continued = server.requests[4]["messages"]
    assert continued == [
        {"role": "user", "content": SUMMARY_PREFIX + "SUMMARY: the user asked to ping; two pings answered pong."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a3", "type": "function", "function": {"name": "ping", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a3", "content": "pong"},
    ]
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "tool", "assistant"]
    notices = [e for e in events if e.type == "notice"]
    assert [n.kind for n in notices] == ["compaction"]


def test_threshold_uses_an_estimate_when_the_api_reports_no_usage(scripted):
    def blob() -> str:
        """Return a blob."""
        return "y" * 2000  # ~500 tokens by the 4-chars estimate

    server = scripted(turns.tool_calls(turns.call("blob", {}, id="b")),
                      turns.text("SUMMARY"),
                      turns.text("answer"))
    config = ToolConfig(context_window=1000, context_overflow_threshold=0.4, compact_keep_messages=0)
    agent = Agent(scripted_model(server, include_usage=False), tools=[blob], tool_config=config)
    result = agent.run_sync("go")
    assert result.content == "answer"
    assert "stream_options" not in server.requests[0]
    assert server.requests[1]["messages"][0]["content"] == SUMMARY_INSTRUCTIONS
    assert server.requests[2]["messages"] == [{"role": "user", "content": SUMMARY_PREFIX + "SUMMARY"}]


def test_compact_for_the_cli_replaces_older_messages_with_a_summary(scripted):
    server = scripted(turns.text("one"), turns.text("two"), turns.text("the summary"), turns.text("three"))
    agent = Agent(scripted_model(server))
    agent.run_sync("first")
    agent.run_sync("second")
    assert asyncio.run(agent.compact(keep_messages=2)) == "the summary"
    assert agent.messages == [{"role": "user", "content": SUMMARY_PREFIX + "the summary"},
                              {"role": "user", "content": "second"}, {"role": "assistant", "content": "two"}]
    assert server.requests[2]["messages"][1]["content"] == \
        "Summarise this conversation:\n\n[user]\nfirst\n\n[assistant]\none"
    agent.run_sync("third")
    assert server.requests[3]["messages"][-1] == {"role": "user", "content": "third"}
    assert asyncio.run(Agent(scripted_model(server)).compact()) is None  # nothing to compact: no request
    assert len(server.requests) == 4




def test_the_window_follows_a_model_switched_between_runs(scripted):
    server = scripted(turns.text("one", usage=usage(900)), turns.text("SUMMARY"), turns.text("two"))
    agent = Agent(scripted_model(server), tool_config=ToolConfig(compact_keep_messages=0))
    agent.run_sync("first")  # 910 tokens of a 128k window: no compaction
    assert agent.context_window == 128_000
    agent.model = scripted_model(server, context_window=1000)  # what the CLI's /model does
    assert agent.context_window == 1000
    assert agent.run_sync("second").content == "two"
    assert server.requests[1]["messages"][0] == {"role": "system", "content": SUMMARY_INSTRUCTIONS}
    # the summary and the new prompt are both user messages: sent as one, kept as two
    assert server.requests[2]["messages"] == [{"role": "user", "content": SUMMARY_PREFIX + "SUMMARY\n\nsecond"}]
    assert agent.messages[:2] == [{"role": "user", "content": SUMMARY_PREFIX + "SUMMARY"},
                                  {"role": "user", "content": "second"}]


def test_user_messages_in_a_row_are_sent_as_one(scripted):
    # A session killed while its last prompt waited for an answer resumes with that prompt
    # unanswered; strict chat templates reject two user messages in a row.
    server = scripted(turns.text("answer"))
    picture = {"role": "user", "content": [{"type": "text", "text": "see this"}]}
    history = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, picture,
               {"role": "user", "content": "lost"}]
    agent = Agent(scripted_model(server), messages=history)
    agent.run_sync("new")
    assert server.requests[0]["messages"] == [history[0], history[1], picture,  # not text: left alone
                                              {"role": "user", "content": "lost\n\nnew"}]
    assert agent.messages == [*history, {"role": "user", "content": "new"}, {"role": "assistant", "content": "answer"}]


def test_a_compaction_is_reported_to_whoever_stores_the_history(scripted):
    server = scripted(turns.text("one"), turns.text("two"), turns.text("the summary"), turns.text("three"))
    appended, replaced = [], []
    agent = Agent(scripted_model(server), on_message=appended.append, on_history_replaced=replaced.append)
    agent.run_sync("first")
    agent.run_sync("second")
    assert len(appended) == 4 and replaced == []
    asyncio.run(agent.compact(keep_messages=2))
    assert replaced == [[{"role": "user", "content": SUMMARY_PREFIX + "the summary"},
                         {"role": "user", "content": "second"}, {"role": "assistant", "content": "two"}]]
    agent.run_sync("third")
    assert appended[-2:] == [{"role": "user", "content": "third"}, {"role": "assistant", "content": "three"}]
