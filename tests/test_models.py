"""Model clients against the scripted server over real HTTP: streaming, retries, presets, keys."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentica_cli.models import (
    PROVIDERS,
    DeepSeek,
    MissingApiKeyError,
    ModelError,
    ModelReasoningDelta,
    ModelResponse,
    ModelRetry,
    ModelTextDelta,
    Ollama,
    OpenAIChat,
    OpenAILike,
    Qwen,
    RetryPolicy,
    ZhipuAI,
    create_model,
)
from agentica_cli.models.retry import parse_retry_after
from agentica_cli.testing import ScriptedModelServer, turns


def model_for(server: ScriptedModelServer, **kw) -> OpenAIChat:
    kw.setdefault("retry_base_delay", 0.01)
    return OpenAIChat(id="test-model", api_key="sk-test", base_url=server.base_url, **kw)


def collect(model: OpenAIChat, messages=None, tools=None) -> list:
    async def go():
        return [e async for e in model.response_stream(messages or [{"role": "user", "content": "hi"}], tools)]

    return asyncio.run(go())


def test_streamed_text_reasoning_and_usage():
    with ScriptedModelServer([turns.text("The answer is forty-two, clearly.", reasoning="think first",
                                         usage={"prompt_tokens": 11, "completion_tokens": 5})]) as server:
        events = collect(model_for(server))
        text = [e.text for e in events if isinstance(e, ModelTextDelta)]
        assert len(text) > 1 and "".join(text) == "The answer is forty-two, clearly."
        assert "".join(e.text for e in events if isinstance(e, ModelReasoningDelta)) == "think first"
        final = events[-1]
        assert isinstance(final, ModelResponse)
        assert final.content == "The answer is forty-two, clearly." and final.reasoning == "think first"
        assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.total_tokens) == (11, 5, 16)
        body = server.requests[0]
        assert body["model"] == "test-model" and body["stream"] is True
        assert body["stream_options"] == {"include_usage": True}
        assert server.request_log[0].headers["authorization"] == "Bearer sk-test"


def test_streamed_tool_calls_are_accumulated_from_deltas():
    tools = [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object"}}}]
    args = {"pattern": "def \\w+\\(", "path": "src", "note": "ünïcode"}
    with ScriptedModelServer([turns.tool_calls(turns.call("grep", args, id="a1"),
                                               turns.call("ls", '{"path": "."}', id="a2"), content="Let me look.")]
                             ) as server:
        final = collect(model_for(server), tools=tools)[-1]
        assert final.content == "Let me look."
        assert [(c.id, c.name) for c in final.tool_calls] == [("a1", "grep"), ("a2", "ls")]
        assert json.loads(final.tool_calls[0].arguments) == args
        assert final.tool_calls[1].arguments == '{"path": "."}'
        assert final.finish_reason == "tool_calls"
        assert server.requests[0]["tools"] == tools
        assert final.to_message() == {
            "role": "assistant", "content": "Let me look.",
            "tool_calls": [
                {"id": "a1", "type": "function", "function": {"name": "grep", "arguments": json.dumps(args)}},
                {"id": "a2", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}},
            ],
        }


def test_non_streaming_mode():
    with ScriptedModelServer([turns.tool_calls(turns.call("f", {"x": 1}, id="c"), content="hm")]) as server:
        events = collect(model_for(server, stream=False))
        assert [type(e).__name__ for e in events] == ["ModelTextDelta", "ModelResponse"]
        assert events[0].text == "hm"
        final = events[1]
        assert final.content == "hm" and final.tool_calls[0].arguments == '{"x": 1}'
        assert final.usage is not None and final.usage.total_tokens > 0
        assert "stream" not in server.requests[0]


@pytest.mark.parametrize("stream", [True, False])
def test_arguments_sent_as_an_object_are_read_as_json_text(stream):
    # Some local servers put a JSON object where the protocol says a string.
    turn = {"type": "tool_calls", "calls": [{"name": "f", "arguments": {"path": "a.py", "n": 2}, "id": "c"}]}
    with ScriptedModelServer([turn]) as server:
        final = collect(model_for(server, stream=stream))[-1]
        assert [(c.name, json.loads(c.arguments)) for c in final.tool_calls] == [("f", {"path": "a.py", "n": 2})]


def test_429_then_200_honours_retry_after():
    with ScriptedModelServer([turns.error(429, "slow down", retry_after=0.3), turns.text("ok")]) as server:
        start = time.monotonic()
        events = collect(model_for(server, retry_base_delay=5.0))  # Retry-After wins over the backoff
        elapsed = time.monotonic() - start
        retries = [e for e in events if isinstance(e, ModelRetry)]
        assert len(retries) == 1 and retries[0].delay == pytest.approx(0.3)
        assert "HTTP 429: slow down" in retries[0].reason
        assert events[-1].content == "ok"
        assert len(server.requests) == 2
        assert 0.3 <= elapsed < 2.0


def test_500_retries_are_bounded():
    with ScriptedModelServer([turns.error(500, "boom")] * 5) as server:
        with pytest.raises(ModelError) as err:
            collect(model_for(server, max_retries=2))
        assert len(server.requests) == 3
        assert err.value.status_code == 500
        assert str(err.value) == "HTTP 500: boom (gave up after 3 attempts)"
        assert server.pending == 2


@pytest.mark.parametrize("status,kind", [(401, "auth"), (400, "api"), (404, "api")])
def test_client_errors_are_not_retried(status, kind):
    with ScriptedModelServer([turns.error(status, "nope"), turns.text("never")]) as server:
        with pytest.raises(ModelError) as err:
            collect(model_for(server))
        assert len(server.requests) == 1
        assert err.value.status_code == status and err.value.kind == kind
        assert err.value.message.startswith(f"HTTP {status}: nope")


def test_cut_stream_is_retried_and_only_the_second_attempt_counts():
    first = turns.cut(turns.tool_calls(turns.call("write", {"path": "a.txt", "content": "0123456789" * 3}),
                                       content="Writing"), after=4)
    with ScriptedModelServer([first, turns.tool_calls(turns.call("write", {"path": "b.txt"}, id="ok"))]) as server:
        events = collect(model_for(server))
        kinds = [type(e).__name__ for e in events]
        assert kinds.count("ModelRetry") == 1 and kinds[-1] == "ModelResponse"
        assert kinds.index("ModelTextDelta") < kinds.index("ModelRetry")  # the void attempt's text came first
        final = events[-1]
        assert [(c.id, c.arguments) for c in final.tool_calls] == [("ok", '{"path": "b.txt"}')]
        assert final.content == ""
        assert len(server.requests) == 2


def test_stream_ending_without_finish_is_retried():
    # A cut right after the last content chunk: the connection ends but no finish_reason came.
    with ScriptedModelServer([turns.cut(turns.text("partial"), after=2), turns.text("whole")]) as server:
        events = collect(model_for(server))
        assert events[-1].content == "whole" and len(server.requests) == 2


def test_a_stream_cut_after_its_finish_reason_keeps_the_complete_answer():
    # chunks: role, content, finish, usage -> the cut loses only the usage chunk and [DONE]
    call = turns.call("write", {"path": "a.txt"}, id="w")
    with ScriptedModelServer([turns.cut(turns.text("whole"), after=3),
                              turns.cut(turns.tool_calls(call), after=6)]) as server:
        model = model_for(server)
        events = collect(model)
        assert [type(e).__name__ for e in events] == ["ModelTextDelta", "ModelResponse"]
        assert (events[-1].content, events[-1].finish_reason, events[-1].usage) == ("whole", "stop", None)
        final = collect(model)[-1]
        assert [(c.id, c.arguments) for c in final.tool_calls] == [("w", '{"path": "a.txt"}')]
        assert len(server.requests) == 2


def test_connection_refused_by_a_local_server_is_reported_at_once():
    # Issue 24 item 17: a local server that refuses the connection is not running (or runs on
    # another port); retrying for ~16 s only delayed saying so. (A remote refusal is still
    # retried: tests/test_models_provider_errors.py.)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    model = OpenAIChat(id="m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1", max_retries=2,
                       retry_base_delay=0.01)
    with pytest.raises(ModelError) as err:
        collect(model)
    assert err.value.kind == "connection" and "gave up after" not in err.value.message
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in err.value.message


def test_model_is_usable_across_event_loops():
    with ScriptedModelServer([turns.text("one"), turns.text("two")]) as server:
        model = model_for(server)
        assert collect(model)[-1].content == "one"
        assert collect(model)[-1].content == "two"


def test_missing_key_names_the_variable_before_any_request(monkeypatch):
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with ScriptedModelServer([turns.text("never")]) as server:
        with pytest.raises(MissingApiKeyError) as err:
            create_model("deepseek", base_url=server.base_url)
        assert "DEEPSEEK_API_KEY" in str(err.value) and err.value.env_var == "DEEPSEEK_API_KEY"
        with pytest.raises(MissingApiKeyError, match="DEEPSEEK_API_KEY"):
            collect(DeepSeek(base_url=server.base_url))
        assert server.requests == []


def test_presets_defaults_and_env(monkeypatch):
    for var in ("DASHSCOPE_API_KEY", "DASHSCOPE_BASE_URL", "OPENAI_BASE_URL", "ZHIPUAI_BASE_URL", "OLLAMA_HOST",
                "OLLAMA_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DASHSCOPE_API_KEY", "dash-key")
    qwen = create_model("dashscope")
    assert isinstance(qwen, Qwen) and qwen.id == "qwen-plus"
    assert qwen.base_url == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert qwen.resolve_api_key() == "dash-key"
    assert ZhipuAI(api_key="z").base_url == "https://open.bigmodel.cn/api/paas/v4"
    assert ZhipuAI.api_key_env == "ZHIPUAI_API_KEY"
    assert create_model("ollama").resolve_api_key() == "not-needed"
    assert isinstance(create_model("vllm", "my-model", base_url="http://127.0.0.1:9/v1"), OpenAILike)
    assert Ollama().base_url == "http://localhost:11434/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert OpenAIChat(api_key="k").base_url == "http://127.0.0.1:1/v1"
    assert set(PROVIDERS) == {"openai", "zhipuai", "deepseek", "moonshot", "qwen", "openrouter", "ollama",
                              "openai-like",  # issue 24: the platforms' other endpoints, local servers by name
                              "zai", "zhipuai-coding", "zai-coding", "moonshot-intl", "qwen-intl", "lmstudio",
                              "llamacpp", "vllm"}
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        create_model("nope")


def test_reasoning_content_is_not_sent_to_openais_own_api(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [{"role": "user", "content": "x"},
               {"role": "assistant", "content": None, "reasoning_content": "hm", "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c", "content": "r"}]
    sent = OpenAIChat(api_key="k").request_params(history, None)["messages"]
    assert sent == [history[0], {"role": "assistant", "content": None, "tool_calls": [call]}, history[2]]
    assert DeepSeek(api_key="k").request_params(history, None)["messages"] is history


def test_retry_policy_and_retry_after_parsing():
    policy = RetryPolicy(max_retries=5, base_delay=1.0, max_delay=4.0, max_retry_after=10.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 4.0]
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=100.0) == 10.0
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({}) is None


def test_importing_the_package_and_agent_does_not_import_openai():
    code = ("import sys, agentica_cli, agentica_cli.agent, agentica_cli.models, agentica_cli.testing;"
            "from agentica_cli import Agent, DeepSeek, OpenAIChat, ToolConfig;"
            "from agentica_cli.agent import events;"
            "print(sorted(m for m in ('openai', 'httpx', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr


class _RawAnswer(BaseHTTPRequestHandler):
    """Answers every POST with `self.server.body` (whatever bytes a broken server might send)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        # counted before the answer is written: the client may have read it all (and the test
        # checked the count) before this thread runs again
        self.server.hits += 1
        body, content_type = self.server.body, self.server.content_type
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _RawServer:
    """A real HTTP server on 127.0.0.1 that answers every POST with the same raw bytes."""

    def __init__(self, body: bytes, content_type: str):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RawAnswer)
        self.httpd.body, self.httpd.content_type, self.httpd.hits = body, content_type, 0

    @property
    def hits(self) -> int:
        return self.httpd.hits

    def __enter__(self) -> str:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _sse(*chunks: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def test_tool_call_deltas_without_index_are_joined_by_id():
    # Some local servers leave `index` out: a new id (or a name) starts a call, bare argument
    # pieces continue the last one.
    def delta(**tc):
        return {"choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]}

    body = _sse(delta(id="a", type="function", function={"name": "read", "arguments": ""}),
                delta(function={"arguments": '{"path": '}), delta(function={"arguments": '"x.py"}'}),
                delta(id="b", type="function", function={"name": "ls", "arguments": "{}"}),
                delta(id="b", function={"arguments": ""}),
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    with _RawServer(body, "text/event-stream") as base_url:
        final = collect(OpenAIChat(id="m", api_key="k", base_url=base_url))[-1]
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [("a", "read", '{"path": "x.py"}'),
                                                                      ("b", "ls", "{}")]


def test_a_server_that_ignores_stream_true_is_read_as_one_completion():
    completion = {"choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "whole answer"}}],
                  "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
    server = _RawServer(json.dumps(completion).encode(), "application/json")
    with server as base_url:
        events = collect(OpenAIChat(id="m", api_key="k", base_url=base_url))
    assert [type(e).__name__ for e in events] == ["ModelTextDelta", "ModelResponse"]
    assert (events[-1].content, events[-1].usage.total_tokens) == ("whole answer", 5)
    assert server.hits == 1


def test_a_web_page_instead_of_a_stream_is_an_error_at_once():
    server = _RawServer(b"<html><body>Welcome</body></html>", "text/html; charset=utf-8")
    with server as base_url, pytest.raises(ModelError) as err:
        collect(OpenAIChat(id="m", api_key="k", base_url=base_url, retry_base_delay=0.01))
    assert err.value.message == ("the server answered with a web page (text/html; charset=utf-8), not a chat "
                                 "completion stream; check that the base URL points at an OpenAI-compatible API")
    assert server.hits == 1


@pytest.mark.parametrize("body,content_type,stream,cause", [
    (b"data: [1, 2]\n\ndata: [DONE]\n\n", "text/event-stream", True, "AttributeError"),
    (b"data: {not json\n\ndata: [DONE]\n\n", "text/event-stream", True, "JSONDecodeError"),
    (b'data: {"choices": ["x"]}\n\ndata: [DONE]\n\n', "text/event-stream", True, "AttributeError"),
    (b'{"choices": ["x"]}', "application/json", False, "AttributeError"),
])
def test_an_answer_that_is_not_a_chat_completion_is_a_clear_model_error(body, content_type, stream, cause):
    server = _RawServer(body, content_type)
    with server as base_url, pytest.raises(ModelError) as err:
        collect(OpenAIChat(id="m", api_key="k", base_url=base_url, stream=stream, retry_base_delay=0.01))
    assert err.value.message.startswith(f"the server's answer is not a valid chat completion ({cause}: ")
    assert err.value.message.endswith("check that the base URL points at an OpenAI-compatible API")
    assert server.hits == 1  # not retried: another protocol will not turn into this one
