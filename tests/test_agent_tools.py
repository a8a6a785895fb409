"""Tool dispatch in the loop: parallel batches, order, flow control, limits, guardrails,
approval, hooks, cancellation. Exact messages sent back to the model are asserted, and every
recorded request is checked for "one result per call"."""

from __future__ import annotations

import asyncio
import threading
import time

import openai  # noqa: F401 - imported up front so the timing tests measure the loop, not the import
import pytest
from conftest import collect, scripted_model, tool_results

from agentica_cli.agent import Agent, Decision, ToolConfig, ToolHooks
from agentica_cli.agent.events import TextDelta
from agentica_cli.testing import tool_call_problems, turns
from agentica_cli.tools import (
    RetryAgentRun,
    StopAgentRun,
    ToolContext,
    ToolInputGuardrail,
    ToolOutputGuardrail,
    tool,
)


class Clock:
    """Records when each named tool started and ended."""

    def __init__(self):
        self.spans: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def sleeper(self, name: str, seconds: float, **flags):
        def body(label: str) -> str:
            start = time.monotonic()
            time.sleep(seconds)
            with self.lock:
                self.spans[label] = (start, time.monotonic())
            return f"slept {label}"

        body.__name__ = name
        body.__doc__ = "Sleep.\n\nArgs:\n    label: a label\n"
        return tool(**flags)(body)


def three_calls(name: str) -> dict:
    return turns.tool_calls(*(turns.call(name, {"label": x}, id=x) for x in ("a", "b", "c")))


# -- concurrency --------------------------------------------------------------------------


def test_three_safe_tools_run_together_in_well_under_a_second(scripted):
    clock = Clock()
    nap = clock.sleeper("nap", 0.5, concurrency_safe=True, is_read_only=True)
    server = scripted(three_calls("nap"), turns.text("rested"))
    agent = Agent(scripted_model(server), tools=[nap])
    result = agent.run_sync("nap three times")
    assert result.content == "rested"
    # Read on the tools' own spans, not timed around the run (its HTTP round trips vary under
    # load): the three naps ran together, so there is a moment when all three were asleep.
    # Run one after another, each would end before the next one starts.
    starts = [clock.spans[x][0] for x in "abc"]
    ends = [clock.spans[x][1] for x in "abc"]
    assert max(starts) < min(ends), clock.spans
    assert [m["tool_call_id"] for m in server.requests[1]["messages"] if m["role"] == "tool"] == ["a", "b", "c"]
    assert tool_results(server.requests[1]) == {"a": "slept a", "b": "slept b", "c": "slept c"}


def test_three_unsafe_tools_run_one_after_another_in_order(scripted):
    clock = Clock()
    work = clock.sleeper("work", 0.5)
    server = scripted(three_calls("work"), turns.text("worked"))
    start = time.monotonic()
    Agent(scripted_model(server), tools=[work]).run_sync("work")
    assert time.monotonic() - start >= 1.5
    a, b, c = (clock.spans[x] for x in "abc")
    assert a[1] <= b[0] and b[1] <= c[0]
    assert [m["tool_call_id"] for m in server.requests[1]["messages"] if m["role"] == "tool"] == ["a", "b", "c"]


def test_safe_calls_are_batched_only_when_consecutive(scripted):
    clock = Clock()
    safe = clock.sleeper("safe", 0.3, concurrency_safe=True)
    unsafe = clock.sleeper("unsafe", 0.3)
    reply = turns.tool_calls(turns.call("safe", {"label": "s1"}, id="s1"), turns.call("safe", {"label": "s2"}, id="s2"),
                             turns.call("unsafe", {"label": "u"}, id="u"), turns.call("safe", {"label": "s3"}, id="s3"))
    server = scripted(reply, turns.text("ok"))
    Agent(scripted_model(server), tools=[safe, unsafe]).run_sync("go")
    s1, s2, u, s3 = (clock.spans[x] for x in ("s1", "s2", "u", "s3"))
    assert s1[0] < s2[1] and s2[0] < s1[1]  # s1 and s2 overlapped: they ran together ...
    assert max(s1[1], s2[1]) <= u[0] and u[1] <= s3[0]  # ... then u alone, then s3 (not batched across u)
    assert list(tool_results(server.requests[1])) == ["s1", "s2", "u", "s3"]


def test_sync_tool_does_not_block_the_event_loop(scripted):
    """A sync tool runs in a thread: while it blocks, the loop runs the async tool beside it.
    Each waits on the other (the sync one for the async one's ticks, the async one for the sync
    one to have started), so the pair only finishes if both ran at once; a blocked loop, or the
    two run one after the other in either order, times one of them out. No clock is read: the
    proof holds on a machine however loaded."""
    started = threading.Event()
    ticked = threading.Event()

    @tool(concurrency_safe=True)
    def blocking_wait() -> str:
        """Block this thread until the other tool has ticked."""
        started.set()
        return "saw the ticks" if ticked.wait(20) else "no ticks while blocked"

    @tool(concurrency_safe=True)
    async def ticker() -> str:
        """Tick on the loop while the other one blocks."""
        for _ in range(2000):  # up to 20 s for the sync tool to start
            if started.is_set():
                break
            await asyncio.sleep(0.01)
        else:
            return "the sync tool never started"
        for _ in range(3):
            await asyncio.sleep(0.01)
        ticked.set()
        return "ticked beside it"

    server = scripted(turns.tool_calls(turns.call("blocking_wait", {}, id="s"), turns.call("ticker", {}, id="t")),
                      turns.text("ok"))
    Agent(scripted_model(server), tools=[blocking_wait, ticker]).run_sync("go")
    assert tool_results(server.requests[1]) == {"s": "saw the ticks", "t": "ticked beside it"}


# -- flow control -------------------------------------------------------------------------


def test_stop_agent_run_ends_the_run_with_its_message(scripted):
    def guard(query: str) -> str:
        """Check a query.

        Args:
            query: the query
        """
        raise StopAgentRun("High-risk SQL keyword found; refusing.")

    server = scripted(turns.tool_calls(turns.call("guard", {"query": "drop table"}, id="g"),
                                       turns.call("guard", {"query": "x"}, id="h")))
    agent = Agent(scripted_model(server), tools=[guard])
    result = agent.run_sync("drop it")
    assert (result.content, result.stop_reason) == ("High-risk SQL keyword found; refusing.", "stopped_by_tool")
    assert len(server.requests) == 1
    assert agent.messages[-2] == {"role": "tool", "tool_call_id": "g",
                                  "content": "High-risk SQL keyword found; refusing."}
    assert agent.messages[-1] == {"role": "tool", "tool_call_id": "h",
                                  "content": "Not run: the run was stopped by the 'guard' call before this one."}
    assert tool_call_problems(agent.messages) == []


def test_stop_agent_run_inside_a_parallel_batch_lets_the_batch_finish_and_skips_the_rest(scripted):
    ran: list[str] = []

    @tool(concurrency_safe=True)
    async def check(name: str) -> str:
        """Check something.

        Args:
            name: what
        """
        await asyncio.sleep(0.05)
        ran.append(name)
        if name == "stop":
            raise StopAgentRun("Stopped by the check.")
        return f"checked {name}"

    @tool
    def write(name: str) -> str:
        """Write something (not concurrency-safe).

        Args:
            name: what
        """
        ran.append(f"write {name}")
        return "written"

    server = scripted(turns.tool_calls(turns.call("check", {"name": "stop"}, id="c1"),
                                       turns.call("check", {"name": "other"}, id="c2"),
                                       turns.call("write", {"name": "w"}, id="w1"),
                                       turns.call("check", {"name": "late"}, id="c3")))
    agent = Agent(scripted_model(server), tools=[check, write])
    events = asyncio.run(collect(agent, "go"))
    assert (events[-1].content, events[-1].stop_reason) == ("Stopped by the check.", "stopped_by_tool")
    assert sorted(ran) == ["other", "stop"]  # the batch mate finished; nothing after the batch ran
    skipped = "Not run: the run was stopped by the 'check' call before this one."
    assert [(m["tool_call_id"], m["content"]) for m in agent.messages if m["role"] == "tool"] == [
        ("c1", "Stopped by the check."), ("c2", "checked other"), ("w1", skipped), ("c3", skipped)]
    assert [(e.call_id, e.status) for e in events if e.type == "tool_call_finished"][-2:] == [
        ("w1", "cancelled"), ("c3", "cancelled")]
    assert tool_call_problems(agent.messages) == [] and len(server.requests) == 1


def test_retry_agent_run_hands_the_message_to_the_model(scripted):
    def validate_input(query: str) -> str:
        """Validate.

        Args:
            query: the query
        """
        if not query.strip():
            raise RetryAgentRun("query must not be empty, give a meaningful query")
        return f"processed: {query}"

    server = scripted(turns.tool_calls(turns.call("validate_input", {"query": " "}, id="r1")),
                      turns.tool_calls(turns.call("validate_input", {"query": "sales"}, id="r2")),
                      turns.text("done"))
    events = asyncio.run(collect(Agent(scripted_model(server), tools=[validate_input]), "go"))
    assert tool_results(server.requests[1]) == {"r1": "query must not be empty, give a meaningful query"}
    assert tool_results(server.requests[2])["r2"] == "processed: sales"
    assert events[-1].content == "done" and events[-1].stop_reason == "completed"


def test_stop_after_tool_call_and_show_result(scripted):
    @tool(stop_after_tool_call=True, show_result=True)
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: the file
        """
        return f"Deleted: {path}"

    server = scripted(turns.tool_calls(turns.call("delete_file", {"path": "a.txt"}, id="d")), turns.text("never"))
    events = asyncio.run(collect(Agent(scripted_model(server), tools=[delete_file]), "delete"))
    finished = next(e for e in events if e.type == "tool_call_finished")
    assert finished.show_result is True and finished.result == "Deleted: a.txt"
    assert (events[-1].content, events[-1].stop_reason) == ("Deleted: a.txt", "stopped_by_tool")
    assert len(server.requests) == 1 and server.pending == 1


def test_tool_call_limit_tells_the_model_and_withdraws_tools(scripted):
    def ping(n: int) -> str:
        """Ping.

        Args:
            n: a number
        """
        return f"pong {n}"

    server = scripted(
        turns.tool_calls(turns.call("ping", {"n": 1}, id="p1")),
        turns.tool_calls(turns.call("ping", {"n": 2}, id="p2"), turns.call("ping", {"n": 3}, id="p3")),
        turns.text("Answer after two pings."),
    )
    agent = Agent(scripted_model(server), tools=[ping], tool_config=ToolConfig(tool_call_limit=2))
    events = asyncio.run(collect(agent, "ping a lot"))
    results = tool_results(server.requests[2])
    assert results["p2"] == "pong 2"
    assert results["p3"] == (
        "Error: not run: the tool call limit for this run (2) was reached. Answer with what you have."
        "\n\n[Tool call limit reached: this run may make at most 2 tool calls. Tools are no longer available; "
        "answer the user now with what you have.]"
    )
    assert "tools" in server.requests[1] and "tools" not in server.requests[2]
    assert [e.status for e in events if e.type == "tool_call_finished"] == ["ok", "ok", "limit"]
    assert (events[-1].content, events[-1].stop_reason) == ("Answer after two pings.", "tool_call_limit")


def test_tool_call_limit_ends_a_run_whose_model_keeps_calling(scripted):
    def ping() -> str:
        """Ping."""
        return "pong"

    server = scripted(turns.repeat_tool("ping", 5))
    result = Agent(scripted_model(server), tools=[ping], tool_config=ToolConfig(tool_call_limit=1)).run_sync("x")
    assert result.stop_reason == "tool_call_limit"
    assert result.content == "Stopped: the tool call limit (1) was reached."
    assert len(server.requests) == 2
    assert result.messages[-1]["content"].startswith("Error: not run: the tool call limit for this run (1)")


# -- errors the model must read -------------------------------------------------------------


def test_unknown_tool_malformed_arguments_and_raising_tool(scripted):
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: first
            b: second
        """
        return a + b

    def broken() -> str:
        """Always fails."""
        raise ValueError("disk on fire")

    server = scripted(
        turns.tool_calls(turns.call("nope", {}, id="u"), turns.call("add", '{"a": 1, "b": ', id="m"),
                         turns.call("add", {"a": "x", "b": 2}, id="v"), turns.call("broken", {}, id="e"),
                         turns.call("add", {"a": 2, "b": 3}, id="ok")),
        turns.text("done"),
    )
    events = asyncio.run(collect(Agent(scripted_model(server), tools=[add, broken]), "go"))
    results = tool_results(server.requests[1])
    assert results["u"] == "Error: unknown tool 'nope'. Available tools: add, broken."
    assert results["m"].startswith("Error: could not parse arguments for tool 'add': arguments are not valid JSON")
    assert results["v"] == ("Error: Invalid arguments for tool 'add':\n"
                            '- a: Input should be a valid integer, unable to parse string as an integer (got "x")')
    assert results["e"] == "Error: ValueError: disk on fire"
    assert results["ok"] == "5"
    statuses = {e.call_id: e.status for e in events if e.type == "tool_call_finished"}
    assert statuses == {"u": "unknown_tool", "m": "malformed", "v": "malformed", "e": "error", "ok": "ok"}


def test_input_guardrail_blocks_and_a_raising_one_blocks_too(scripted):
    ran = []

    @tool(name="execute")
    def run_command(command: str) -> str:
        """Run a command.

        Args:
            command: the command
        """
        ran.append(command)
        return "ran"

    def check_no_rm_rf(tool_name: str, args: dict) -> bool:
        return not (tool_name == "execute" and "rm -rf" in args.get("command", ""))

    def broken_check(tool_name: str, args: dict) -> bool:
        if args.get("command") == "boom":
            raise RuntimeError("checker crashed")
        return True

    server = scripted(
        turns.tool_calls(turns.call("execute", {"command": "rm -rf /"}, id="a"),
                         turns.call("execute", {"command": "boom"}, id="b"),
                         turns.call("execute", {"command": "ls"}, id="c")),
        turns.text("ok"),
    )
    agent = Agent(scripted_model(server), tools=[run_command],
                  tool_input_guardrails=[ToolInputGuardrail(check_no_rm_rf), ToolInputGuardrail(broken_check)])
    events = asyncio.run(collect(agent, "go"))
    results = tool_results(server.requests[1])
    assert results["a"] == "Blocked: the call to 'execute' was not run (guardrail 'check_no_rm_rf')."
    assert results["b"] == ("Blocked: the call to 'execute' was not run "
                            "(guardrail 'broken_check' failed (RuntimeError: checker crashed)).")
    assert results["c"] == "ran"
    assert ran == ["ls"]
    assert [e.status for e in events if e.type == "tool_call_finished"] == ["blocked", "blocked", "ok"]


def test_output_guardrail_blocks_or_replaces_and_fails_closed(scripted):
    def read(name: str) -> str:
        """Read a secret.

        Args:
            name: which
        """
        return {"key": "API_KEY=sk-123", "doc": "public text", "odd": "weird"}[name]

    def redact(tool_name: str, result: str):
        if "API_KEY" in result:
            return False
        if result == "public text":
            return "public text (checked)"
        if result == "weird":
            raise ValueError("cannot judge")
        return True

    server = scripted(
        turns.tool_calls(*(turns.call("read", {"name": n}, id=n) for n in ("key", "doc", "odd"))),
        turns.text("ok"),
    )
    Agent(scripted_model(server), tools=[read], tool_output_guardrails=[ToolOutputGuardrail(redact)]).run_sync("x")
    assert tool_results(server.requests[1]) == {
        "key": "Blocked: the result of 'read' was withheld (guardrail 'redact').",
        "doc": "public text (checked)",
        "odd": "Blocked: the result of 'read' was withheld (guardrail 'redact' failed (ValueError: cannot judge)).",
    }


# -- approval and hooks --------------------------------------------------------------------


def test_denied_approval_and_approval_event_comes_first(scripted):
    ran = []

    @tool(is_destructive=True)
    def remove(path: str) -> str:
        """Remove a path.

        Args:
            path: the path
        """
        ran.append(path)
        return f"removed {path}"

    seen_before_hook: list[str] = []
    stream_log: list[str] = []

    async def approve(call):
        seen_before_hook.append(list(stream_log).count("approval_requested"))
        if call.args["path"] == "keep.txt":
            return Decision.deny("The user declined to run 'remove'. They said: keep that file")
        if call.args["path"] == "quiet.txt":
            return Decision.deny()
        return Decision.allow()

    server = scripted(
        turns.tool_calls(turns.call("remove", {"path": "keep.txt"}, id="k"), turns.call("remove", {"path": "quiet.txt"},
                                                                                        id="q"),
                         turns.call("remove", {"path": "tmp.txt"}, id="t")),
        turns.text("ok"),
    )
    agent = Agent(scripted_model(server), tools=[remove], approve=approve)

    async def consume():
        async for event in agent.run_stream("clean up"):
            stream_log.append(event.type)

    asyncio.run(consume())
    results = tool_results(server.requests[1])
    assert results == {
        "k": "The user declined to run 'remove'. They said: keep that file",
        "q": "Permission denied: the user did not allow 'remove' to run.",
        "t": "removed tmp.txt",
    }
    assert ran == ["tmp.txt"]
    assert seen_before_hook == [1, 2, 3]  # the consumer had each ApprovalRequested before the hook ran
    assert stream_log.count("approval_requested") == 3


def test_approval_hook_that_raises_denies_and_non_destructive_tools_are_not_asked(scripted):
    asked = []

    @tool(is_destructive=True)
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    def harmless() -> str:
        """Harmless."""
        return "fine"

    def approve(call):
        asked.append(call.name)
        raise RuntimeError("ui gone")

    server = scripted(turns.tool_calls(turns.call("wipe", {}, id="w"), turns.call("harmless", {}, id="h")),
                      turns.text("ok"))
    Agent(scripted_model(server), tools=[wipe, harmless], approve=approve).run_sync("x")
    assert tool_results(server.requests[1]) == {
        "w": "Permission denied: the approval check failed (Error: RuntimeError: ui gone); 'wipe' was not run.",
        "h": "fine",
    }
    assert asked == ["wipe"]


def test_lifecycle_hooks_see_each_call_and_can_block(scripted):
    log: list[str] = []

    def before(call):
        log.append(f"before {call.name} {call.args}")
        if call.args.get("x") == 3:
            return "x=3 is not allowed by policy"
        return None

    async def after(call):
        log.append(f"after {call.name} {call.result}")

    def double(x: int) -> int:
        """Double.

        Args:
            x: number
        """
        return 2 * x

    server = scripted(turns.tool_calls(turns.call("double", {"x": 2}, id="a"), turns.call("double", {"x": 3}, id="b")),
                      turns.text("ok"))
    Agent(scripted_model(server), tools=[double], hooks=ToolHooks(before=before, after=after)).run_sync("x")
    assert log == ["before double {'x': 2}", "after double 4", "before double {'x': 3}"]
    assert tool_results(server.requests[1])["b"] == (
        "Blocked: the call to 'double' was not run (x=3 is not allowed by policy).")


# -- cancellation and events from tools ----------------------------------------------------


def test_cancellation_mid_tool_records_cancelled_results_and_the_agent_goes_on(scripted):
    state = {"cancelled": False}

    @tool(concurrency_safe=True)
    async def slow() -> str:
        """Slow."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "never"

    @tool(concurrency_safe=True)
    def quick() -> str:
        """Quick."""
        return "quick result"

    later_ran = []

    def later() -> str:
        """Not concurrency-safe: runs after the batch."""
        later_ran.append(1)
        return "never"

    server = scripted(turns.tool_calls(turns.call("quick", {}, id="q"), turns.call("slow", {}, id="s"),
                                       turns.call("later", {}, id="after")),
                      turns.text("second run answer"))
    agent = Agent(scripted_model(server), tools=[slow, quick, later])

    async def main():
        seen = []

        async def consume():
            async for event in agent.run_stream("go"):
                seen.append(event)

        task = asyncio.create_task(consume())
        while not any(e.type == "tool_call_started" and e.name == "slow" for e in seen):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - start < 1.0
        return await agent.run("and now?")

    result = asyncio.run(main())
    assert state["cancelled"] is True and later_ran == []
    cancelled = "Cancelled: the user interrupted the run before this call finished."
    assert agent.messages[1:5] == [
        agent.messages[1],
        {"role": "tool", "tool_call_id": "q", "content": "quick result"},
        {"role": "tool", "tool_call_id": "s", "content": cancelled},
        {"role": "tool", "tool_call_id": "after", "content": cancelled},
    ]
    assert result.content == "second run answer"
    assert len(server.requests) == 2
    assert tool_results(server.requests[1]) == {"q": "quick result", "s": cancelled, "after": cancelled}
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": "and now?"}


def test_tool_context_emit_pushes_events_into_the_live_stream(scripted):
    @tool
    async def subtask(ctx: ToolContext, topic: str) -> str:
        """Do a sub-task.

        Args:
            topic: what
        """
        assert ctx.agent is not None and ctx.call_id == "t1"
        ctx.emit(TextDelta(f"working on {topic}"))
        await asyncio.sleep(0.05)
        await asyncio.to_thread(ctx.emit, TextDelta("from a thread"))
        return "sub-answer"

    server = scripted(turns.tool_calls(turns.call("subtask", {"topic": "docs"}, id="t1")), turns.text("ok"))
    agent = Agent(scripted_model(server), tools=[subtask])
    events = asyncio.run(collect(agent, "x"))
    kinds = [(e.type, e.source) for e in events]
    started = kinds.index(("tool_call_started", ""))
    finished = kinds.index(("tool_call_finished", ""))
    inner = [e for e in events[started:finished] if e.source]
    assert [(e.text, e.source) for e in inner] == [("working on docs", "task:t1"), ("from a thread", "task:t1")]
    assert server.requests[0]["tools"][0]["function"]["parameters"]["properties"] == {
        "topic": {"type": "string", "description": "what"}}
    result = agent.messages[-2]
    assert result == {"role": "tool", "tool_call_id": "t1", "content": "sub-answer"}


def test_cancelling_during_the_model_stream_keeps_the_agent_usable(scripted):
    server = scripted(turns.text("a long answer that streams slowly " * 4, chunk_delay=0.05), turns.text("fresh"))
    agent = Agent(scripted_model(server))

    async def main():
        seen = []

        async def consume():
            async for event in agent.run_stream("first"):
                seen.append(event)

        task = asyncio.create_task(consume())
        while not any(e.type == "text_delta" for e in seen):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await agent.run("second")

    result = asyncio.run(main())
    assert result.content == "fresh"
    # The interrupted prompt stays in the history, closed by what the model had written of its
    # answer and a note that the user cut it there (issue 28, item 10: roles keep alternating,
    # and the model knows what the user saw before they stopped it).
    first, interrupted, second = server.requests[1]["messages"]
    assert first == {"role": "user", "content": "first"} and second == {"role": "user", "content": "second"}
    assert interrupted["role"] == "assistant"
    written, note = interrupted["content"].split("\n\n")
    assert written and "a long answer that streams slowly".startswith(written[:30])
    assert note == "[The user interrupted this answer here.]"
    assert agent.messages == [*server.requests[1]["messages"], {"role": "assistant", "content": "fresh"}]


def test_cancelling_while_the_approval_hook_waits_records_the_call_as_cancelled(scripted):
    @tool(is_destructive=True)
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    asked = asyncio.Event()

    async def approve(call):
        asked.set()
        await asyncio.sleep(30)  # the user never answers
        return Decision.allow()

    server = scripted(turns.tool_calls(turns.call("wipe", {}, id="w")), turns.text("ok"))
    agent = Agent(scripted_model(server), tools=[wipe], approve=approve)

    async def main():
        task = asyncio.create_task(agent.run("wipe it"))
        await asyncio.wait_for(asked.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        agent.approve = None
        return await agent.run("never mind")

    assert asyncio.run(main()).content == "ok"
    assert tool_results(server.requests[1]) == {
        "w": "Cancelled: the user interrupted the run before this call finished."}


def test_closing_the_stream_early_stops_the_run(scripted):
    @tool
    async def slow() -> str:
        """Slow."""
        await asyncio.sleep(30)
        return "never"

    server = scripted(turns.tool_calls(turns.call("slow", {}, id="s")), turns.text("after"))
    agent = Agent(scripted_model(server), tools=[slow])

    async def main():
        stream = agent.run_stream("go")
        async for event in stream:
            if event.type == "tool_call_started":
                break
        start = time.monotonic()
        await stream.aclose()
        assert time.monotonic() - start < 1.0
        return await agent.run("again")

    assert asyncio.run(main()).content == "after"
    assert tool_results(server.requests[1]) == {
        "s": "Cancelled: the user interrupted the run before this call finished."}


def test_non_streaming_model_runs_the_same_loop(scripted):
    def echo(text: str) -> str:
        """Echo.

        Args:
            text: the text
        """
        return text

    server = scripted(turns.tool_calls(turns.call("echo", {"text": "hi"}, id="e"), content="Echoing."),
                      turns.text("echoed"))
    events = asyncio.run(collect(Agent(scripted_model(server, stream=False), tools=[echo]), "x"))
    assert "stream" not in server.requests[0]
    assert [e.text for e in events if e.type == "text_delta"] == ["Echoing.", "echoed"]  # one delta per answer
    assert events[-1].content == "echoed"
    assert tool_results(server.requests[1]) == {"e": "hi"}
