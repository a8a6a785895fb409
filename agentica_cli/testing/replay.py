"""ProviderReplayServer: plays back recorded provider answers, byte for byte, and refuses a
request history the way that provider does.

The scripted server (`agentica_cli.testing.server`) answers the way we expect; real
providers do not: each has its own stream quirks and its own rules for what must come back
in later requests. This server serves recordings (SSE bodies as they came over the wire,
JSON bodies, error bodies) one per request, in order, after checking the request against
the provider's rules (`RULES`): a request that breaks one gets that provider's 400 (its
wording, its body shape) and the recording is not used up, so a client that sends what the
provider would refuse fails its test.

    with ProviderReplayServer("deepseek", [Recording.sse(path1), Recording.sse(path2)]) as server:
        model = DeepSeek(base_url=server.base_url, api_key="k", id="deepseek-v4-flash")
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["RULES", "ProviderReplayServer", "Recording", "Refusal"]

STANDARD_ASSISTANT_KEYS = frozenset({"role", "content", "tool_calls", "name", "refusal", "audio", "function_call"})


@dataclass
class Recording:
    """One recorded answer: the body as sent, its content type and status."""

    body: bytes
    content_type: str = "text/event-stream"
    status: int = 200

    @classmethod
    def load(cls, path: str | Path, status: int = 200) -> Recording:
        path = Path(path)
        kind = "application/json" if path.suffix == ".json" else "text/event-stream"
        return cls(path.read_bytes(), kind, status)


@dataclass
class Refusal:
    """What the provider answers to a request it refuses."""

    status: int
    body: Any


Rule = Callable[[dict[str, Any]], Refusal | None]


def _assistants(body: dict[str, Any]) -> Iterable[tuple[int, dict[str, Any]]]:
    for position, message in enumerate(body.get("messages") or ()):
        if isinstance(message, dict) and message.get("role") == "assistant":
            yield position, message


def _turns(messages: list[dict[str, Any]]) -> list[list[int]]:
    """Positions of the assistant messages of each turn (user prompt to user prompt)."""
    turns: list[list[int]] = [[]]
    for position, message in enumerate(messages):
        if message.get("role") == "user":
            turns.append([])
        elif message.get("role") == "assistant":
            turns[-1].append(position)
    return [t for t in turns if t]


def _openai_error(message: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def openai_rule(body: dict[str, Any]) -> Refusal | None:
    """OpenAI's own API validates messages strictly: unknown properties are refused."""
    for position, message in _assistants(body):
        extra = sorted(set(message) - STANDARD_ASSISTANT_KEYS)
        if extra:
            return Refusal(400, _openai_error(
                f"Additional properties are not allowed ('{extra[0]}' was unexpected) - 'messages.{position}'",
                param=f"messages.{position}"))
        for call in message.get("tool_calls") or ():
            if "extra_content" in call:
                return Refusal(400, _openai_error(
                    f"Additional properties are not allowed ('extra_content' was unexpected) - "
                    f"'messages.{position}.tool_calls.0'"))
    return None


def deepseek_v4_rule(body: dict[str, Any]) -> Refusal | None:
    """DeepSeek's thinking mode: in a turn that called a tool, every assistant message must
    carry its reasoning_content in all later requests (DeepSeek's thinking-mode guide); V4 Pro
    refuses an empty one too (NousResearch/hermes-agent PR #17341)."""
    messages = body.get("messages") or []
    for turn in _turns(messages):
        used_tool = any(messages[p].get("tool_calls") for p in turn)
        if used_tool and any(not isinstance(messages[p].get("reasoning_content"), str)
                             or not messages[p]["reasoning_content"] for p in turn):
            return Refusal(400, _openai_error(
                "The `reasoning_content` in the thinking mode must be passed back to the API.",
                code="invalid_request_error"))
    return None


def deepseek_reasoner_rule(body: dict[str, Any]) -> Refusal | None:
    """deepseek-reasoner (R1): reasoning_content in the input messages is a 400 (its guide
    says to remove the field before the next request); it does not take tools."""
    for _, message in _assistants(body):
        if "reasoning_content" in message:
            return Refusal(400, _openai_error(
                "The reasoning_content is an intermediate result for display purposes only and will not be "
                "included in the context for inference. Please remove the reasoning_content from your message "
                "to reduce network traffic.", code="invalid_request_error"))
    return None


def kimi_rule(body: dict[str, Any]) -> Refusal | None:
    """Kimi K2.5/K2.6 thinking: a tool-call message without (or with an empty)
    reasoning_content is refused, and so is an empty assistant message."""
    for position, message in _assistants(body):
        if message.get("tool_calls"):
            if not message.get("reasoning_content"):
                return Refusal(400, {"error": {
                    "message": f"thinking is enabled but reasoning_content is missing in assistant tool call "
                               f"message at index {position}", "type": "invalid_request_error"}})
        elif not message.get("content"):
            return Refusal(400, {"error": {
                "message": f"Invalid request: the message at position {position} with role 'assistant' must not "
                           "be empty", "type": "invalid_request_error"}})
    return None


def groq_rule(body: dict[str, Any]) -> Refusal | None:
    """Groq validates message properties: reasoning_content (and anything else it does not
    know) is refused."""
    for position, message in _assistants(body):
        for key in sorted(set(message) - STANDARD_ASSISTANT_KEYS - {"reasoning"}):
            return Refusal(400, _openai_error(
                f"'messages.{position}' : for 'role:assistant' the following must be satisfied"
                f"[('messages.{position}' : property '{key}' is unsupported)]"))
    return None


# A signature as Gemini sends them (base64), or the placeholder its docs give for calls it did not make.
GEMINI_ISSUED = re.compile(r"^([A-Za-z0-9+/=_-]{16,}|skip_thought_signature_validator)$")


def gemini_rule(body: dict[str, Any]) -> Refusal | None:
    """Gemini 3 through its OpenAI-compatible endpoint: in the current turn, the first tool
    call of each step must carry the thought signature it came with
    (extra_content.google.thought_signature); the error body is a JSON list."""
    messages = body.get("messages") or []
    turns = _turns(messages)
    for position in turns[-1] if turns else ():
        calls = messages[position].get("tool_calls") or []
        if not calls:
            continue
        extra = calls[0].get("extra_content") or {}
        signature = (extra.get("google") or {}).get("thought_signature") if isinstance(extra, dict) else None
        if not isinstance(signature, str) or not GEMINI_ISSUED.match(signature):
            name = (calls[0].get("function") or {}).get("name", "")
            return Refusal(400, [{"error": {
                "code": 400,
                "message": f"Function call is missing a thought_signature in functionCall parts. This is required "
                           f"for tools to work correctly, and missing thought_signature may lead to degraded model "
                           f"performance. Additional data, function call `default_api:{name}` , position "
                           f"{position + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                           "for more details.",
                "status": "INVALID_ARGUMENT"}}])
    return None


def openrouter_gemini_rule(body: dict[str, Any]) -> Refusal | None:
    """Gemini 3 through OpenRouter: the reasoning_details of a tool-call message (its
    encrypted entry holds the thought signature) must come back as received; OpenRouter
    passes Google's refusal on in error.metadata.raw."""
    messages = body.get("messages") or []
    turns = _turns(messages)
    for position in turns[-1] if turns else ():
        message = messages[position]
        if not message.get("tool_calls"):
            continue
        details = message.get("reasoning_details")
        encrypted = [d for d in details or () if isinstance(d, dict) and d.get("type") == "reasoning.encrypted"]
        if not encrypted or not all(isinstance(d.get("data"), str) and d["data"] for d in encrypted):
            alone = [{"role": "user"}, {"role": "assistant", "tool_calls": message["tool_calls"]}]
            raw = gemini_rule({"messages": alone})
            return Refusal(400, {"error": {"message": "Provider returned error", "code": 400, "metadata": {
                "raw": json.dumps(raw.body if raw else "thought_signature missing"),
                "provider_name": "Google AI Studio"}}})
    return openai_rule({"messages": [m for m in messages if m.get("role") != "assistant"]})


def ollama_rule(body: dict[str, Any]) -> Refusal | None:
    """Ollama parses every tool call's arguments of the history into an object."""
    for _, message in _assistants(body):
        for call in message.get("tool_calls") or ():
            arguments = (call.get("function") or {}).get("arguments")
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
            except (TypeError, ValueError):
                parsed = None
            if not isinstance(parsed, dict):
                return Refusal(400, {"error": {"message": "invalid tool call arguments",
                                               "type": "invalid_request_error", "param": None, "code": None}})
    return None


def lenient_rule(body: dict[str, Any]) -> Refusal | None:
    """vLLM, llama.cpp, GLM, Qwen: extra message fields are ignored."""
    return None


RULES: dict[str, Rule] = {
    "openai": openai_rule, "deepseek": deepseek_v4_rule, "deepseek-reasoner": deepseek_reasoner_rule,
    "kimi": kimi_rule, "groq": groq_rule, "gemini": gemini_rule, "openrouter-gemini": openrouter_gemini_rule,
    "ollama": ollama_rule, "vllm": lenient_rule, "llamacpp": lenient_rule, "glm": lenient_rule,
    "qwen": lenient_rule, "mistral": lenient_rule, "lmstudio": lenient_rule, "zai": lenient_rule,
}


class ProviderReplayServer:
    """A real HTTP server on 127.0.0.1 that checks each chat request against `provider`'s
    rules, then answers with the next recording. `requests` holds every request body;
    `refusals` the ones refused (position in `requests`, refusal)."""

    def __init__(self, provider: str, recordings: Iterable[Recording]):
        if provider not in RULES:
            raise ValueError(f"no rules for provider {provider!r}; known: {', '.join(RULES)}")
        self.provider = provider
        self.rule = RULES[provider]
        self.recordings = list(recordings)
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[tuple[int, Refusal]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def pending(self) -> int:
        return len(self.recordings)

    def start(self) -> ProviderReplayServer:
        handler = type("ReplayHandler", (_Handler,), {"replay": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="provider-replay", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> ProviderReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, body: dict[str, Any]) -> Recording | Refusal:
        with self._lock:
            self.requests.append(body)
            refusal = self.rule(body)
            if refusal is not None:
                self.refusals.append((len(self.requests) - 1, refusal))
                return refusal
            if not self.recordings:
                return Refusal(400, _openai_error(f"replay: no recording left for request #{len(self.requests)}"))
            return self.recordings.pop(0)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    replay: ProviderReplayServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            # Another endpoint (Ollama's /api/show, asked for the served context) is not a
            # chat request: it must not use up a recording. Answer as a server without it.
            self.rfile.read(length)
            self._send(404, "application/json", json.dumps(_openai_error(f"replay: no route {self.path}")).encode())
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        answer = self.replay.answer(body if isinstance(body, dict) else {})
        if isinstance(answer, Refusal):
            self._send(answer.status, "application/json", json.dumps(answer.body).encode())
        else:
            self._send(answer.status, answer.content_type, answer.body)

    def do_GET(self) -> None:
        self._send(200, "application/json", b'{"object": "list", "data": [{"id": "replay", "object": "model"}]}')

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
