"""Compaction never loses the conversation: an empty summary, or a tool call where the summary
should be, cancels it (for /compact and for the automatic one in the loop), and says so."""

from __future__ import annotations

import asyncio

import pytest
from conftest import collect, scripted_model

from agentica_cli.agent import Agent, ToolConfig
from agentica_cli.agent.context import SUMMARY_INSTRUCTIONS, SUMMARY_PREFIX, UnusableSummary
from agentica_cli.testing import turns
from agentica_cli.tui.transcript import COMPACTED_MARK

UNUSABLE = {
    "empty": (turns.text(""), "the model's summary was empty"),
    "blank": (turns.text("  \n "), "the model's summary was empty"),
    "tool call": (turns.tool_calls(turns.call("ping", {}, id="s1")),
                  "the model called a tool (ping) instead of writing a summary"),
}


def ping() -> str:
    """Ping."""
    return "pong"


def usage(prompt: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": 10}


@pytest.mark.parametrize("kind", list(UNUSABLE))
def test_compact_with_an_unusable_summary_raises_and_keeps_the_history(scripted, kind: str) -> None:
    reply, reason = UNUSABLE[kind]
    server = scripted(turns.text("one"), turns.text("two"), reply, turns.text("three"))
    replaced: list = []
    agent = Agent(scripted_model(server), tools=[ping], on_history_replaced=replaced.append)
    agent.run_sync("first")
    agent.run_sync("second")
    before = [dict(m) for m in agent.messages]
    with pytest.raises(UnusableSummary) as caught:
        asyncio.run(agent.compact(keep_messages=2))
    assert caught.value.message == reason
    assert agent.messages == before and replaced == []
    summary_request = server.requests[2]
    assert "tools" not in summary_request and "tool_choice" not in summary_request
    assert summary_request["messages"][0] == {"role": "system", "content": SUMMARY_INSTRUCTIONS}
    agent.run_sync("third")  # the next request carries the whole conversation, first request included
    sent = [m["content"] for m in server.requests[3]["messages"] if m["role"] != "system"]
    assert sent == ["first", "one", "second", "two", "third"]


@pytest.mark.parametrize("kind", list(UNUSABLE))
def test_automatic_compaction_with_an_unusable_summary_keeps_the_history_and_says_so(scripted, kind: str) -> None:
    reply, reason = UNUSABLE[kind]
    server = scripted(
        turns.tool_calls(turns.call("ping", {}, id="a1"), usage=usage(100)),
        turns.tool_calls(turns.call("ping", {}, id="a2"), usage=usage(900)),  # over 0.8 x 1000 from here on
        reply,
        turns.tool_calls(turns.call("ping", {}, id="a3"), usage=usage(950)),
        turns.text("All pings done.", usage=usage(990)),
    )
    config = ToolConfig(context_window=1000, context_overflow_threshold=0.8, compact_keep_messages=2)
    agent = Agent(scripted_model(server), tools=[ping], tool_config=config)
    events = asyncio.run(collect(agent, "ping three times"))
    assert events[-1].content == "All pings done."
    notices = [e for e in events if e.type == "notice"]
    assert [(n.kind, n.message) for n in notices] == [
        ("warning", f"Could not compact the conversation ({reason}); the history is kept as it was.")]
    assert "tools" not in server.requests[2]
    # not tried again in the same run (each try is a request), and nothing was dropped
    assert len(server.requests) == 5
    last = server.requests[4]["messages"]
    assert [m for m in last if m["role"] == "user"] == [{"role": "user", "content": "ping three times"}]
    assert [m.get("tool_call_id") for m in last if m["role"] == "tool"] == ["a1", "a2", "a3"]
    assert not any(SUMMARY_PREFIX in str(m.get("content")) for m in agent.messages)


def test_the_replayed_transcript_knows_a_compacted_history() -> None:
    assert SUMMARY_PREFIX.startswith(COMPACTED_MARK)  # transcript.py avoids importing agent.context
