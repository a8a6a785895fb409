"""What the model sees of the history: old large tool results shortened, and compaction
(older messages summarised by the model into one) when the prompt nears the context window."""

from __future__ import annotations

import itertools
import json
from typing import Any

from agentica_cli.agent.config import ToolConfig
from agentica_cli.models.base import Model

SUMMARY_PREFIX = "Summary of the earlier conversation (older messages were compacted to save context):\n\n"

SUMMARY_INSTRUCTIONS = """You summarise a conversation between a user and an AI agent that uses tools, \
so the agent can continue the work with only your summary in place of these messages.
Keep: the user's requests (quote the latest one exactly), decisions made, facts learnt \
(file paths, names, values, errors and their causes), what was done and changed, and \
what remains to do. Drop pleasantries and raw tool output already acted on.
Write plain text, at most about 400 words. Do not call tools."""

_MAX_RESULT_IN_TRANSCRIPT = 2000


class UnusableSummary(Exception):
    """The summary request got no usable summary; the compaction is cancelled."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def shorten(text: str, keep: int) -> str:
    """Keep `keep` characters at each end and say how much was cut."""
    if len(text) <= 2 * keep:
        return text
    head, tail = text[:keep], text[-keep:]
    middle = text[keep:-keep]
    return (f"{head}\n[... {len(middle)} characters ({middle.count(chr(10))} lines) cut from this old "
            f"tool result ...]\n{tail}")


def estimate_tokens(value: Any) -> int:
    """About 4 characters a token, for when the API reports no usage."""
    if isinstance(value, str):
        return len(value) // 4 + 1
    text = json.dumps(value, ensure_ascii=False)
    if '"image_url"' not in text:
        return len(text) // 4 + 1
    # An image's data URL is not text: it costs what the provider charges for its pixels.
    tokens, chars = _image_cost(value)
    return max(len(text) - chars, 0) // 4 + 1 + tokens


def _image_cost(value: Any) -> tuple[int, int]:
    from agentica_cli.images import content_image_tokens

    if isinstance(value, dict):
        return content_image_tokens(value.get("content"))
    if isinstance(value, list):
        costs = [_image_cost(item) for item in value]
        return sum(c[0] for c in costs), sum(c[1] for c in costs)
    return 0, 0


class ContextManager:
    def __init__(self, config: ToolConfig):
        self.config = config
        self._shortened: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        # The last reported prompt+completion size, and how many messages it covered.
        self._known_tokens = 0
        self._known_upto = 0

    # -- what is sent -------------------------------------------------------------------

    def for_request(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.config.compress_tool_results:
            messages = self._compressed(messages)
        return join_consecutive_user_messages(messages)

    def _compressed(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        limit, keep = self.config.compress_threshold_chars, self.config.compress_keep_chars
        out = []
        for i, msg in enumerate(messages):
            content = msg.get("content")
            if i < last_assistant and msg.get("role") == "tool" and isinstance(content, str) and len(content) > limit:
                cached = self._shortened.get(id(msg))
                if cached is None or cached[0] is not msg:
                    cached = (msg, msg | {"content": shorten(content, keep)})
                    self._shortened[id(msg)] = cached
                out.append(cached[1])
            else:
                out.append(msg)
        return out

    # -- how full the context is ----------------------------------------------------------

    def observe(self, tokens: int, message_count: int) -> None:
        """The API said the last request plus its answer came to `tokens`, covering
        the first `message_count` messages."""
        self._known_tokens = tokens
        self._known_upto = message_count

    def estimate(self, messages: list[dict[str, Any]], system_prompt: str) -> int:
        if self._known_upto == 0 or self._known_upto > len(messages):
            return estimate_tokens(system_prompt) + estimate_tokens(messages)
        return self._known_tokens + sum(estimate_tokens(m) for m in messages[self._known_upto :])

    def over_threshold(self, messages: list[dict[str, Any]], system_prompt: str, window: int) -> bool:
        return self.estimate(messages, system_prompt) >= self.config.context_overflow_threshold * window

    # -- compaction ---------------------------------------------------------------------

    def split_for_compaction(self, messages: list[dict[str, Any]], keep: int) -> int:
        """Index where the kept tail starts (0: nothing to compact). The tail never starts
        with a tool result, so every kept result keeps its call."""
        cut = max(0, len(messages) - keep)
        while 0 < cut < len(messages) and messages[cut].get("role") == "tool":
            cut -= 1
        return cut

    async def summarise(self, model: Model, old: list[dict[str, Any]], instructions: str = "") -> str:
        """The model's summary of `old` (`instructions`: the user's, e.g. "focus on the tests").
        The request offers no tools; a reply that is empty or calls a tool anyway raises
        UnusableSummary: replacing the history with it would lose the user's request."""
        system = SUMMARY_INSTRUCTIONS
        if instructions.strip():
            system += f"\n\nThe user's instructions for this summary (follow them): {instructions.strip()}"
        request = [
            {"role": "system", "content": system},
            {"role": "user", "content": "Summarise this conversation:\n\n" + transcript(old)},
        ]
        response = await model.response(request, None)
        summary = (response.content or "").strip()
        if response.tool_calls:
            names = ", ".join(call.name for call in response.tool_calls)
            raise UnusableSummary(f"the model called a tool ({names}) instead of writing a summary")
        if not summary:
            raise UnusableSummary("the model's summary was empty")
        return summary

    def compacted(self, summary: str, kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self._known_upto = 0  # the next estimate starts from the new, shorter history
        self._shortened.clear()
        return [{"role": "user", "content": SUMMARY_PREFIX + summary}, *kept]


def is_summary(message: dict[str, Any]) -> bool:
    """Is this the message a compaction put in place of the older ones?"""
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(SUMMARY_PREFIX)


def uncompacted_history(compacted_away: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as it was before its compactions: what they replaced, then the history
    without its summary."""
    return [*compacted_away, *(m for m in messages if not is_summary(m))]


def join_consecutive_user_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """User messages in a row sent as one (text joined by a blank line); the history keeps them.

    They happen after a compaction (the summary, then a kept or new prompt) and in a session
    that was killed while its last prompt waited for an answer. OpenAI accepts them, but
    strict chat templates (vLLM serving Gemma, Mistral, ...) reject anything that does not
    alternate.
    """
    if not any(a.get("role") == "user" == b.get("role") for a, b in itertools.pairwise(messages)):
        return messages
    joined: list[dict[str, Any]] = []
    for msg in messages:
        last = joined[-1] if joined else None
        if (last is not None and last.get("role") == "user" == msg.get("role")
                and isinstance(last.get("content"), str) and isinstance(msg.get("content"), str)):
            joined[-1] = {"role": "user", "content": f"{last['content']}\n\n{msg['content']}"}
        else:
            joined.append(msg)
    return joined


def transcript(messages: list[dict[str, Any]]) -> str:
    """The messages as readable text for the summariser (long tool results shortened)."""
    lines: list[str] = []
    for msg in messages:
        role = msg.get("role", "?")
        content = msg.get("content")
        if not isinstance(content, str):
            from agentica_cli.images import content_text

            content = content_text(content) if isinstance(content, list) else \
                json.dumps(content, ensure_ascii=False) if content else ""
        if role == "tool":
            body = shorten(content, _MAX_RESULT_IN_TRANSCRIPT // 2)
            lines.append(f"[tool result {msg.get('tool_call_id', '')}]\n{body}")
            continue
        if content:
            lines.append(f"[{role}]\n{content}")
        for call in msg.get("tool_calls") or ():
            fn = call.get("function", {})
            lines.append(f"[{role} calls {fn.get('name')} ({call.get('id')})] {fn.get('arguments', '')}")
    return "\n\n".join(lines)
