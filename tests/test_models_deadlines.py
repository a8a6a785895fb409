"""Time limits of a model request against the scripted server's never-ending faults.

A stream that only sends `: keep-alive` comments (or empty chunks), and a server that never
sends headers, used to hold a request forever (or 5 x the read timeout). Each test here
would hang on a client without deadlines; the faults end by themselves after their limit
(60 s) and pytest-timeout ends the test, so a regression fails instead of hanging CI.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from agentica_cli.agent import Agent
from agentica_cli.agent.events import RetryNotice
from agentica_cli.models import ModelError, ModelResponse, ModelRetry, ModelTextDelta, OpenAIChat
from agentica_cli.models.base import seconds_text
from agentica_cli.models.deadlines import Deadlines
from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.timeout(60)

LONG = "A sentence long enough to stream over several chunks before the server goes quiet."


def model_for(server: ScriptedModelServer, **kw) -> OpenAIChat:
    kw.setdefault("retry_base_delay", 0.01)
    return OpenAIChat(id="test-model", api_key="sk-test", base_url=server.base_url, **kw)


def collect(model: OpenAIChat) -> tuple[list, ModelError | None, float]:
    """The events of one request, the error that ended it (if any) and how long it took."""

    async def go() -> tuple[list, ModelError | None]:
        events: list = []
        try:
            async for event in model.response_stream([{"role": "user", "content": "hi"}]):
                events.append(event)
        except ModelError as err:
            return events, err
        finally:
            await model.aclose()
        return events, None

    started = time.monotonic()
    events, error = asyncio.run(go())
    return events, error, time.monotonic() - started


def test_keep_alive_comments_are_not_progress_the_stalled_attempt_is_retried():
    stalled = turns.stall(turns.text(LONG), after=3, every=0.1)  # some text, then only `: keep-alive`
    with ScriptedModelServer([stalled, turns.text("The whole answer.")], text_chunk_chars=8) as server:
        events, error, elapsed = collect(model_for(server, stall_timeout=1))
        assert len(server.requests) == 2
    assert error is None
    [retry] = [e for e in events if isinstance(e, ModelRetry)]
    assert (retry.attempt, retry.max_attempts) == (1, 5)
    assert retry.reason == "the stream stalled: no content for 1 s (stall_timeout)"
    assert retry.describe() == (f"retrying in {seconds_text(retry.delay)} (attempt 2 of 5): "
                                "the stream stalled: no content for 1 s (stall_timeout)")
    cut = events.index(retry)
    void = "".join(e.text for e in events[:cut] if isinstance(e, ModelTextDelta))
    assert void and LONG.startswith(void) and void != LONG  # part came, then the silence
    assert isinstance(events[-1], ModelResponse) and events[-1].content == "The whole answer."
    assert elapsed < 30  # ~1 s of stall; generous for a busy machine


def test_empty_chunks_are_not_progress_either():
    with ScriptedModelServer([turns.stall(turns.text(LONG), after=1, every=0.1, send="empty")]) as server:
        events, error, _ = collect(model_for(server, stall_timeout=0.5, max_retries=0))
        assert len(server.requests) == 1
    assert error is not None and error.kind == "timeout"
    assert error.message == ("the stream stalled: no content for 0.5 s (stall_timeout) "
                             "(gave up after 1 attempt; raise stall_timeout if the model needs longer)")
    assert not any(isinstance(e, ModelTextDelta) for e in events)


def test_a_server_that_never_sends_headers_is_bounded_by_the_stall_timeout():
    with ScriptedModelServer([turns.hang(), turns.hang()]) as server:
        events, error, elapsed = collect(model_for(server, stall_timeout=0.5, max_retries=1))
        assert len(server.requests) == 2
        assert [r.status for r in server.request_log] == [0, 0]  # neither was answered
    assert [e.reason for e in events] == ["no response from the server for 0.5 s (stall_timeout)"]
    assert error is not None and error.kind == "timeout"
    assert error.message.startswith("no response from the server for 0.5 s (stall_timeout) (gave up after 2 attempts")
    assert "raise stall_timeout" in error.message
    assert elapsed < 30


def test_the_request_deadline_ends_a_stream_that_never_finishes_across_retries():
    # A failed attempt, then one that makes some progress and keeps the connection busy with
    # comments; with no stall limit only the request's own deadline can end it.
    stalled = turns.stall(turns.text(LONG), after=3, every=0.1)
    with ScriptedModelServer([turns.error(503), stalled]) as server:
        events, error, elapsed = collect(model_for(server, request_timeout=1.5, stall_timeout=0))
        assert len(server.requests) == 2
    assert [e.attempt for e in events if isinstance(e, ModelRetry)] == [1]
    assert error is not None and error.kind == "timeout"
    assert error.message.startswith("the model request timed out: no complete answer within 1.5 s "
                                    "(request_timeout; 2 attempts): part of the answer had come, the last of it ")
    assert error.message.endswith("raise request_timeout if the model needs longer")
    assert elapsed < 30


def test_the_request_deadline_ends_a_server_that_never_answers():
    with ScriptedModelServer([turns.hang()]) as server:
        _, error, elapsed = collect(model_for(server, request_timeout=1, stall_timeout=0))
        assert len(server.requests) == 1
    assert error is not None and error.message == (
        "the model request timed out: no complete answer within 1 s (request_timeout; 1 attempt): "
        "no response from the server yet; raise request_timeout if the model needs longer")
    assert elapsed < 30


def test_the_attempt_deadline_retries_an_answer_that_streams_too_long():
    slow = turns.text(LONG * 4, chunk_delay=0.05)  # ~40 chunks: progress all along, but 2 s in all
    with ScriptedModelServer([slow, turns.text("quick")], text_chunk_chars=8) as server:
        events, error, _ = collect(model_for(server, attempt_timeout=0.5))
        assert len(server.requests) == 2
    assert error is None and events[-1].content == "quick"
    [retry] = [e for e in events if isinstance(e, ModelRetry)]
    assert retry.reason == "the answer took longer than 0.5 s (attempt_timeout)"


def test_a_retry_that_would_start_after_the_request_deadline_is_not_waited_for():
    with ScriptedModelServer([turns.error(503, "overloaded", retry_after=30), turns.text("late")]) as server:
        events, error, elapsed = collect(model_for(server, request_timeout=2))
        assert len(server.requests) == 1
    assert not events
    assert error is not None and error.status_code == 503 and error.kind == "api"
    assert error.message == ("HTTP 503: overloaded (gave up after 1 attempt: waiting 30 s to retry would pass "
                             "request_timeout, 2 s)")
    assert elapsed < 20  # not the 30 s the server asked for


def test_an_answer_complete_before_the_stall_is_kept():
    # The finish chunk came, then the stream went quiet instead of sending usage and [DONE]:
    # the answer is whole, and asking again would redo it.
    text = turns.text("short")
    with ScriptedModelServer([turns.stall(text, after=3, every=0.1)]) as server:  # role, "short", finish
        events, error, _ = collect(model_for(server, stall_timeout=0.5))
        assert len(server.requests) == 1
    assert error is None and events[-1].content == "short"


def test_zero_means_no_limit_and_bad_limits_are_refused():
    assert Deadlines(request=0, attempt=0, stall=0) == Deadlines(request=None, attempt=None, stall=None)
    assert Deadlines() == Deadlines(request=900, attempt=600, stall=300)
    for bad in (-1, float("nan"), "10"):
        with pytest.raises(ValueError, match="stall_timeout must be a number of seconds >= 0"):
            OpenAIChat(api_key="k", stall_timeout=bad)


def test_agent_retry_notice_says_attempt_and_reason_and_keeps_its_fields():
    with ScriptedModelServer([turns.error(503, "overloaded"), turns.text("fine")]) as server:
        agent = Agent(model_for(server, max_retries=2, retry_base_delay=0.25))

        async def go() -> list:
            return [e async for e in agent.run_stream("hi")]

        events = asyncio.run(go())
    assert events[-1].type == "turn_finished" and events[-1].content == "fine"
    [notice] = [e for e in events if e.type == "notice"]
    assert isinstance(notice, RetryNotice) and notice.kind == "retry"
    assert notice.message == "retrying in 0.25 s (attempt 2 of 3): HTTP 503: overloaded"
    assert "void" not in notice.message
    assert json.loads(json.dumps(notice.to_dict())) == {
        "type": "notice", "source": "", "message": notice.message, "kind": "retry",
        "attempt": 2, "max_attempts": 3, "delay": 0.25, "reason": "HTTP 503: overloaded",
    }
