"""The control channel of Claude Code's stream-json protocol, both ways, over stdin/stdout.

stdin carries `user` messages, `control_request`s from the SDK (initialize, interrupt, ...),
`control_response`s to the requests we send it (can_use_tool, hook_callback, mcp_message) and
`control_cancel_request`s. Lines are read on a thread as they come (stream_input.StdinMessages),
so an interrupt is read while a turn runs. stdout is written from the event loop only, one JSON
object a line.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentica_cli.headless.stream_input import InputError, UserMessage, parse_line

CONTROL_TYPES = ("control_request", "control_response", "control_cancel_request")


@dataclass
class ControlLine:
    """A control message from the SDK, as sent."""

    line: int
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data.get("type"))


@dataclass
class SdkUserMessage(UserMessage):
    """A user message from the SDK; `verbatim`: its `client_composed` (ClaudeAgentOptions'
    verbatim_prompts), so a leading `/name` is text for the model, not a custom command."""

    verbatim: bool = False


StdinItem = UserMessage | InputError | ControlLine


def decode(raw: bytes | None, number: int) -> StdinItem | None:
    """One stdin line: a control message, a user message, an error, or None (blank)."""
    from agentica_cli.headless.stream_input import decode_line

    if raw is not None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if text.lstrip().startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, dict) and data.get("type") in CONTROL_TYPES:
                return ControlLine(number, data)
            if isinstance(data, dict) and data.get("type") == "user":
                parsed = parse_line(text, number)
                if isinstance(parsed, UserMessage):
                    return SdkUserMessage(parsed.line, parsed.text, parsed.images,
                                          verbatim=data.get("client_composed") is True)
                return parsed
    return decode_line(raw, number)


class ControlError(Exception):
    """The SDK answered a control request with an error, or could not answer it."""


class ControlChannel:
    """Requests to the SDK (`request`) and answers to its requests (`respond`)."""

    def __init__(self, write: Callable[[dict[str, Any]], None]):
        self.write = write
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.closed = ""  # why no answer can come any more (stdin ended)

    async def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send a control_request and wait for its answer's `response`; ControlError when it
        failed. A cancelled wait tells the SDK (control_cancel_request), so its callback stops."""
        if self.closed:
            raise ControlError(self.closed)
        request_id = f"agentica_req_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.write({"type": "control_request", "request_id": request_id, "request": request})
        try:
            return await future
        except asyncio.CancelledError:
            if not self.closed:
                self.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    def answer(self, data: dict[str, Any]) -> None:
        """A control_response from the SDK: the waiting request gets it."""
        response = data.get("response")
        if not isinstance(response, dict):
            return
        future = self._pending.get(str(response.get("request_id")))
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "the SDK answered with an error")))
        else:
            payload = response.get("response")
            future.set_result(payload if isinstance(payload, dict) else {})

    def respond(self, request_id: str, response: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Answer one of the SDK's control requests."""
        if error is not None:
            body: dict[str, Any] = {"subtype": "error", "request_id": request_id, "error": error}
        else:
            body = {"subtype": "success", "request_id": request_id, "response": response or {}}
        self.write({"type": "control_response", "response": body})

    def close(self, reason: str) -> None:
        """stdin ended: every request still waiting fails with `reason`."""
        self.closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError(reason))
