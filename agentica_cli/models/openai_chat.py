"""OpenAIChat: chat completions over models/chat_http.py (no SDK), or the `openai` SDK on request.

Both transports send the same JSON body and hand back the raw streamed response, which this
module reads itself (models/sse.py); their errors carry the same attributes, so retries,
time limits and the provider's error text are the same whichever sent the request. The SDK is
imported only by `transport="openai"` and by `client()` (the SDK's AsyncOpenAI, for the other
endpoints), never by a request of the default transport.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any, Protocol

from agentica_cli import shared_backoff
from agentica_cli.models.base import (
    MissingApiKeyError,
    Model,
    ModelError,
    ModelReasoningDelta,
    ModelResponse,
    ModelRetry,
    ModelStreamEvent,
    ModelTextDelta,
    TokenUsage,
    ToolCallRequest,
    seconds_text,
)
from agentica_cli.models.deadlines import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STALL_TIMEOUT,
    AttemptClock,
    DeadlineExceeded,
    Deadlines,
)
from agentica_cli.models.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after
from agentica_cli.models.sse import SseDecoder

TRANSPORTS = ("httpx", "openai")
TRANSPORT_ENV = "AGENTICA_MODEL_TRANSPORT"  # the default transport of every model in the process


class StreamedResponse(Protocol):
    """What the stream reader needs of a response (http1.py's, httpx2's, or httpx's under an older SDK)."""

    @property
    def headers(self) -> Any: ...

    async def aread(self) -> bytes: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class Endpoint(Protocol):
    """A transport: POST the ready body to the chat completions endpoint. Errors are raised with
    the attributes of the SDK's (chat_http.HttpStatusError and friends, or the SDK's own)."""

    api_key: str

    async def complete(self, params: dict[str, Any]) -> Any: ...

    async def open_stream(self, params: dict[str, Any]) -> StreamedResponse: ...

    async def aclose(self) -> None: ...


class _Retryable(Exception):
    """One attempt failed in a way another attempt may not; `setting` names the time limit
    it ran into, if that is what failed."""

    def __init__(self, reason: str, retry_after: float | None = None, status_code: int | None = None,
                 setting: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.status_code = status_code
        self.setting = setting


class ResponseAccumulator:
    """Builds one ModelResponse from streamed chunks; tool-call deltas are joined by index.

    Slots are numbered in the order calls start; `_slot_of` maps the provider's index to the
    slot of the call being sent under it, since Ollama sends `index: 0` for every parallel
    call: a new id or another name on a taken index starts a new call.
    """

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self._slot_of: dict[int, int] = {}
        self.reasoning_details: list[dict[str, Any]] | None = None
        self.usage: TokenUsage | None = None
        self.finish_reason: str | None = None

    def add_tool_delta(self, tc: dict[str, Any]) -> None:
        index = tc.get("index")
        fn = tc.get("function")
        if index is None:
            key = self._unindexed(tc)
        else:
            key = self._slot_of.get(index, -1)
            if key < 0 or self._starts_another(self.calls[key], tc.get("id"), fn):
                key = self._slot_of[index] = len(self.calls)
        slot = self.calls.get(key)
        if slot is None:
            slot = self.calls[key] = {"id": "", "name": "", "arguments": [], "extra": None}
        if tc.get("id") and not slot["id"]:
            slot["id"] = tc["id"]
        if tc.get("extra_content"):  # Gemini's thought signature rides on the call
            slot["extra"] = tc["extra_content"]
        if fn:
            if fn.get("name") and not slot["name"]:
                slot["name"] = fn["name"]
            if fn.get("arguments"):
                slot["arguments"].append(_arguments_text(fn["arguments"]))

    @staticmethod
    def _starts_another(slot: dict[str, Any], call_id: str | None, fn: dict[str, Any] | None) -> bool:
        """A call's head (it names the function) with another id, or another name, than the
        call on this index. A piece of arguments is always the call's own, whatever id it
        carries (some proxies stamp a fresh id on every chunk)."""
        name = fn.get("name") if fn else None
        if not name or not slot["name"]:
            return False
        if call_id and slot["id"]:
            return call_id != slot["id"]
        return name != slot["name"] or _complete_json("".join(slot["arguments"]))

    def _unindexed(self, tc: dict[str, Any]) -> int:
        """The slot for a delta without `index` (some local servers): a delta with a new id or
        a name starts a call; one with neither continues the last call's arguments."""
        call_id = tc.get("id")
        if call_id:
            for index, slot in self.calls.items():
                if slot["id"] == call_id:
                    return index
        if self.calls and not call_id and not (tc.get("function") or {}).get("name"):
            return max(self.calls)
        return max(self.calls, default=-1) + 1

    def add_reasoning_details(self, details: Any) -> None:
        """OpenRouter's reasoning_details: streamed as pieces of entries (the same `index`
        continues an entry: its text and signature come in separate chunks)."""
        if not isinstance(details, list):
            return
        kept = self.reasoning_details if self.reasoning_details is not None else []
        for entry in details:
            if not isinstance(entry, dict):
                continue
            last = kept[-1] if kept else None
            if last is not None and "index" in entry and last.get("index") == entry["index"] \
                    and last.get("type") == entry.get("type"):
                for key, value in entry.items():
                    if key in ("text", "summary", "data") and isinstance(value, str) and isinstance(last.get(key), str):
                        last[key] += value
                    elif value is not None:
                        last[key] = value
            else:
                kept.append(dict(entry))
        self.reasoning_details = kept

    def response(self) -> ModelResponse:
        calls = [
            ToolCallRequest(
                id=slot["id"] or f"call_{uuid.uuid4().hex[:12]}",  # some local servers send no id
                name=slot["name"],
                arguments="".join(slot["arguments"]),
                extra_content=slot["extra"],
            )
            for _, slot in sorted(self.calls.items())
        ]
        content = "".join(self.content)
        refusal = "".join(self.refusal)
        return _finished(ModelResponse(
            content=content or refusal,
            reasoning="".join(self.reasoning),
            tool_calls=calls,
            usage=self.usage,
            reasoning_details=self.reasoning_details,
            refusal=refusal,
        ), self.finish_reason)


def _complete_json(text: str) -> bool:
    """Whether a call's arguments so far are a whole JSON object (a second head of the same
    function, without ids, then starts another call)."""
    if not text.rstrip().endswith("}"):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _finished(response: ModelResponse, raw: str | None) -> ModelResponse:
    """Set our finish reason from the provider's (and from a refusal it sent)."""
    from agentica_cli.models.dialects import normalize_finish

    response.raw_finish_reason = raw or ""
    finish = normalize_finish(raw)
    if response.refusal and not response.tool_calls and finish == "stop":
        finish = "refusal"
    if finish == "stop" and response.tool_calls:
        finish = "tool_calls"  # Ollama and others say "stop" after tool calls
    response.finish_reason = finish
    return response


def _arguments_text(value: Any) -> str:
    """Arguments as the JSON text the protocol specifies; some local servers send an object."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _usage(raw: dict[str, Any] | None) -> TokenUsage | None:
    if not raw or not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt_tokens") or 0
    completion = raw.get("completion_tokens") or 0
    cost = raw.get("cost")  # OpenRouter: what the request cost, in US dollars (credits)
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None
    return TokenUsage(prompt, completion, raw.get("total_tokens") or prompt + completion, cost)


def _reasoning_of(obj: dict[str, Any]) -> str:
    # DeepSeek, Kimi and older vLLM say `reasoning_content`; Ollama, Groq, OpenRouter and
    # newer vLLM say `reasoning`.
    value = obj.get("reasoning_content") or obj.get("reasoning") or ""
    return value if isinstance(value, str) else ""


def _text_parts(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a `content` that is a list of parts (Mistral's magistral sends
    `{"type": "thinking", "thinking": [...]}` and `{"type": "text", "text": ...}` parts)."""
    if isinstance(content, str):
        return content, ""
    text: list[str] = []
    thought: list[str] = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, str):
            text.append(part)
        elif isinstance(part, dict):
            if part.get("type") == "thinking":
                inner, _ = _text_parts(part.get("thinking"))
                thought.append(inner)
            elif isinstance(part.get("text"), str):
                text.append(part["text"])
    return "".join(text), "".join(thought)


def _details_text(details: Any) -> str:
    """The readable text of OpenRouter's reasoning_details (when `reasoning` did not come)."""
    out = []
    for entry in details if isinstance(details, list) else ():
        if isinstance(entry, dict):
            value = entry.get("text") or entry.get("summary")
            if isinstance(value, str):
                out.append(value)
    return "".join(out)


class OpenAIChat(Model):
    """A chat completions model. Key and base URL default to `OPENAI_API_KEY` / `OPENAI_BASE_URL`.

    Retries (429 honouring Retry-After, 5xx, connection errors, streams cut before they
    finished or stalled) are done here with bounded backoff (the SDK's are disabled when it
    sends). `transport`: "httpx" (the default: models/chat_http.py, no `openai`
    import) or "openai" (the SDK's AsyncOpenAI); `AGENTICA_MODEL_TRANSPORT` sets the default.
    Time limits (seconds, 0 or None: none; see `agentica_cli.models.deadlines`):
    `request_timeout` for the whole request with its retries, `attempt_timeout` for one
    attempt, `stall_timeout` for an attempt without content progress (keep-alive comments
    and empty chunks are not progress), `connect_timeout` to open a connection, and
    `timeout` for each network read or write.
    """

    provider = "OpenAI"
    default_id = "gpt-4o"
    default_base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    api_key_env_aliases: tuple[str, ...] = ()  # read after api_key_env (Zhipu: ZAI_API_KEY too)
    base_url_env: str | None = "OPENAI_BASE_URL"
    requires_api_key = True
    default_context_window = 128_000
    local_server = False  # a server on the user's machine (Ollama, vLLM, ...): its context can be asked
    preset_dialect: str | None = None  # a preset's provider dialect (models/dialects.py); None: guessed
    vision: bool | None = None  # takes images (config model.vision); None: guessed from the id (images.supports_vision)

    def __init__(
        self,
        id: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float = 600.0,
        stream: bool = True,
        include_usage: bool = True,
        max_retries: int = 4,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 20.0,
        context_window: int | None = None,
        extra_body: dict[str, Any] | None = None,
        default_headers: dict[str, str] | None = None,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        attempt_timeout: float | None = DEFAULT_ATTEMPT_TIMEOUT,
        stall_timeout: float | None = DEFAULT_STALL_TIMEOUT,
        connect_timeout: float = 30.0,
        reasoning_effort: str | None = None,
        tool_call_format: str | None = None,
        dialect: str | None = None,
        transport: str | None = None,
    ):
        self.id = id or self.default_id
        self.api_key = api_key
        env_base = os.environ.get(self.base_url_env) if self.base_url_env else None
        self.base_url = base_url or env_base or self.default_base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.deadlines = Deadlines(request=request_timeout, attempt=attempt_timeout, stall=stall_timeout)
        self.stream = stream
        self.include_usage = include_usage
        self.retry = RetryPolicy(max_retries=max_retries, base_delay=retry_base_delay, max_delay=retry_max_delay)
        self.context_window = context_window or self.default_context_window
        self.extra_body = extra_body
        self.default_headers = default_headers
        self.reasoning_effort = reasoning_effort  # sent as `reasoning_effort` (OpenAI o-series, gpt-5, Groq, ...)
        # "hermes" (or "auto"): tool calls the model writes as text (<tool_call>{...}</tool_call>, Qwen3-Coder's
        # <function=...>) become real calls; for local servers without a tool parser (models/text_tool_calls.py)
        self.tool_call_format = tool_call_format
        self._client: Any = None
        self._client_loop: Any = None
        self._endpoint: Endpoint | None = None
        self._endpoint_loop: Any = None
        self.transport = transport or os.environ.get(TRANSPORT_ENV) or "httpx"
        if self.transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {self.transport!r}")
        if dialect:
            from agentica_cli.models.dialects import dialect_named

            dialect_named(dialect)  # an unknown name fails now, not at the first request
        self.dialect_name = dialect

    # -- configuration

    @property
    def dialect(self) -> Any:
        """What this provider sends and wants back (agentica_cli.models.dialects): the
        `dialect` option, else the preset's, else a guess from the base URL and model id."""
        from agentica_cli.models.dialects import resolve_dialect

        return resolve_dialect(self.dialect_name, type(self).preset_dialect, self.base_url, self.id)

    # -- credentials -------------------------------------------------------------------

    def resolve_api_key(self) -> str:
        """The key to send; raises MissingApiKeyError when one is required and absent."""
        key = self.api_key or next((os.environ[var] for var in (self.api_key_env, *self.api_key_env_aliases)
                                    if var and os.environ.get(var)), None)
        if key:
            return key
        if self.requires_api_key:
            raise MissingApiKeyError(self.provider, self.api_key_env or "an API key variable")
        return "not-needed"  # local servers (Ollama, vLLM) ignore it but the SDK wants one

    def client(self) -> Any:
        """The SDK's AsyncOpenAI client for the running event loop (connections are per-loop),
        with this model's key, base URL, timeouts and headers: for the endpoints agentica does
        not call itself (models, embeddings, ...). Requests go through `endpoint()`."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            from agentica_cli.models.openai_import import import_openai

            import_openai()  # without the SDK's ~500 API types: half the import time
            from openai import AsyncOpenAI, Timeout

            if self._client is not None:
                # Its connections belong to a finished loop. Mark it closed now (the close itself
                # fails on the dead loop, which we ignore) so its __del__ does not try again noisily.
                stale = loop.create_task(self._client.close())
                stale.add_done_callback(lambda t: t.cancelled() or t.exception())

            self._client = AsyncOpenAI(
                api_key=self.resolve_api_key(),
                base_url=self.base_url,
                timeout=Timeout(self.timeout, connect=min(self.connect_timeout, self.timeout)),
                max_retries=0,  # retries are ours: bounded, logged and never duplicating output
                default_headers=self.default_headers,
            )
            self._client_loop = loop
        return self._client

    def endpoint(self) -> Endpoint:
        """The transport for the running event loop; the previous loop's is closed."""
        loop = asyncio.get_running_loop()
        if self._endpoint is None or self._endpoint_loop is not loop:
            stale = self._endpoint
            if self.transport == "openai":
                self._endpoint = SdkChatEndpoint(self.client())
            else:
                from agentica_cli.models.chat_http import ChatEndpoint

                self._endpoint = ChatEndpoint(api_key=self.resolve_api_key(), base_url=self.base_url,
                                              timeout=self.timeout, connect_timeout=self.connect_timeout,
                                              default_headers=self.default_headers)
            if stale is not None and not isinstance(stale, SdkChatEndpoint):  # client() closed the SDK's
                # Its connections belong to a finished loop: the close fails there, which we ignore.
                task = loop.create_task(stale.aclose())
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
            self._endpoint_loop = loop
        return self._endpoint

    def request_params(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        # The stored history keeps what any provider may want back (reasoning, signatures);
        # this one gets what it accepts (OpenAI's own API rejects fields it does not know).
        messages = self.dialect.prepare(messages)
        params: dict[str, Any] = {"model": self.id, "messages": messages}
        if tools:
            params["tools"] = tools
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        if self.extra_body:
            params.update(self.extra_body)
        if self.stream:
            params["stream"] = True
            if self.include_usage:
                params["stream_options"] = {"include_usage": True}
        return params

    # -- requests -----------------------------------------------------------------------

    def response_stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> AsyncIterator[ModelStreamEvent]:
        events = self._provider_stream(messages, tools)
        if self.tool_call_format and self.tool_call_format != "native":  # calls written as text
            from agentica_cli.models.text_tool_calls import parse_stream

            return parse_stream(events, self.tool_call_format, tools)
        return events

    async def _provider_stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> AsyncIterator[ModelStreamEvent]:
        client = self.endpoint()  # raises MissingApiKeyError before any request
        params = self.request_params(messages, tools)
        loop = asyncio.get_running_loop()
        limit = self.deadlines.request
        request_deadline = loop.time() + limit if limit else math.inf
        max_attempts = self.retry.max_retries + 1
        attempt = 0
        while True:
            attempt += 1
            await shared_backoff.wait_turn()  # another session of a batch got a 429: wait with it
            clock = AttemptClock(self.deadlines, request_deadline, stall=self.stream)
            try:
                if self.stream:
                    async for event in self._streamed_attempt(client, params, clock):
                        yield event
                else:
                    for event in _whole_answer_events(await self._plain_attempt(client, params, clock)):
                        yield event
                return
            except DeadlineExceeded as timeout:  # the request's own limit: no attempt may follow
                raise ModelError(
                    f"the model request timed out: no complete answer within {seconds_text(limit or 0)} "
                    f"(request_timeout; {_attempts(attempt)}): {timeout.reason}; raise request_timeout if the "
                    "model needs longer",
                    kind="timeout",
                ) from None
            except _Retryable as failure:
                kind = "timeout" if failure.setting else "connection" if failure.status_code is None else "api"
                if attempt >= max_attempts:
                    hint = f"; raise {failure.setting} if the model needs longer" if failure.setting else ""
                    raise ModelError(f"{failure.reason} (gave up after {_attempts(attempt)}{hint})",
                                     status_code=failure.status_code, kind=kind) from None
                delay = self.retry.delay(attempt, failure.retry_after)
                if failure.status_code == 429:
                    shared_backoff.hold(delay)
                if loop.time() + delay >= request_deadline:
                    raise ModelError(
                        f"{failure.reason} (gave up after {_attempts(attempt)}: waiting {seconds_text(delay)} "
                        f"to retry would pass request_timeout, {seconds_text(limit or 0)})",
                        status_code=failure.status_code, kind=kind,
                    ) from None
                yield ModelRetry(attempt, delay, failure.reason, max_attempts)
                await asyncio.sleep(delay)

    async def _streamed_attempt(
        self, client: Endpoint, params: dict[str, Any], clock: AttemptClock
    ) -> AsyncIterator[ModelStreamEvent]:
        acc = ResponseAccumulator()
        response = None
        try:
            response = await clock.wait(client.open_stream(params))
            clock.responded()
            content_type = response.headers.get("content-type", "")
            if "json" in content_type:  # the server ignored stream=true and sent one completion (or an error)
                body = await clock.wait(response.aread())
                for event in _whole_answer_events(_checked(_completion_of(json.loads(body)))):
                    yield event
                return
            if "html" in content_type:
                raise ModelError(f"the server answered with a web page ({content_type}), not a chat completion "
                                 "stream; check that the base URL points at an OpenAI-compatible API")
            pieces = response.aiter_bytes().__aiter__()
            decoder = SseDecoder()
            done = False
            while not done:
                # Every wait is bounded: SSE comments (`: keep-alive`) reach no chunk here, and a
                # chunk without content does not move the stall deadline, so a server that only
                # keeps the connection busy still times out.
                try:
                    piece = await clock.wait(pieces.__anext__())
                except StopAsyncIteration:
                    break
                for data in decoder.feed(piece):
                    if data.startswith(b"[DONE]"):
                        done = True
                        break
                    for event in _chunk_events(json.loads(data), clock, acc):
                        yield event
            if done:
                await _drain(pieces)  # HTTP/1.1 reuses the connection only once the body is read
        except Exception as exc:
            failure = _classify(exc, getattr(client, "api_key", None))
            if not (isinstance(failure, (_Retryable, DeadlineExceeded)) and acc.finish_reason is not None):
                raise failure from exc
            # The answer was complete (its finish_reason came); only the trailer (usage,
            # [DONE]) was lost or late. Asking again would redo the work and show the text twice.
        finally:
            if response is not None:
                await response.aclose()
        # `[DONE]` after an answer but no finish_reason (some local servers): it is complete.
        if acc.finish_reason is None and not (done and (acc.content or acc.calls or acc.reasoning or acc.refusal)):
            # The connection ended cleanly but the answer did not: a proxy cut it short.
            raise _Retryable("the response stream ended before the answer was complete")
        yield _checked(acc.response())

    async def _plain_attempt(self, client: Endpoint, params: dict[str, Any], clock: AttemptClock) -> ModelResponse:
        try:
            completion = await clock.wait(client.complete(params))
        except Exception as exc:
            raise _classify(exc, getattr(client, "api_key", None)) from exc
        try:
            return _checked(_completion_of(completion))
        except Exception as exc:
            raise _classify(exc, getattr(client, "api_key", None)) from exc

    async def aclose(self) -> None:
        """Close the HTTP clients of the running loop (run_sync does it before its loop ends)."""
        loop = asyncio.get_running_loop()
        if self._endpoint is not None and self._endpoint_loop is loop:
            endpoint, self._endpoint = self._endpoint, None
            await endpoint.aclose()
        if self._client is not None and self._client_loop is loop:
            client, self._client = self._client, None
            await client.close()


def _attempts(count: int) -> str:
    return f"{count} attempt" + ("s" if count != 1 else "")


def _stream_error(error: Any) -> Exception:
    """A provider's failure reported inside a 200 stream (OpenRouter's mid-stream errors,
    the SDK's APIError): retried as the same failure over HTTP would be."""
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 400 <= code < 600 else None
    if status is None or status in RETRYABLE_STATUS:
        return _Retryable(f"the stream reported an error: {message}", status_code=status or 502)
    return ModelError(f"APIError: {message}", status_code=status)


def _chunk_events(chunk: Any, clock: AttemptClock, acc: ResponseAccumulator) -> list[ModelStreamEvent]:
    """Take one streamed chunk into `acc`; the deltas to show now. A chunk that moves the
    answer on (text, reasoning, a tool call's name or arguments, its end) is progress for
    the stall clock; keep-alive and empty chunks are not. One pass: this runs per chunk."""
    if type(chunk) is not dict:  # Gemini reports errors as a list (anything else fails at .get below)
        failure = _error_body(chunk)
        if failure is not None:
            raise failure
    if chunk.get("error"):
        raise _stream_error(chunk["error"])
    usage = chunk.get("usage")
    if usage:
        acc.usage = _usage(usage)
    choices = chunk.get("choices")
    if not choices:
        return []
    events: list[ModelStreamEvent] = []
    progress = False
    choice = choices[0]
    delta = choice.get("delta")
    if delta:
        # DeepSeek, Kimi and older vLLM say `reasoning_content`; Ollama, Groq, OpenRouter and
        # newer vLLM `reasoning`; OpenRouter adds `reasoning_details` (kept to send back).
        reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
        if type(reasoning) is not str:
            reasoning = ""
        details = delta.get("reasoning_details")
        if details:
            progress = True
            acc.add_reasoning_details(details)
            if not reasoning and not delta.get("reasoning"):
                reasoning = _details_text(details)
        content = delta.get("content")
        if content and type(content) is not str:  # a list of parts (Mistral): never a non-str text delta
            content, thought = _text_parts(content)
            reasoning += thought
        if reasoning:
            acc.reasoning.append(reasoning)
            events.append(ModelReasoningDelta(reasoning))
        if content:
            acc.content.append(content)
            events.append(ModelTextDelta(content))
        refusal = delta.get("refusal")
        if refusal and type(refusal) is str:  # OpenAI's refusal: shown as the answer
            acc.refusal.append(refusal)
            events.append(ModelTextDelta(refusal))
        calls = delta.get("tool_calls")
        if calls:
            for tc in calls:
                fn = tc.get("function")
                if fn and (fn.get("name") or fn.get("arguments")):
                    progress = True
                acc.add_tool_delta(tc)
    finish = choice.get("finish_reason")
    if finish:
        progress = True
        if finish == "error":  # OpenRouter: the upstream provider failed mid-answer
            raise _stream_error(choice.get("error") or "the provider ended the answer with an error")
        acc.finish_reason = finish
        if acc.usage is None:  # Kimi puts usage in the choice; Groq in x_groq when not asked for it
            acc.usage = _usage(choice.get("usage")) or _usage((chunk.get("x_groq") or {}).get("usage"))
    if progress or events:
        clock.progress()
    return events


async def _drain(pieces: AsyncIterator[bytes], limit: float = 0.1) -> None:
    """Read what follows `[DONE]` (normally just the body's end, already received) for up to
    `limit` seconds, as the SDK's stream does, so the connection goes back to the pool; errors
    do not matter any more: the answer is complete."""
    try:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(limit):  # a timer handle, not a task as wait_for makes
                async for _ in pieces:
                    pass
        else:  # pragma: no cover - Python 3.10
            async def rest() -> None:
                async for _ in pieces:
                    pass

            await asyncio.wait_for(rest(), limit)
    except Exception:
        pass


def _checked(response: ModelResponse) -> ModelResponse:
    """An answer that ended because the prompt filled the model's context (z.ai's
    finish_reason `model_context_window_exceeded`) is that failure: the loop compacts."""
    if response.finish_reason == "context_overflow" and not response.tool_calls:
        raise ModelError(f"the prompt exceeds the model's context window (finish_reason "
                         f"{response.raw_finish_reason})", status_code=400, kind="context_length")
    return response


def _whole_answer_events(response: ModelResponse) -> list[ModelStreamEvent]:
    """One delta each, then the answer: a UI that renders deltas shows unstreamed answers too."""
    events: list[ModelStreamEvent] = []
    if response.reasoning:
        events.append(ModelReasoningDelta(response.reasoning))
    if response.content:
        events.append(ModelTextDelta(response.content))
    return [*events, response]


def _completion_of(completion: Any) -> ModelResponse:
    """A ModelResponse from a whole `chat.completion` object."""
    failure = _error_body(completion)
    if failure is not None:  # a 200 whose body is an error (older llama.cpp): the server's own words, at once
        raise failure
    if not isinstance(completion, dict) or not completion.get("choices"):
        raise _Retryable("the response had no choices")
    choice = completion["choices"][0]
    message = choice.get("message") or {}
    calls = [
        ToolCallRequest(tc.get("id") or f"call_{uuid.uuid4().hex[:12]}", (tc.get("function") or {}).get("name", ""),
                        _arguments_text((tc.get("function") or {}).get("arguments") or ""),
                        tc.get("extra_content") or None)
        for tc in message.get("tool_calls") or ()
    ]
    content, thought = _text_parts(message.get("content") or "")
    details = message.get("reasoning_details") if isinstance(message.get("reasoning_details"), list) else None
    reasoning = _reasoning_of(message) or thought or _details_text(details)
    said = message.get("refusal")
    refusal = said if isinstance(said, str) else ""
    if choice.get("finish_reason") == "error":
        raise _stream_error(choice.get("error") or "the provider ended the answer with an error")
    return _finished(ModelResponse(
        content=content or refusal,
        reasoning=reasoning,
        tool_calls=calls,
        usage=_usage(completion.get("usage")) or _usage(choice.get("usage")),
        reasoning_details=details,
        refusal=refusal,
    ), choice.get("finish_reason"))


def _error_body(body: Any) -> Exception | None:
    """The failure a 200 body reports instead of a completion (`{"error": ...}`, or Gemini's
    list of them), or None."""
    if isinstance(body, list):
        body = next((item for item in body if isinstance(item, dict) and item.get("error")), None)
    if not isinstance(body, dict) or body.get("choices") or not body.get("error"):
        return None
    error = body["error"]
    message = error.get("message") if isinstance(error, dict) else error
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) and 400 <= code < 600 else None
    return ModelError(f"the server answered with an error: {message or error}", status_code=status)


class SdkChatEndpoint:
    """The transport through the SDK's AsyncOpenAI (`transport="openai"`).

    It posts the ready JSON body: `chat.completions.create()` would first walk every message
    through the SDK's TypedDict transform (45 ms a request at 130 messages on a 2-core box) and
    build pydantic objects for JSON we read field by field. The SDK does the HTTP, auth headers
    and error mapping; the client is the model's `client()`, which closes it.
    """

    def __init__(self, client: Any):
        self._client = client
        self.api_key: str = client.api_key

    async def complete(self, params: dict[str, Any]) -> Any:
        return await self._client.post("/chat/completions", body=params, cast_to=object)

    async def open_stream(self, params: dict[str, Any]) -> StreamedResponse:
        """The HTTP response, its body unread (read by SseDecoder): the SDK's
        `with_streaming_response` mode (its raw-response header), in which it sends the request
        and maps an error status to its exceptions as usual but leaves the body to us instead of
        decoding it through its `AsyncStream` (see agentica_cli/models/sse.py)."""
        raw = await self._client.post("/chat/completions", body=params, cast_to=object, stream=True,
                                      options={"headers": {"X-Stainless-Raw-Response": "stream"}})
        return raw.http_response  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        pass  # the model's client(): OpenAIChat.aclose closes it


def _classify(exc: Exception, key: str | None = None) -> Exception:
    """A retryable failure becomes _Retryable; anything else a ModelError (or itself). The
    key is cut out of its text: a server or proxy may echo it in an error message, which
    agentica prints and saves."""
    failure = _classify_failure(exc)
    if key and len(key) >= 8 and isinstance(failure, (_Retryable, ModelError)):
        text = failure.reason if isinstance(failure, _Retryable) else failure.message
        if key in text:
            text = text.replace(key, "[API key hidden]")
            failure.args = (text,)
            if isinstance(failure, _Retryable):
                failure.reason = text
            else:
                failure.message = text
    return failure


def _classify_failure(exc: Exception) -> Exception:
    from agentica_cli.models import chat_http

    # The SDK's exceptions only where the SDK is loaded: the httpx transport never imports it.
    openai: Any = sys.modules.get("openai")
    if isinstance(exc, DeadlineExceeded) and not exc.final:
        return _Retryable(exc.reason, setting=exc.setting)  # a stalled or slow attempt may be a passing fault
    if isinstance(exc, (_Retryable, ModelError, DeadlineExceeded)):
        return exc
    if isinstance(exc, chat_http.HttpStatusError) or (openai and isinstance(exc, openai.APIStatusError)):
        return _status_failure(exc)
    if isinstance(exc, chat_http.HttpConnectionError) or (
            openai and isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError))):
        return _connection_failure(exc)
    http1: Any = sys.modules.get("agentica_cli.models.http1")  # the direct client: a body that broke off
    if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "h11") or (
            http1 and isinstance(exc, http1.TransportError)):
        return _Retryable(f"connection failed: {type(exc).__name__}: {exc}")
    if openai and isinstance(exc, openai.OpenAIError):
        return ModelError(f"{type(exc).__name__}: {exc}")
    # Anything else came from reading the answer: JSON that does not parse, or a chunk that is
    # not shaped like a chat completion. Retrying a server that speaks another protocol would
    # only delay the error.
    return ModelError(f"the server's answer is not a valid chat completion ({type(exc).__name__}: {exc}); "
                      "check that the base URL points at an OpenAI-compatible API")


def _status_failure(exc: Any) -> Exception:
    """An HTTP error status: what it is decides whether another attempt may help. A context
    overflow (kind "context_length", which the agent answers by compacting), a billing problem
    or a request larger than a per-minute limit fail at once, whatever their status (llama.cpp
    says overflow with 500, OpenAI and Zhipu say billing with 429)."""
    from agentica_cli.models import provider_errors as pe

    status = exc.status_code
    report = pe.read_error(getattr(exc, "body", None))
    detail = _error_detail(exc, report)
    url = _request_url(exc)
    category = pe.failure_category(status, report)
    if category == pe.OVERFLOW:
        return ModelError(f"HTTP {status}: {detail}", status_code=status, kind=pe.OVERFLOW)
    if category == pe.BILLING:
        return ModelError(f"HTTP {status}: {detail} (a billing or quota error: {pe.billing_hint(url, report)})",
                          status_code=status, kind=pe.BILLING)
    if category == pe.RATE_LIMIT:
        return ModelError(f"HTTP {status}: {detail} (the request is larger than the plan's per-minute token limit: "
                          "lower max_tokens, compact the conversation (/compact) or use a higher tier)",
                          status_code=status, kind=pe.RATE_LIMIT)
    if status in RETRYABLE_STATUS:
        return _Retryable(f"HTTP {status}: {detail}", parse_retry_after(exc.response.headers), status)
    kind = "auth" if status in (401, 403) else "api"
    hint = f" ({pe.auth_hint(url)})" if kind == "auth" else ""
    return ModelError(f"HTTP {status}: {detail}{hint}", status_code=status, kind=kind)


def _connection_failure(exc: Any) -> Exception:
    """No answer at all. The message names the URL tried; a refused connection to this machine
    fails at once (a local server that is not running will not start within the retries)."""
    from agentica_cli.models import provider_errors as pe

    cause = exc.__cause__ or exc.__context__
    url = _request_url(exc)
    where = f" to {url}" if url else ""
    if _refused(exc):
        message = f"could not connect{where}: connection refused; {pe.refused_hint(url)}"
        if pe.is_local(url):
            return ModelError(message, kind="connection")
        return _Retryable(message)
    reason = f"{exc}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
    return _Retryable(f"connection{where} failed: {reason}")


def _refused(exc: BaseException) -> bool:
    """Whether the connection was refused (ECONNREFUSED somewhere in the exception's causes)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "connection refused" in str(current).lower():
            return True
        if "errno 111" in str(current).lower() or "[winerror 10061]" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


def _request_url(exc: Any) -> str:
    try:
        return str(exc.request.url)
    except Exception:  # no request attached (a hand-made error)
        return ""


def _error_detail(exc: Any, report: Any = None) -> str:
    """The reason to show: the provider's own message (from whatever shape its body has), a
    proxy page's title, else the SDK's text without its "Error code: N - " prefix."""
    from agentica_cli.models.provider_errors import read_error

    report = report if report is not None else read_error(getattr(exc, "body", None))
    if report.message:
        return " ".join(report.message.split()) if len(report.message) < 2000 else report.message[:2000] + "…"
    if report.web_page:
        title = f": \"{report.page_title}\"" if report.page_title else ""
        return f"the server (or a proxy in front of it) answered with a web page{title}, not an API error"
    text = getattr(exc, "message", None) or str(exc)
    status = getattr(exc, "status_code", None)
    prefix = f"Error code: {status}"
    if status is not None and text.startswith(prefix):
        text = text[len(prefix):].lstrip(" -") or "no reason given"
    return text
