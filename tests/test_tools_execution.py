"""Argument parsing, validation and execution of tool calls."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from typing import Any, Literal, Optional

import pytest

from agentica_cli.tools import (
    Function,
    FunctionCall,
    RetryAgentRun,
    StopAgentRun,
    Tool,
    ToolContext,
    tool,
)
from agentica_cli.tools.base import RetryAgentRun as RetryFromBase
from agentica_cli.tools.base import StopAgentRun as StopFromBase


def process_data(
    input_text: str,
    max_items: int = 10,
    include_meta: bool = False,
    format: Literal["json", "csv", "txt"] = "json",
    tags: Optional[list[str]] = None,
) -> dict[str, Any]:
    """Process data and return the result."""
    return {"input_text": input_text, "max_items": max_items, "format": format, "tags": tags}


def run(fn: Any, arguments: Any, context: ToolContext | None = None, **flags: Any) -> FunctionCall:
    call = FunctionCall(Function.from_callable(fn, **flags), "call_1", arguments)
    return asyncio.run(call.execute(context))


# -- validation and coercion ------------------------------------------------------------


def test_valid_arguments_are_coerced_by_the_signature() -> None:
    call = run(process_data, '{"input_text": "abc", "max_items": "10", "include_meta": "true"}')
    assert call.error is None
    assert call.args == {
        "input_text": "abc",
        "max_items": 10,
        "include_meta": True,
        "format": "json",
        "tags": None,
    }
    # Structured return values reach the model as JSON.
    assert json.loads(call.result) == {"input_text": "abc", "max_items": 10, "format": "json", "tags": None}


def test_bad_literal_value_lists_the_allowed_values() -> None:
    call = run(process_data, {"input_text": "abc", "format": "xml"})
    assert call.error == call.result
    assert call.result == (
        "Error: Invalid arguments for tool 'process_data':\n"
        "- format: Input should be 'json', 'csv' or 'txt' (got \"xml\")"
    )


def test_wrong_type_names_the_argument_and_value() -> None:
    call = run(process_data, {"input_text": "abc", "max_items": "ten"})
    assert call.result == (
        "Error: Invalid arguments for tool 'process_data':\n"
        "- max_items: Input should be a valid integer, unable to parse string as an integer (got \"ten\")"
    )


def test_missing_required_and_unexpected_arguments() -> None:
    call = run(process_data, {"max_items": 3, "colour": "red"})
    assert call.result == (
        "Error: Invalid arguments for tool 'process_data':\n"
        "- input_text: missing required argument\n"
        "- colour: unexpected argument"
    )


def test_invalid_arguments_never_run_the_tool() -> None:
    ran = []

    def write(path: str, count: int) -> str:
        ran.append(path)
        return "ok"

    call = run(write, {"path": "x", "count": "many"})
    assert call.error is not None and ran == []


def test_malformed_json_is_reported_with_a_preview_and_never_runs() -> None:
    ran = []

    def echo(text: str) -> str:
        ran.append(text)
        return text

    call = run(echo, '{"text": "hello world" "oops"}', sanitize_arguments=False)
    assert ran == []
    assert call.result.startswith("Error: could not parse arguments for tool 'echo': arguments are not valid JSON")
    assert '{"text": "hello world" "oops"}' in call.result


def test_truncated_arguments_are_not_repaired_even_with_sanitize() -> None:
    ran = []

    def write_file(path: str, content: str) -> str:
        ran.append(content)
        return "written"

    call = run(write_file, '{"path": "a.py", "content": "def f():\\n    return')
    assert ran == []
    assert "could not be repaired safely" in call.result
    assert call.result.startswith("Error: could not parse arguments for tool 'write_file'")


def test_long_malformed_arguments_are_previewed_not_echoed_whole() -> None:
    def echo(text: str) -> str:
        return text

    raw = '{"text": ' + "x" * 5000
    call = run(echo, raw, sanitize_arguments=False)
    assert "(5009 chars)" in call.result
    assert len(call.result) < 500


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('```json\n{"text": "a", "n": 1}\n```', {"text": "a", "n": 1}),
        ('{"text": "a", "n": 1,}', {"text": "a", "n": 1}),
        ("{'text': 'a', 'n': 1}", {"text": "a", "n": 1}),
        ('"{\\"text\\": \\"a\\", \\"n\\": 1}"', {"text": "a", "n": 1}),
        ('{"text": "a", "n": 1, "tags": ["x", "y",],}', {"text": "a", "n": 1, "tags": ["x", "y"]}),
    ],
)
def test_repairable_arguments_are_repaired(raw: str, expected: dict[str, Any]) -> None:
    def echo(text: str, n: int, tags: Optional[list[str]] = None) -> str:
        return "ok"

    call = run(echo, raw)
    assert call.error is None, call.result
    assert {k: v for k, v in call.args.items() if v is not None} == expected


def test_string_values_with_python_words_and_quotes_pass_unchanged() -> None:
    def echo(text: str) -> str:
        return text

    tricky = "None of 'this' is \"True\"; False == None"
    # Valid JSON and repaired JSON (trailing comma) must both keep the string byte for byte.
    for raw in (json.dumps({"text": tricky}), json.dumps({"text": tricky})[:-1] + ",}"):
        call = run(echo, raw)
        assert call.error is None, call.result
        assert call.result == tricky


def test_arguments_that_are_not_an_object_are_refused() -> None:
    def echo(text: str) -> str:
        return text

    call = run(echo, "[1, 2]")
    assert call.result == (
        "Error: could not parse arguments for tool 'echo': arguments must be a JSON object, got list: [1, 2]"
    )


def test_empty_arguments_mean_no_arguments() -> None:
    def ping() -> str:
        return "pong"

    assert run(ping, "").result == "pong"
    assert run(ping, None).result == "pong"


# -- entrypoints --------------------------------------------------------------------------


def test_sync_function_runs_in_a_worker_thread() -> None:
    seen = []

    def where() -> str:
        seen.append(threading.current_thread() is threading.main_thread())
        return "done"

    assert run(where, {}).result == "done"
    assert seen == [False]


def test_async_function_is_awaited() -> None:
    async def fetch(symbol: str) -> str:
        await asyncio.sleep(0)
        return f"{symbol}: 1.0"

    assert run(fetch, {"symbol": "AAPL"}).result == "AAPL: 1.0"


def test_tool_decorated_async_function_stays_async() -> None:
    @tool(name="fetch_price", concurrency_safe=True)
    async def fetch(symbol: str) -> str:
        """Fetch a price."""
        await asyncio.sleep(0)
        return f"{symbol}: 2.0"

    assert inspect.iscoroutinefunction(fetch)
    assert asyncio.run(fetch("X")) == "X: 2.0"
    call = run(fetch, {"symbol": "MSFT"})
    assert (call.name, call.result) == ("fetch_price", "MSFT: 2.0")


def test_bound_method_of_a_tool_subclass() -> None:
    class Counter(Tool):
        def __init__(self) -> None:
            super().__init__(name="counter")
            self.value = 0
            self.register(self.add)

        def add(self, amount: int = 1) -> int:
            """Add to the counter."""
            self.value += amount
            return self.value

    counter = Counter()
    call = asyncio.run(FunctionCall(counter.functions["add"], "c1", '{"amount": 5}').execute())
    assert (call.result, counter.value) == ("5", 5)


def test_sync_tools_do_not_block_the_event_loop() -> None:
    def slow() -> str:
        time.sleep(0.4)
        return "slow done"

    async def main() -> tuple[str, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            for _ in range(6):
                await asyncio.sleep(0.05)
                ticks += 1

        call = FunctionCall(Function.from_callable(slow), "c1", {})
        result, _ = await asyncio.gather(call.execute(), ticker())
        return result.result or "", ticks

    result, ticks = asyncio.run(main())
    assert result == "slow done"
    assert ticks == 6  # the ticker ran to completion while the sync tool slept


def test_exception_becomes_an_error_string() -> None:
    def boom(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    call = run(boom, {"path": "x.txt"})
    assert call.result == call.error == "Error: FileNotFoundError: no such file: x.txt"
    assert call.control is None
    assert call.ended_at is not None and call.elapsed >= 0


def test_exception_from_async_tool_becomes_an_error_string() -> None:
    async def boom() -> str:
        raise ValueError("bad value")

    assert run(boom, {}).result == "Error: ValueError: bad value"


def test_stop_and_retry_are_recognised() -> None:
    def validate(query: str) -> str:
        if not query.strip():
            raise RetryAgentRun("query must not be empty")
        if "drop" in query.lower():
            raise StopAgentRun("dangerous SQL keyword, refusing")
        return f"ok: {query}"

    retry = run(validate, {"query": "  "})
    assert (retry.control, retry.result, retry.error) == ("retry", "query must not be empty", None)
    stop = run(validate, {"query": "DROP TABLE x"})
    assert (stop.control, stop.result, stop.error) == ("stop", "dangerous SQL keyword, refusing", None)
    ok = run(validate, {"query": "select 1"})
    assert (ok.control, ok.result) == (None, "ok: select 1")
    assert StopFromBase is StopAgentRun and RetryFromBase is RetryAgentRun


def test_context_is_injected_and_not_required_from_the_model() -> None:
    def who(name: str, ctx: ToolContext) -> str:
        return f"{name} via {ctx.call_id} ({ctx.extra['user']})"

    call = run(who, {"name": "a"}, ToolContext(call_id="call_9", extra={"user": "ann"}))
    assert call.result == "a via call_9 (ann)"


def test_cancellation_propagates_to_the_caller() -> None:
    async def forever() -> str:
        await asyncio.sleep(10)
        return "never"

    async def main() -> FunctionCall:
        call = FunctionCall(Function.from_callable(forever), "c1", {})
        task = asyncio.create_task(call.execute())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return call

    call = asyncio.run(main())
    assert call.result is None and call.ended_at is not None


def test_explicit_schema_skips_signature_validation() -> None:
    async def remote(**kwargs: Any) -> str:
        return json.dumps(kwargs, sort_keys=True)

    fn = Function("remote", remote, "A remote tool.", {"type": "object", "properties": {"q": {"type": "string"}}})
    call = asyncio.run(FunctionCall(fn, "c1", '{"q": "x", "n": 2}').execute())
    assert call.result == '{"n": 2, "q": "x"}'
    assert fn.to_openai()["function"]["parameters"] == {"type": "object", "properties": {"q": {"type": "string"}}}


def test_sixteen_sync_calls_run_at_once_on_a_small_machine() -> None:
    # The default executor would run only cores+4 of these at a time. Each call waits at a
    # barrier for all sixteen: it opens only if all of them are running at once, whatever the
    # machine's load (a run that holds fewer breaks the barrier and every call fails).
    barrier = threading.Barrier(16, timeout=20)

    def wait() -> str:
        barrier.wait()
        return "ok"

    async def main() -> list[FunctionCall]:
        fn = Function.from_callable(wait)
        return await asyncio.gather(*(FunctionCall(fn, f"c{i}", {}).execute() for i in range(16)))

    calls = asyncio.run(main())
    assert [c.result for c in calls] == ["ok"] * 16, [c.error for c in calls]
