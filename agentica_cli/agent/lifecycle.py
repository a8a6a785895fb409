"""The lifecycle events the Agent fires for its hooks (agent/hooks.py): SessionStart and
UserPromptSubmit before a prompt is sent, Stop / SubagentStop when the model stops, Notification
when a person is asked, SessionEnd when the session ends. PreToolUse / PostToolUse fire in the
executor, PreCompact in compaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentica_cli.agent.events import Notice
from agentica_cli.agent.hooks import HookOutcome, event_payload, fire_event
from agentica_cli.agent.run_state import RunState


class LifecycleEvents:
    """Mixed into Agent: expects `hooks`, `messages`, `is_subagent`, `_session_started`,
    `_session_source` and `_append`."""

    hooks: list[Any]
    is_subagent: bool
    _session_started: bool
    _session_source: str
    _append: Callable[[dict[str, Any]], None]

    async def fire_hooks(self, event: str, run: RunState | None = None, **fields: Any) -> HookOutcome:
        """Run the hooks' `hook_event` for `event`; what they say for the user becomes a Notice."""
        if not any(hasattr(h, "hook_event") for h in self.hooks):
            return HookOutcome()
        outcome = await fire_event(self.hooks, event, event_payload(self, event, **fields))
        if run is not None:
            for message in outcome.messages:
                run.emit(Notice(message, kind="warning"))
        return outcome

    async def notify(self, message: str) -> None:
        """Notification hooks: the agent waits for the user (a confirmation)."""
        await self.fire_hooks("Notification", message=message)

    async def end_session(self, reason: str = "other") -> None:
        """SessionEnd hooks (reason: "clear", "prompt_input_exit", "other"), once per session started."""
        if self._session_started:
            self._session_started = False
            await self.fire_hooks("SessionEnd", reason=reason)

    async def _prompt_hooks(self, run: RunState, prompt: str) -> tuple[str, HookOutcome]:
        """SessionStart (first run of a session) and UserPromptSubmit: the prompt with the
        context they add, and what they decided."""
        outcome = HookOutcome()
        if not self._session_started:
            self._session_started = True
            outcome.merge(await self.fire_hooks("SessionStart", run, source=self._session_source))
        outcome.merge(await self.fire_hooks("UserPromptSubmit", run, prompt=prompt))
        if outcome.context:
            prompt = "\n\n".join([prompt, *outcome.context])
        return prompt, outcome

    async def _stop_hooks_continue(self, run: RunState) -> bool:
        """Stop / SubagentStop hooks: True when one blocks the stop (the model is told why
        and goes on). `stop_hook_active` tells a hook it already did, so it can let go."""
        if not self.hooks:
            return False
        event = "SubagentStop" if self.is_subagent else "Stop"
        outcome = await self.fire_hooks(event, run, stop_hook_active=run.stop_hook_active)
        if not outcome.block or outcome.stop:
            return False
        run.stop_hook_active = True
        self._append({"role": "user", "content": f"[A {event} hook asks you to continue: {outcome.reason}]"})
        return True
