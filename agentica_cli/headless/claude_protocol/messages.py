"""agentica's events written as Claude Code's stream-json messages.

What the SDK's message parser needs (claude_agent_sdk/_internal/message_parser.py) and what
Claude Code sends:
- `system`/`init` once, before the first turn: session_id, cwd, model, tools (Claude's names),
  mcp_servers, permissionMode, and the protocol version the SDK checks;
- one `assistant` message per model reply: `message` with id, model, content blocks (`thinking`,
  `text`, `tool_use` with Claude's tool name and input), stop_reason and usage;
- one `user` message per tool result: a `tool_result` block (is_error when the call failed,
  was refused or blocked);
- with --include-partial-messages, `stream_event`s wrapping Anthropic's streaming events
  (message_start, content_block_start/delta/stop, message_delta, message_stop) as text comes;
- a `result` at the end of each turn: subtype, is_error, duration_ms, duration_api_ms,
  num_turns, result, session_id, usage, permission_denials; total_cost_usd is null (agentica
  does not know an OpenAI-compatible model's prices).
A sub-agent's (the task tool's) tool calls are forwarded with `parent_tool_use_id`, its text only
with initialize's forwardSubagentText.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentica_cli.agent.events import Event
from agentica_cli.headless.claude_protocol.tool_names import claude, claude_input

# The Claude Code version whose protocol this speaks: the SDK reads `claude_code_version` from
# system/init and warns below its minimum (2.0.0); agentica's own version is `agentica_version`.
PROTOCOL_VERSION = "2.1.0"
INTERRUPTED_TEXT = "[Request interrupted by user]"

# Our stop reasons -> Claude's result subtype (and whether it is an error)
RESULT_SUBTYPES = {
    "completed": ("success", False), "stopped_by_tool": ("success", False), "tool_call_limit": ("success", False),
    "truncated": ("success", False), "filtered": ("success", False), "empty": ("success", False),
    "max_turns": ("error_max_turns", True), "blocked": ("error_during_execution", True),
    "error": ("error_during_execution", True), "cancelled": ("error_during_execution", True),
}
FINISH_REASONS = {"truncated": "max_tokens", "filtered": "refusal"}


@dataclass
class AssistantReply(Event):
    """The assistant message the loop appended (pushed into the run's stream by run.py), so the
    tool_use blocks are written with their arguments before the calls run."""

    message: dict[str, Any] = field(default_factory=dict)
    type: str = field(init=False, default="assistant_reply")


def new_uuid() -> str:
    return str(uuid.uuid4())


class MessageWriter:
    def __init__(self, write: Callable[[dict[str, Any]], None], session_id: str, model: str, *,
                 partial: bool = False):
        self.write = write
        self.session_id = session_id
        self.model = model
        self.partial = partial
        self.forward_subagent_text = False  # initialize's forwardSubagentText
        self.subagent_text: dict[str, str] = {}  # Task call id -> its sub-agent's text since its last reply
        self.denials: list[dict[str, Any]] = []
        self.inputs: dict[str, tuple[str, dict[str, Any]]] = {}  # call id -> (Claude name, input)
        self._new_step()

    def _new_step(self) -> None:
        self.message_id = f"msg_{uuid.uuid4().hex[:24]}"
        self.text = ""
        self.thinking = ""
        self.open_block: str | None = None  # "text" or "thinking": the partial block being streamed
        self.blocks = 0  # content blocks started in this message (partial messages)
        self.usage: dict[str, int] | None = None
        self.requested_at = time.monotonic()

    def _base(self) -> dict[str, Any]:
        return {"parent_tool_use_id": None, "session_id": self.session_id, "uuid": new_uuid()}

    def _stream(self, event: dict[str, Any]) -> None:
        if self.partial:
            self.write({"type": "stream_event", "event": event, **self._base()})

    # -- system/init --------------------------------------------------------------------

    def system_init(self, *, cwd: str, tools: list[str], mcp_servers: list[dict[str, str]], permission_mode: str,
                    agents: list[str], slash_commands: list[str]) -> None:
        from agentica_cli import __version__

        self.write({"type": "system", "subtype": "init", "cwd": cwd, "session_id": self.session_id,
                    "tools": tools, "mcp_servers": mcp_servers, "model": self.model,
                    "permissionMode": permission_mode, "slash_commands": slash_commands, "apiKeySource": "none",
                    "claude_code_version": PROTOCOL_VERSION, "agentica_version": __version__,
                    "output_style": "default", "agents": agents, "skills": [], "plugins": [], "uuid": new_uuid()})

    # -- events ---------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        source = getattr(event, "source", "")
        if source:
            self._subagent(source, event)
            return
        kind = event.type
        if kind == "model_request_started":
            self._new_step()
            self._stream({"type": "message_start", "message": self._message([], None, None)})
        elif kind == "notice" and getattr(event, "kind", "") == "retry":
            self._close_block()
            self.text = self.thinking = ""  # what streamed before the retry is void
        elif kind == "text_delta":
            self._delta("text", event.text)
        elif kind == "reasoning_delta":
            self._delta("thinking", event.text)
        elif kind == "usage":
            self.usage = {"input_tokens": event.input_tokens, "output_tokens": event.output_tokens,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        elif kind == "assistant_reply":
            self._assistant(event.message)
        elif kind == "tool_call_finished":
            self._tool_result(event)

    def _subagent(self, source: str, event: Any) -> None:
        """A sub-agent's (the Task tool's) tool calls, as Claude Code forwards them: messages whose
        `parent_tool_use_id` is the Task call's id; its text too with forwardSubagentText (one
        message a reply). A sub-agent's own sub-agents are left out."""
        parent = source.removeprefix("task:")
        if not source.startswith("task:") or "/" in parent:
            return
        base = {**self._base(), "parent_tool_use_id": parent}
        if event.type == "text_delta" and self.forward_subagent_text:
            self.subagent_text[parent] = self.subagent_text.get(parent, "") + event.text
        elif event.type == "model_request_started" or (event.type == "notice" and event.kind == "retry"):
            self.subagent_text.pop(parent, None)
        elif event.type == "usage" and self.subagent_text.get(parent):
            text: dict[str, Any] = {"type": "text", "text": self.subagent_text.pop(parent)}
            message = {**self._message([text], None, None), "id": f"msg_{uuid.uuid4().hex[:24]}"}
            self.write({"type": "assistant", "message": message, **base})
        elif event.type == "tool_call_started":
            use: dict[str, Any] = {"type": "tool_use", "id": event.call_id, "name": claude(event.name),
                                   "input": claude_input(event.name, event.args or {})}
            message = {**self._message([use], "tool_use", None), "id": f"msg_{uuid.uuid4().hex[:24]}"}
            self.write({"type": "assistant", "message": message, **base})
        elif event.type == "tool_call_finished":
            result = {"type": "tool_result", "tool_use_id": event.call_id, "content": event.result,
                      "is_error": event.status != "ok"}
            self.write({"type": "user", "message": {"role": "user", "content": [result]}, **base})

    def _delta(self, block: str, text: str) -> None:
        if block == "text":
            self.text += text
        else:
            self.thinking += text
        if not self.partial or not text:
            return
        if self.open_block != block:
            self._close_block()
            start = {"type": "text", "text": ""} if block == "text" else {"type": "thinking", "thinking": "",
                                                                           "signature": ""}
            self._stream({"type": "content_block_start", "index": self.blocks, "content_block": start})
            self.open_block = block
            self.blocks += 1
        delta = {"type": "text_delta", "text": text} if block == "text" else {"type": "thinking_delta",
                                                                              "thinking": text}
        self._stream({"type": "content_block_delta", "index": self.blocks - 1, "delta": delta})

    def _close_block(self) -> None:
        if self.open_block is not None:
            self._stream({"type": "content_block_stop", "index": self.blocks - 1})
            self.open_block = None

    def _message(self, content: list[dict[str, Any]], stop_reason: str | None, usage: Any) -> dict[str, Any]:
        return {"id": self.message_id, "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": stop_reason, "stop_sequence": None,
                "usage": usage or {"input_tokens": 0, "output_tokens": 0}}

    def _assistant(self, message: dict[str, Any]) -> None:
        if self.usage is None:
            return  # no reply came (a failed request): its placeholder is not the model's
        self._close_block()
        content: list[dict[str, Any]] = []
        if self.thinking or message.get("reasoning_content"):
            content.append({"type": "thinking", "thinking": self.thinking or str(message["reasoning_content"]),
                            "signature": ""})
        text = message.get("content") if isinstance(message.get("content"), str) else self.text
        if text:
            content.append({"type": "text", "text": text})
        calls = message.get("tool_calls") or []
        for call in calls:
            function = call.get("function") or {}
            name = str(function.get("name") or "")
            try:
                args = json.loads(function.get("arguments") or "{}")
            except ValueError:
                args = {}
            call_id, shown = str(call.get("id")), claude_input(name, args if isinstance(args, dict) else {})
            block: dict[str, Any] = {"type": "tool_use", "id": call_id, "name": claude(name), "input": shown}
            self.inputs[call_id] = (claude(name), shown)
            content.append(block)
            self._stream({"type": "content_block_start", "index": self.blocks,
                          "content_block": {**block, "input": {}}})
            self._stream({"type": "content_block_delta", "index": self.blocks,
                          "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
            self._stream({"type": "content_block_stop", "index": self.blocks})
            self.blocks += 1
        stop_reason = "tool_use" if calls else "end_turn"
        self._stream({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                      "usage": {"output_tokens": self.usage.get("output_tokens", 0)}})
        self._stream({"type": "message_stop"})
        self.write({"type": "assistant", "message": self._message(content, stop_reason, self.usage), **self._base()})
        self.text = self.thinking = ""

    def _tool_result(self, event: Any) -> None:
        is_error = event.status != "ok"
        if event.status == "denied":
            name, args = self.inputs.get(event.call_id, (claude(event.name), {}))
            self.denials.append({"tool_name": name, "tool_use_id": event.call_id, "tool_input": args})
        block = {"type": "tool_result", "tool_use_id": event.call_id, "content": event.result, "is_error": is_error}
        # (no `tool_use_result`: Claude Code's is each tool's own structured record; the text is in the block)
        self.write({"type": "user", "message": {"role": "user", "content": [block]}, **self._base()})

    def interrupted(self) -> None:
        """What Claude Code writes when a turn is interrupted."""
        self.write({"type": "user", "message": {"role": "user", "content": [{"type": "text",
                                                                              "text": INTERRUPTED_TEXT}]},
                    **self._base()})

    # -- result ---------------------------------------------------------------------------

    def result(self, *, stop_reason: str, text: str, error: str | None, duration_ms: int, duration_api_ms: int,
               num_turns: int, usage: dict[str, int], structured: Any = None,
               structured_error: str | None = None) -> dict[str, Any]:
        subtype, is_error = RESULT_SUBTYPES.get(stop_reason, ("error_during_execution", True))
        if structured_error is not None and not is_error:
            subtype, is_error, error = "error_max_structured_output_retries", True, structured_error
        line: dict[str, Any] = {
            "type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": duration_ms,
            "duration_api_ms": duration_api_ms, "num_turns": num_turns, "result": text,
            "stop_reason": None if is_error else FINISH_REASONS.get(stop_reason, "end_turn"),
            "session_id": self.session_id, "total_cost_usd": None,
            "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            "modelUsage": {self.model: {"inputTokens": usage.get("input_tokens", 0),
                                        "outputTokens": usage.get("output_tokens", 0)}},
            "permission_denials": list(self.denials), "uuid": new_uuid(),
        }
        if error:
            line["errors"] = [error]
        if structured is not None:
            line["structured_output"] = structured
        self.denials.clear()
        self.write(line)
        return line


def refusal_result(message: str) -> None:
    """A `result` line for a run refused before it started (a flag agentica cannot honour): the
    SDK reports its text (ResultError) instead of a bare exit code."""
    import sys

    line = {"type": "result", "subtype": "error_during_execution", "is_error": True, "duration_ms": 0,
            "duration_api_ms": 0, "num_turns": 0, "result": "", "session_id": "", "total_cost_usd": None,
            "usage": {"input_tokens": 0, "output_tokens": 0}, "errors": [message], "uuid": new_uuid()}
    try:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass


class StartupErrors:
    """stderr, keeping what is written before the session starts (the first 20,000 characters),
    so a start that fails (no API key, a bad config) can tell the SDK why in a result line."""

    LIMIT = 20_000

    def __init__(self, stream: Any):
        self.stream = stream
        self.kept: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        if self.size < self.LIMIT:
            self.kept.append(text)
            self.size += len(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def text(self) -> str:
        return "".join(self.kept).strip()[: self.LIMIT]

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding: the real stream's
        return getattr(self.stream, name)
