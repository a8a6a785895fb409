"""The SDK's hook callbacks (`ClaudeAgentOptions(hooks=...)`) as one of the agent's hooks.

`initialize` registers them: per event a list of `{"matcher", "hookCallbackIds", "timeout",
"onFailure"}`. When the loop fires an event (agent/hooks.py), each matching callback is asked
with a `hook_callback` control request carrying Claude Code's hook input (Claude's tool names
and inputs); its answer is Claude Code's hook JSON, which agent/hooks.py reads as for a command
hook (`permissionDecision: "deny"` blocks a PreToolUse call, `continue: false` ends the run).
A callback that fails or times out blocks a PreToolUse call (a check that breaks must not let
the call through) unless its matcher says `on_failure="continue"`; for other events the failure
is a warning.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from agentica_cli.agent.hooks import HOOK_EVENTS, HookOutcome, outcome_from_json
from agentica_cli.headless.claude_protocol.channel import ControlChannel, ControlError
from agentica_cli.headless.claude_protocol.tool_names import claude, claude_input, our_input

DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's hooks


@dataclass
class SdkHookMatcher:
    matcher: str | None  # a regex on Claude's tool name; None or "*": every call
    callback_ids: list[str]
    timeout: float
    blocks_on_failure: bool

    def applies_to(self, tool_name: str | None) -> bool:
        if not self.matcher or self.matcher == "*" or tool_name is None:
            return True
        try:
            return re.fullmatch(self.matcher, tool_name) is not None
        except re.error:
            return self.matcher == tool_name


class SdkHooks:
    """`hook_event(event, payload)` for the agent: forwards to the SDK's callbacks."""

    def __init__(self, channel: ControlChannel):
        self.channel = channel
        self.matchers: dict[str, list[SdkHookMatcher]] = {}
        self.ignored: list[str] = []  # events registered that agentica never fires

    def register(self, config: Any) -> None:
        """initialize's `hooks` (None or {event: [matcher, ...]})."""
        self.matchers.clear()
        if not isinstance(config, dict):
            return
        for event, entries in config.items():
            if event not in HOOK_EVENTS:
                self.ignored.append(str(event))  # Claude Code ignores an event it does not know, too
                continue
            for entry in entries if isinstance(entries, list) else ():
                if not isinstance(entry, dict):
                    continue
                ids = [str(i) for i in entry.get("hookCallbackIds") or []]
                timeout = entry.get("timeout")
                self.matchers.setdefault(event, []).append(SdkHookMatcher(
                    matcher=entry.get("matcher"), callback_ids=ids,
                    timeout=float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else DEFAULT_TIMEOUT,
                    blocks_on_failure=entry.get("onFailure", "block" if event == "PreToolUse" else "continue")
                    != "continue"))

    def __bool__(self) -> bool:
        return bool(self.matchers)

    async def hook_event(self, event: str, payload: dict[str, Any]) -> HookOutcome | None:
        matchers = self.matchers.get(event)
        if not matchers:
            return None
        our_tool = payload.get("tool_name")
        wire = dict(payload)
        if isinstance(our_tool, str):
            wire["tool_name"] = claude(our_tool)
            if isinstance(payload.get("tool_input"), dict):
                wire["tool_input"] = claude_input(our_tool, payload["tool_input"])
        merged = HookOutcome()
        for matcher in matchers:
            if not matcher.applies_to(wire.get("tool_name")):
                continue
            for callback_id in matcher.callback_ids:
                merged.merge(await self._ask(callback_id, event, wire, matcher, our_tool))
                if merged.refuses:
                    return merged
        return merged

    async def _ask(self, callback_id: str, event: str, wire: dict[str, Any], matcher: SdkHookMatcher,
                   our_tool: Any) -> HookOutcome:
        request = {"subtype": "hook_callback", "callback_id": callback_id, "input": wire,
                   "tool_use_id": wire.get("tool_use_id")}
        try:
            answer = await asyncio.wait_for(self.channel.request(request), matcher.timeout)
        except (ControlError, asyncio.TimeoutError) as err:
            why = str(err) or f"no answer in {matcher.timeout:g} s"
            if matcher.blocks_on_failure:
                return HookOutcome(block=True, reason=f"the SDK's {event} hook failed: {why}")
            return HookOutcome(messages=[f"the SDK's {event} hook failed: {why}"])
        specific = answer.get("hookSpecificOutput")
        if isinstance(specific, dict) and isinstance(specific.get("updatedInput"), dict) and isinstance(our_tool, str):
            updated = our_input(our_tool, specific["updatedInput"])
            answer = {**answer, "hookSpecificOutput": {**specific, "updatedInput": updated}}
        return outcome_from_json(answer)
