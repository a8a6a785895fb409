"""Failed requests as each provider answers them (issue 24, items 15-18), over real HTTP.

The bodies are the providers' own shapes and wordings, as their users have posted them:
OpenAI's documented error object; Zhipu code 1261 (NousResearch/hermes-agent#1877,
zeroclaw-labs/zeroclaw#4124) and 1113 with HTTP 429; DashScope's "Range of input length"
(QwenLM/qwen-code#98); xAI's "maximum prompt length" (cline/cline#3120); Gemini's JSON list
(google-gemini/gemini-cli#12214); llama.cpp's three wordings (ggml-org/llama.cpp#15780,
#19774, #17284); LM Studio's; Groq's 413 per-minute limit (continuedev/continue#10218);
OpenRouter's `error.metadata.raw` (anomalyco/opencode#24462); Moonshot's suspended account
(continuedev/continue#11443).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest
from conftest import scripted_model

from agentica_cli.agent import Agent
from agentica_cli.agent.events import Error, Notice
from agentica_cli.models import ModelError, OpenAIChat
from agentica_cli.models import provider_errors as pe
from agentica_cli.testing import ScriptedModelServer, turns


def ask(model: OpenAIChat) -> list:
    async def go():
        return [e async for e in model.response_stream([{"role": "user", "content": "hi"}])]

    return asyncio.run(go())


def failure(server: ScriptedModelServer, **options) -> ModelError:
    with pytest.raises(ModelError) as caught:
        ask(scripted_model(server, **options))
    return caught.value


OVERFLOWS = {
    "openai": (400, {"error": {"message": "This model's maximum context length is 128000 tokens. However, your "
                               "messages resulted in 130123 tokens. Please reduce the length of the messages.",
                               "type": "invalid_request_error", "param": "messages",
                               "code": "context_length_exceeded"}}),
    "zhipu 1261": (400, {"error": {"code": "1261", "message": "Prompt exceeds max length"}}),
    "dashscope": (400, {"error": {"code": "invalid_parameter_error", "param": None, "type": "invalid_request_error",
                                  "message": "<400> InternalError.Algo.InvalidParameter: Range of input length "
                                             "should be [1, 983616]"},
                        "request_id": "81a373d6-28bd-9968-8335-e22a2127c41b"}),
    "xai": (400, {"code": "Client specified an invalid argument",
                  "error": "This model's maximum prompt length is 131072 but the request contains 136973 tokens."}),
    "gemini (a list)": (400, [{"error": {
        "code": 400, "status": "INVALID_ARGUMENT",
        "message": "The input token count (134123) exceeds the maximum number of tokens allowed (131072).",
        "errors": [{"message": "The input token count (134123) exceeds the maximum number of tokens allowed "
                               "(131072).", "domain": "global", "reason": "badRequest"}]}}]),
    "llama.cpp 400": (400, {"error": {"code": 400, "message": "request (4390 tokens) exceeds the available context "
                                      "size (4096 tokens), try increasing it", "type": "exceed_context_size_error",
                                      "n_prompt_tokens": 4390, "n_ctx": 4096}}),
    "llama.cpp 500": (500, {"error": {"code": 500, "message": "Context size has been exceeded.",
                                      "type": "server_error"}}),
    "llama.cpp older": (500, {"error": {"code": 500, "message": "the request exceeds the available context size. try "
                                        "increasing the context size or enable context shift",
                                        "type": "exceed_context_size_error", "n_prompt_tokens": 1407, "n_ctx": 256}}),
    "lm studio": (400, {"error": "Trying to keep the first 5236 tokens when context the overflows. However, the model "
                                 "is loaded with context length of only 4096 tokens, which is not enough. Try to load "
                                 "the model with a larger context length, or provide a shorter input"}),
    "moonshot": (400, {"error": {"message": "Invalid request: Your request exceeded model token limit: 262144",
                                 "type": "invalid_request_error"}}),
    "mistral": (400, {"object": "error", "type": "invalid_request_message_error", "code": "3051",
                      "message": "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 "
                                 "maximum context length"}),
    "openrouter raw": (400, {"error": {"message": "Provider returned error", "code": 400, "metadata": {
        "provider_name": "Z.AI",
        "raw": json.dumps({"error": {"code": "1261", "message": "Prompt exceeds max length"}})}}}),
}


@pytest.mark.parametrize("name", list(OVERFLOWS))
def test_every_providers_context_overflow_is_recognised_at_once(name: str) -> None:
    status, body = OVERFLOWS[name]
    with ScriptedModelServer([turns.error(status, body=body), turns.text("never")]) as server:
        err = failure(server)
        assert len(server.requests) == 1  # never sent again as it is (llama.cpp's 500 included)
    assert err.kind == "context_length" and err.status_code == status
    assert not err.message.startswith(f"HTTP {status}: Error code")


def test_the_gemini_list_and_openrouter_raw_bodies_show_the_real_reason() -> None:
    gemini = OVERFLOWS["gemini (a list)"][1]
    raw = {"error": {"message": "Provider returned error", "code": 400, "metadata": {
        "provider_name": "Google AI Studio",
        "raw": json.dumps({"error": {
            "code": 400, "status": "INVALID_ARGUMENT",
            "message": "Function call is missing a thought_signature in functionCall parts."}})}}}
    with ScriptedModelServer([turns.error(400, body=gemini), turns.error(400, body=raw)]) as server:
        first, second = failure(server), failure(server)
    assert first.message == ("HTTP 400: The input token count (134123) exceeds the maximum number of tokens allowed "
                             "(131072).")
    assert second.message == ("HTTP 400: Google AI Studio: Function call is missing a thought_signature in "
                              "functionCall parts.")
    assert second.kind == "api"


@pytest.mark.parametrize("requested,retried", [(342389, False), (2000, True)])
def test_a_per_minute_limit_the_request_can_never_fit_is_not_retried(requested: int, retried: bool) -> None:
    message = (f"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used "
               f"29000, Requested {requested}. Please try again in 2ms." if retried else
               f"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested "
               f"{requested}. The input or output tokens must be reduced in order to run successfully.")
    body = {"error": {"message": message, "type": "tokens", "code": "rate_limit_exceeded"}}
    with ScriptedModelServer([turns.error(429, body=body), turns.text("fine")]) as server:
        if retried:  # it fits once the minute has passed
            assert ask(scripted_model(server))[-1].content == "fine"
        else:
            assert failure(server).kind == "rate_limit"
        assert len(server.requests) == (2 if retried else 1)


def test_groqs_413_per_minute_limit_is_not_an_overflow_and_says_what_it_is() -> None:
    body = {"error": {"message": "Request too large for model `llama-3.3-70b-versatile` in organization `org_01` "
                                 "service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 14137, "
                                 "please reduce your message size and try again.",
                      "type": "tokens", "code": "rate_limit_exceeded"}}
    with ScriptedModelServer([turns.error(413, body=body), turns.text("never")]) as server:
        err = failure(server)
        assert len(server.requests) == 1
    assert err.kind == "rate_limit"
    assert "per-minute token limit" in err.message and "Limit 12000, Requested 14137" in err.message


BILLING = {
    "openai insufficient_quota": (429, {"error": {
        "message": "You exceeded your current quota, please check your plan and billing details. For more "
                   "information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes.",
        "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}),
    "zhipu 1113": (429, {"error": {"code": "1113", "message": "余额不足或无可用资源包,请充值。"}}),
    "moonshot suspended": (429, {"error": {"message": "Your account org-ea6a80cc <ak-f8ty> is suspended due to "
                                           "insufficient balance, please recharge your account or check your plan "
                                           "and billing details", "type": "exceeded_current_quota_error"}}),
    "deepseek 402": (402, {"error": {"message": "Insufficient Balance", "type": "unknown_error", "param": None,
                                     "code": "invalid_request_error"}}),
}


@pytest.mark.parametrize("name", list(BILLING))
def test_billing_errors_fail_at_once_and_say_what_they_are(name: str) -> None:
    status, body = BILLING[name]
    with ScriptedModelServer([turns.error(status, body=body), turns.text("never")]) as server:
        started = time.monotonic()
        err = failure(server, retry_base_delay=10.0)  # a retry would take ten seconds at least
        elapsed = time.monotonic() - started
        assert len(server.requests) == 1
    assert elapsed < 5.0
    assert err.kind == "billing" and err.status_code == status
    assert "a billing or quota error" in err.message and "top it up" in err.message


def test_a_coding_plan_key_on_the_normal_glm_endpoint_is_told_the_coding_url() -> None:
    report = pe.read_error(BILLING["zhipu 1113"][1])
    hint = pe.billing_hint("https://open.bigmodel.cn/api/paas/v4/chat/completions", report)
    assert "https://open.bigmodel.cn/api/coding/paas/v4" in hint
    assert "coding" not in pe.billing_hint("https://open.bigmodel.cn/api/coding/paas/v4/chat/completions", report)


def test_a_401_on_a_split_platform_names_the_other_base_url() -> None:
    assert "https://api.moonshot.ai/v1" in pe.auth_hint("https://api.moonshot.cn/v1/chat/completions")
    assert "https://api.moonshot.cn/v1" in pe.auth_hint("https://api.moonshot.ai/v1/chat/completions")
    assert "https://api.z.ai/api/paas/v4" in pe.auth_hint("https://open.bigmodel.cn/api/paas/v4/chat/completions")
    assert pe.auth_hint("http://127.0.0.1:8000/v1/chat/completions") == "check the API key"
    with ScriptedModelServer([turns.error(401, body={"error": {"message": "Invalid Authentication",
                                                                 "type": "invalid_authentication_error"}})]) as server:
        err = failure(server)
    assert err.kind == "auth" and err.message == "HTTP 401: Invalid Authentication (check the API key)"


def test_the_401_hint_follows_the_url_the_request_went_to() -> None:
    import httpx2 as httpx
    import openai

    from agentica_cli.models.openai_chat import _classify

    request = httpx.Request("POST", "https://api.moonshot.cn/v1/chat/completions")
    body = {"error": {"message": "Invalid Authentication", "type": "invalid_authentication_error"}}
    response = httpx.Response(401, json=body, request=request)
    err = _classify(openai.AuthenticationError("Error code: 401", response=response, body=body))
    assert isinstance(err, ModelError) and err.kind == "auth"
    assert err.message == ("HTTP 401: Invalid Authentication (check the API key; a key from the international "
                           "platform (platform.moonshot.ai) needs base_url https://api.moonshot.ai/v1)")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("stream", [True, False])
def test_a_refused_local_connection_fails_fast_naming_the_url_and_what_to_check(stream: bool) -> None:
    port = _closed_port()
    model = OpenAIChat(id="m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1", stream=stream)  # default retries
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        ask(model)
    assert time.monotonic() - started <= 2.0
    err = caught.value
    assert err.kind == "connection"
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in err.message and "connection refused" in err.message
    assert "is the server running" in err.message and "LM Studio 1234" in err.message and "Ollama 11434" in err.message


def test_a_refused_remote_connection_is_retried_and_names_the_url() -> None:
    import httpx2 as httpx
    import openai

    from agentica_cli.models.openai_chat import _classify, _Retryable

    exc = openai.APIConnectionError(request=httpx.Request("POST", "https://gateway.example/v1/chat/completions"))
    exc.__cause__ = httpx.ConnectError("[Errno 111] Connection refused")
    failure = _classify(exc)
    assert isinstance(failure, _Retryable)
    assert failure.reason.startswith("could not connect to https://gateway.example/v1/chat/completions: "
                                     "connection refused; check the base URL")


CLOUDFLARE_524 = """<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>api.example.com | 524: A timeout occurred</title>
<meta charset="UTF-8" />
</head>
<body><div id="cf-wrapper"><h1>A timeout occurred</h1><p>Error code 524</p></div></body></html>
"""


def test_a_proxys_html_error_page_shows_the_code_once_and_the_pages_title() -> None:
    page = turns.error(524, body=CLOUDFLARE_524, content_type="text/html; charset=UTF-8")
    with ScriptedModelServer([page]) as server:
        err = failure(server, max_retries=0)
    assert err.message == ('HTTP 524: the server (or a proxy in front of it) answered with a web page: '
                           '"api.example.com | 524: A timeout occurred", not an API error (gave up after 1 attempt)')
    assert "Error code" not in err.message and "<html" not in err.message


def test_an_overflow_in_any_providers_wording_compacts_and_retries_once() -> None:
    history = []
    for i in range(6):
        history += [{"role": "user", "content": f"question {i} " + "q" * 2000},
                    {"role": "assistant", "content": f"answer {i}"}]
    for status, body in (OVERFLOWS["zhipu 1261"], OVERFLOWS["llama.cpp 500"]):
        with ScriptedModelServer([turns.error(status, body=body), turns.text("SUMMARY of the questions"),
                                  turns.text("the answer")]) as server:
            agent = Agent(scripted_model(server), messages=list(history))
            events = asyncio.run(_events(agent, "and now?"))
            assert len(server.requests) == 3
            assert "SUMMARY of the questions" in json.dumps(server.requests[2])
        assert [e for e in events if isinstance(e, Error)] == []
        assert any(isinstance(e, Notice) and e.kind == "compaction" for e in events)
        assert agent.messages[-1]["content"] == "the answer"


def test_groqs_413_does_not_compact() -> None:
    body = {"error": {"message": "Request too large for model `x` on tokens per minute (TPM): Limit 6000, Requested "
                                 "12328, please reduce your message size and try again.",
                      "type": "tokens", "code": "rate_limit_exceeded"}}
    history = [{"role": "user", "content": "q" * 3000}, {"role": "assistant", "content": "a"}] * 4
    with ScriptedModelServer([turns.error(413, body=body), turns.text("SUMMARY")]) as server:
        agent = Agent(scripted_model(server), messages=list(history))
        events = asyncio.run(_events(agent, "and now?"))
        assert len(server.requests) == 1
    errors = [e for e in events if isinstance(e, Error)]
    assert len(errors) == 1 and errors[0].kind == "rate_limit"


async def _events(agent: Agent, prompt: str) -> list:
    return [e async for e in agent.run_stream(prompt)]


def test_an_overflow_reported_inside_a_stream_is_an_overflow_too() -> None:
    from agentica_cli.agent.agent import is_context_overflow

    # A 200 stream whose chunk carries the error (OpenRouter, gateways): no status, the wording decides.
    assert is_context_overflow(ModelError("APIError: This endpoint's maximum context length is 202752 tokens."))
    assert is_context_overflow(ModelError("APIError: Prompt exceeds max length"))
    assert not is_context_overflow(ModelError("APIError: Provider returned error"))
    assert not is_context_overflow(ModelError("APIError: You exceeded your current quota", kind="billing"))


def test_the_wordings_are_kept_per_provider_for_the_dialects() -> None:
    assert "1261" in pe.errors_for("zai").overflow_codes and pe.errors_for("zai") is pe.errors_for("zhipuai")
    assert pe.errors_for("qwen-intl").overflow == (r"range of input length should be",)
    assert pe.errors_for("some-gateway") is pe.GENERIC
