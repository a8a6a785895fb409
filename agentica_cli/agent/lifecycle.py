"""The lifecycle events the Agent fires for its hooks (agent/hooks.py): SessionStart when a
session starts (the UI calls `start_session`; else at the first prompt) and after a compaction,
UserPromptSubmit before a prompt is sent, Stop / SubagentStop when the model stops, Notification
when a person is asked, SessionEnd when the session ends. PreToolUse / PostToolUse fire in the
executor, PreCompact in compaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentica_cli.agent.events import Notice
from agentica_cli.agent.hooks import HookList, HookOutcome, event_payload, fire_event
from agentica_cli.agent.run_state import RunState


class LifecycleEvents:
    """Mixed into Agent: expects `hooks`, `messages`, `is_subagent`, `_session_started`,
    `_session_source`, `_start_context`, `instruction_texts`, `system_prompt` and `_append`."""

    hooks: HookList
    messages: list[dict[str, Any]]
    is_subagent: bool
    _session_started: bool
    _session_source: str
    _start_context: list[str]
    instruction_texts: list[str]
    _append: Callable[[dict[str, Any]], None]
    system_prompt: Callable[[], str]

    async def fire_hooks(self, event: str, run: RunState | None = None, **fields: Any) -> HookOutcome:
        """Run the hooks' `hook_event` for `event`; what they say for the user becomes a Notice."""
        listening = self.hooks.with_events
        if not listening:
            return HookOutcome()
        outcome = await fire_event(listening, event, event_payload(self, event, **fields))
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

    async def start_session(self, source: str | None = None) -> HookOutcome:
        """SessionStart hooks, once per session, when it starts: a UI calls this as its session
        opens (REPL start, `-p`, an editor's session/new or load, after /clear); otherwise the
        first prompt does. `source`: "startup", "resume" (a history was given), "clear" (after
        `reset()`); None keeps the one the agent knows. The context the hooks add waits for the
        next prompt; the outcome's `messages` are for the UI to show."""
        if self._session_started or self.is_subagent:
            return HookOutcome()
        self._session_started = True
        if source:
            self._session_source = source
        outcome = await self.fire_hooks("SessionStart", source=self._session_source)
        self._start_context += outcome.context
        return outcome

    async def _after_compaction(self, run: RunState | None) -> None:
        """SessionStart with source "compact" (as Claude Code): the context it adds joins the
        summary, the first message of the new history, so the model keeps it."""
        if self.is_subagent or not self.hooks:
            return
        outcome = await self.fire_hooks("SessionStart", run, source="compact")
        context = without_repeats(outcome.context, self.system_prompt(), self.instruction_texts)
        first = self.messages[0] if self.messages else None
        if context and first is not None and isinstance(first.get("content"), str):
            self.messages[0] = {**first, "content": "\n\n".join([first["content"], *context])}

    async def _prompt_hooks(self, run: RunState, prompt: Any) -> tuple[Any, HookOutcome]:
        """SessionStart (when no UI started the session) and UserPromptSubmit: the prompt with
        the context they add, and what they decided. `prompt` is text, or a list of content
        parts (text and images) whose text part gets the context."""
        if not self._session_started:
            for message in (await self.start_session()).messages:
                run.emit(Notice(message, kind="warning"))
        outcome = await self.fire_hooks("UserPromptSubmit", run, prompt=prompt_text(prompt))
        if outcome.block or outcome.stop:
            return prompt, outcome  # SessionStart's context waits for a prompt that is sent
        context, self._start_context = [*self._start_context, *outcome.context], []
        context = without_repeats(context, self.system_prompt(), self.instruction_texts)
        return with_context(prompt, context), outcome

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


def prompt_text(prompt: Any) -> str:
    """The text of a prompt given as a string or as content parts."""
    if isinstance(prompt, list):
        return "\n".join(p.get("text", "") for p in prompt if isinstance(p, dict) and p.get("type") == "text")
    return str(prompt)


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


MIN_REPEAT = 200  # characters: a shorter text may be in the prompt by chance
REPEAT_NOTE = "[the text of an instruction file that is already in the system prompt]"


def without_repeats(context: list[str], system_prompt: str, whole_texts: list[str]) -> list[str]:
    """The hooks' context without what the model already has: a piece that is a whole
    instruction file (`whole_texts`: a SessionStart hook that prints AGENTS.md), a long piece
    that is in the system prompt as it is, or one given twice is dropped; a whole instruction
    file inside a longer piece is replaced by a short note. A short piece is kept even when the
    prompt happens to contain it ("OK", "Branch: main")."""
    prompt = _normal(system_prompt)
    wholes = sorted({_normal(w) for w in whole_texts if _normal(w)}, key=len, reverse=True)
    kept: list[str] = []
    for piece in context:
        text = _normal(piece)
        if not text or text in wholes or (len(text) >= MIN_REPEAT and text in prompt) \
                or text in (_normal(k) for k in kept):
            continue
        for whole in wholes:
            if len(whole) >= MIN_REPEAT and whole in text:  # a short text may be in it by chance
                text = text.replace(whole, REPEAT_NOTE)
        kept.append(text if text != _normal(piece) else piece)
    return kept


def with_context(prompt: Any, context: list[str]) -> Any:
    """The prompt with the hooks' context after it (as text; for content parts, in its text part)."""
    if not context:
        return prompt
    if not isinstance(prompt, list):
        return "\n\n".join([prompt, *context])
    parts = [dict(p) if isinstance(p, dict) else p for p in prompt]
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "text":
            part["text"] = "\n\n".join([part.get("text", ""), *context])
            return parts
    return [{"type": "text", "text": "\n\n".join(context)}, *parts]
