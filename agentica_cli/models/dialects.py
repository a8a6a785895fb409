"""What each provider sends in its answers and wants back in later requests: its dialect.

The history keeps one provider-neutral form of every assistant message (see
`ModelResponse.to_message`): the reasoning text as `reasoning_content`, OpenRouter's
`reasoning_details` as received, and on each tool call Gemini's `extra_content` (its
`thought_signature`). Before every request the model's dialect turns that history into what
its provider accepts, so a session started on one provider goes on with another (`/model`,
`--continue`) without the loop knowing about any of them:

| dialect    | sends back                                                                        |
|------------|-----------------------------------------------------------------------------------|
| openai     | nothing beyond the standard fields (OpenAI refuses unknown ones)                  |
| generic    | `reasoning_content` on tool-call messages (vLLM, llama.cpp, LM Studio, gateways)  |
| deepseek   | `reasoning_content` (non-empty) on every assistant message of a turn that used a  |
|            | tool, the final answer included; none in turns without tools (deepseek-reasoner   |
|            | refused it)                                                                       |
| kimi       | a non-empty `reasoning_content` on every tool-call message; no empty answers      |
| zhipu/qwen | as generic                                                                        |
| groq       | no reasoning field at all ("property 'reasoning_content' is unsupported")         |
| gemini     | each tool call's `extra_content.google.thought_signature` (a placeholder the API  |
|            | documents for calls it did not make); no reasoning text                           |
| openrouter | `reasoning_details` exactly as received                                           |
| ollama     | `reasoning` (its name for it) on tool-call messages                               |

Answers are read the same way for every dialect (every known field is looked at: they do
not clash), so a wrong guess of the dialect costs at most what is sent back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Gemini's documented value for a function call whose signature is unknown (a history made
# by another model, or one saved before signatures were kept): it skips the check.
GEMINI_PLACEHOLDER_SIGNATURE = "skip_thought_signature_validator"
# Kimi refuses an empty or missing reasoning_content on a tool-call message in thinking mode,
# DeepSeek V4 an empty one on any message of a tool turn. For a history made by another model
# each message gets its own short stand-in: one text repeated on every message is reported to
# make DeepSeek start answering with it (empty replies).
PLACEHOLDER_ANSWER = "(no answer)"


def placeholder_reasoning(message: dict[str, Any]) -> str:
    names = [str((call.get("function") or {}).get("name", "")) for call in message.get("tool_calls") or ()]
    ids = [str(call.get("id", "")) for call in message.get("tool_calls") or ()]
    if names:
        return f"(reasoning not recorded; this step called {', '.join(names)}: {', '.join(ids)})"
    return "(reasoning not recorded for this answer)"

# The keys of an assistant message we keep for some provider; the standard ones are
# role, content, tool_calls, name, refusal.
REASONING_KEYS = ("reasoning_content", "reasoning", "reasoning_details")

# Provider finish reasons -> ours: stop, tool_calls, length, content_filter, refusal,
# context_overflow, error. Unknown ones count as "stop".
FINISH_REASONS = {
    "stop": "stop", "end_turn": "stop", "eos": "stop", "stop_sequence": "stop",
    "tool_calls": "tool_calls", "function_call": "tool_calls", "tool_use": "tool_calls",
    "length": "length", "max_tokens": "length", "max_output_tokens": "length",
    "content_filter": "content_filter", "sensitive": "content_filter", "safety": "content_filter",
    "recitation": "content_filter", "prohibited_content": "content_filter", "blocklist": "content_filter",
    "spii": "content_filter",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_overflow",
    "error": "error", "network_error": "error", "insufficient_system_resource": "error",
}


def normalize_finish(raw: str | None) -> str:
    if not raw:
        return "stop"
    return FINISH_REASONS.get(raw.lower(), "stop")


@dataclass(frozen=True)
class Dialect:
    """How one provider wants the stored history back."""

    name: str
    reasoning_field: str | None = "reasoning_content"  # the name it reads reasoning under; None: never send
    reasoning_on: str = "tool_calls"  # "tool_calls": tool-call messages; "tool_turns": every message of a tool turn
    reasoning_required: bool = False  # a tool-call message without reasoning is refused: send a placeholder
    no_empty_answers: bool = False  # an assistant message with empty content is refused
    thought_signatures: bool = False  # tool calls carry extra_content (Gemini) to send back
    reasoning_details: bool = False  # send reasoning_details back as received (OpenRouter)
    description: str = field(default="", compare=False)

    def prepare(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`messages` as this provider accepts them; the same list when nothing changes."""
        tool_turns = self._tool_turns(messages) if self.reasoning_on == "tool_turns" else None
        # Whether a message with nothing stored to drop can only stay as it is (most dialects):
        # checked inline, as this runs for every message of every request.
        adds_nothing = tool_turns is None and not self.reasoning_required and not self.thought_signatures
        no_empty = self.no_empty_answers
        out: list[dict[str, Any]] | None = None
        for position, message in enumerate(messages):
            if message.get("role") != "assistant":
                continue
            if adds_nothing and "reasoning_content" not in message and "reasoning_details" not in message \
                    and "reasoning" not in message:
                calls = message.get("tool_calls")
                if calls:
                    for call in calls:
                        if "extra_content" in call:
                            break
                    else:
                        continue
                elif not no_empty or message.get("content"):
                    continue
            wanted = self._message(message, tool_turns is not None and position in tool_turns)
            if wanted is not message:
                if out is None:
                    out = list(messages)
                out[position] = wanted
        return messages if out is None else out

    def _message(self, message: dict[str, Any], in_tool_turn: bool) -> dict[str, Any]:
        """The message as this provider wants it; the same object when it already is (the
        common case, checked without copying: this runs for every message of every request)."""
        calls = message.get("tool_calls")
        target: str | None = None  # the reasoning to send under reasoning_field; None: none
        if self.reasoning_field is not None and (in_tool_turn if self.reasoning_on == "tool_turns" else calls):
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            if isinstance(reasoning, str) and reasoning:
                target = reasoning
            elif self.reasoning_required or self.reasoning_on == "tool_turns":
                target = placeholder_reasoning(message)
        # (field, reasoning) to send; target is only ever set when reasoning_field is not None
        send = (self.reasoning_field, target) if self.reasoning_field is not None and target is not None else None
        keep_details = self.reasoning_details and isinstance(message.get("reasoning_details"), list)
        stored = [key for key in REASONING_KEYS if key in message]
        wanted_keys = ([send[0]] if send is not None else []) + (
            ["reasoning_details"] if keep_details else [])
        sent_calls = self._calls(calls) if calls else calls
        empty_answer = self.no_empty_answers and not calls and not message.get("content")
        if (stored == wanted_keys or sorted(stored) == sorted(wanted_keys)) and sent_calls is calls \
                and not empty_answer and (send is None or message.get(send[0]) == send[1]):
            return message
        wanted: dict[str, Any] = {k: v for k, v in message.items() if k not in REASONING_KEYS}
        if send is not None:
            wanted[send[0]] = send[1]
        if keep_details:
            wanted["reasoning_details"] = message["reasoning_details"]
        if calls:
            wanted["tool_calls"] = sent_calls
        if empty_answer:
            wanted["content"] = PLACEHOLDER_ANSWER
        return wanted

    def _calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not self.thought_signatures:
            if not any("extra_content" in c for c in calls):
                return calls
            return [{k: v for k, v in c.items() if k != "extra_content"} for c in calls]
        # Gemini wants the signature of the first call of each step (parallel calls after it
        # have none); one this history lacks gets the placeholder the API documents.
        first = calls[0]
        if _signature(first):
            return calls
        google = dict((first.get("extra_content") or {}).get("google") or {})
        google["thought_signature"] = GEMINI_PLACEHOLDER_SIGNATURE
        return [first | {"extra_content": {"google": google}}, *calls[1:]]

    @staticmethod
    def _tool_turns(messages: list[dict[str, Any]]) -> set[int]:
        """Positions of the assistant messages in turns (user prompt to user prompt) with a tool call."""
        found: set[int] = set()
        turn: list[int] = []
        used_tool = False
        for position, message in enumerate(messages):
            role = message.get("role")
            if role == "user":
                if used_tool:
                    found.update(turn)
                turn, used_tool = [], False
            elif role == "assistant":
                turn.append(position)
                used_tool = used_tool or bool(message.get("tool_calls"))
        if used_tool:
            found.update(turn)
        return found


def _signature(call: dict[str, Any]) -> str:
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    value = google.get("thought_signature") if isinstance(google, dict) else None
    return value if isinstance(value, str) else ""


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("openai", reasoning_field=None, description="OpenAI's own API: standard fields only"),
        Dialect("generic", description="any OpenAI-compatible server: reasoning_content on tool-call messages"),
        Dialect("deepseek", reasoning_on="tool_turns",
                description="reasoning_content on every assistant message of a turn that used a tool"),
        Dialect("kimi", reasoning_required=True, no_empty_answers=True,
                description="non-empty reasoning_content on every tool-call message; no empty answers"),
        Dialect("zhipu", description="as generic (GLM keeps reasoning_content of tool calls)"),
        Dialect("qwen", description="as generic"),
        Dialect("groq", reasoning_field=None, description="no reasoning fields: Groq refuses them"),
        Dialect("gemini", reasoning_field=None, thought_signatures=True,
                description="each tool call's extra_content.google.thought_signature"),
        Dialect("openrouter", reasoning_field=None, reasoning_details=True,
                description="reasoning_details exactly as received"),
        Dialect("ollama", reasoning_field="reasoning", description="`reasoning` on tool-call messages"),
    )
}
ALIASES = {"vllm": "generic", "llamacpp": "generic", "llama.cpp": "generic", "lmstudio": "generic",
           "openai-like": "generic", "moonshot": "kimi", "glm": "zhipu", "zai": "zhipu", "dashscope": "qwen",
           "google": "gemini"}

# Host name parts -> dialect, for a base URL that no preset named.
_HOSTS = (("api.openai.com", "openai"), ("groq.com", "groq"), ("generativelanguage.googleapis.com", "gemini"),
          ("openrouter.ai", "openrouter"), ("deepseek.com", "deepseek"), ("moonshot.", "kimi"),
          ("bigmodel.cn", "zhipu"), ("z.ai", "zhipu"), ("dashscope", "qwen"))
# Model id parts -> dialect, for an endpoint we do not recognise (a gateway, a local server).
_MODEL_IDS = (("deepseek", "deepseek"), ("kimi", "kimi"), ("gemini", "gemini"))


def dialect_named(name: str) -> Dialect:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r}; choose one of: {', '.join(DIALECTS)}")
    return DIALECTS[key]


def guess_dialect(base_url: str | None, model_id: str = "") -> Dialect:
    """The dialect of an endpoint no preset or setting named: by host, then by model id."""
    if not base_url:
        return DIALECTS["openai"]
    parts = urlsplit(base_url if "//" in base_url else f"http://{base_url}")
    host = (parts.hostname or "").lower()
    for needle, name in _HOSTS:
        if needle in host:
            return DIALECTS[name]
    if parts.port == 11434:  # Ollama's port
        return DIALECTS["ollama"]
    model = model_id.lower()
    for needle, name in _MODEL_IDS:
        if needle in model:
            return DIALECTS[name]
    return DIALECTS["generic"]


def resolve_dialect(explicit: str | None, preset: str | None, base_url: str | None, model_id: str) -> Dialect:
    """A setting wins, then the preset's own dialect (OpenRouter, Ollama: whatever model they
    serve), then a guess from the base URL and model id."""
    if explicit:
        return dialect_named(explicit)
    if preset:
        return dialect_named(preset)
    return guess_dialect(base_url, model_id)
