"""A scripted OpenAI-compatible model server for testing agents over real HTTP.

In-process (a background thread on 127.0.0.1, a free port)::

    from agentica_cli.testing import ScriptedModelServer, turns

    with ScriptedModelServer([
        turns.tool_calls(turns.call("get_weather", {"city": "Paris"})),
        turns.text("It is sunny in Paris."),
    ]) as server:
        agent = Agent(OpenAIChat(id="test", base_url=server.base_url, api_key="x"), tools=[get_weather])
        agent.run_sync("Weather?")
        assert server.requests[1]["messages"][-1]["role"] == "tool"

Turns (`agentica_cli.testing.turns`, each a plain dict, served one per request):

- `text(content, reasoning=None)`: an assistant answer.
- `tool_calls(call(name, args_dict_or_raw_string, id=None), ..., content="", reasoning=None)`:
  tool calls; a str is sent verbatim, so malformed JSON arguments can be scripted.
- `error(status, message="", retry_after=None, body=None, content_type=None)`: an HTTP error
  (429, 500, 401, ...), with a `Retry-After` header when given; `body` sends a provider's own
  error shape instead (a dict or list as JSON, a str as it is, e.g. an HTML page).
- `cut(turn, after=N)`: the stream closes after N SSE chunks (no `[DONE]`); a non-streamed
  request gets its connection closed without an answer.
- `stall(turn, after=1, every=1.0, send="comment")`: the stream stops making progress after
  N SSE chunks and then only sends `: keep-alive` comments (or `send="empty"` chunks, or
  `"nothing"`) every `every` seconds; `hang()`: the request is read and never answered, not
  even with headers. Both end when the client disconnects, the server stops, or after
  `limit=` seconds (60), so they cannot hang a test.
- `repeat_tool(name, count, arguments=None, final="done")`: for benches, answers `count`
  requests with one cheap tool call each, then `final` text.
- Any turn takes `delay=` (seconds before answering), `chunk_delay=` (between SSE chunks)
  and `usage={"prompt_tokens": n, "completion_tokens": m}` (otherwise estimated).
- A turn may be a callable `f(request_body) -> turn` (in-process only).

Streaming (`"stream": true`) answers as SSE: text in pieces, each tool call as a header
chunk (id, name) followed by its arguments split over several chunks, a finish chunk, a
usage chunk when `stream_options.include_usage` is set, then `data: [DONE]`. Non-streamed
requests get one `chat.completion` JSON. When the script runs out the server answers 400
with "no scripted turn left", so a test never hangs on an unexpected request.

`ScriptedModelServer(routes={"GET /v1/models": {...}, "POST /api/show": {...}})` answers those
paths with fixed JSON (or `(status, payload)`), e.g. a replay of an Ollama or vLLM server's
model list; without a route, `GET .../models` lists one model, `scripted`.

Recorded: `server.requests` (every request body, in order) and `server.request_log`
(`RecordedRequest` with path, headers, body, `received_at` / `finished_at` perf-counter
times). `tool_call_problems(messages)` checks the one-result-per-call invariant.

As a separate process (for driving the `agentica` command)::

    python -m agentica_cli.testing.server --script turns.json --port-file port.txt \\
        --requests-file requests.jsonl

or from Python `with ScriptedServerProcess([...]) as server:` (`.base_url`, `.requests`).

In-process, for session logic only (no HTTP: `agentica_cli.testing.fake_model`)::

    model = ScriptedModel([turns.tool_calls(turns.call("get_weather", {"city": "Paris"})), turns.text("Sunny.")])
    Agent(model, tools=[get_weather]).run_sync("Weather?")
    assert model.requests[1]["messages"][-1]["role"] == "tool"

`FunctionModel(fn)` asks `fn(request_body)` for each turn. Both refuse a broken history (a
tool call without its result) as providers do.
"""

from __future__ import annotations

import importlib
from typing import Any

# Where each public name lives. Looked up on first use, so that `python -m
# agentica_cli.testing.server` does not find its own module imported by the package first
# (runpy warns about that, and the module would be executed twice).
_HOMES = {
    "RecordedRequest": "agentica_cli.testing.server",
    "ScriptedModelServer": "agentica_cli.testing.server",
    "ScriptedServerProcess": "agentica_cli.testing.process",
    "tool_call_problems": "agentica_cli.testing.checks",
    "ScriptedModel": "agentica_cli.testing.fake_model",
    "FunctionModel": "agentica_cli.testing.fake_model",
}

__all__ = ["FunctionModel", "RecordedRequest", "ScriptedModel", "ScriptedModelServer", "ScriptedServerProcess",
           "tool_call_problems", "turns"]


def __getattr__(name: str) -> Any:
    if name == "turns":
        return importlib.import_module("agentica_cli.testing.turns")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
