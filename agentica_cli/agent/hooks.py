"""Lifecycle hooks, for library users (logging, metrics, policies) and for the CLI's command hooks.

Two ways to hook in, on the same object or on different ones (`Agent(hooks=[...])`):

- `before_tool_call(call)` / `after_tool_call(call)`, sync or async; `call` is the
  FunctionCall with validated `.args` (and, after, `.result` / `.error`).
  `before_tool_call` returning False (or a string, the reason) keeps the call from running;
  one that raises blocks it too: a broken check must not let a call through.
- `hook_event(event, payload)`, sync or async, for every event in `HOOK_EVENTS` (Claude Code's
  names). `payload` is the JSON object a command hook reads on stdin: `session_id`,
  `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`, plus the event's own fields
  (`prompt`, `tool_name`/`tool_input`/`tool_use_id`, `tool_response`, `source`, `trigger`,
  `stop_hook_active`, `message`, `reason`). It may return None (go on), a `HookOutcome`, a
  dict in Claude Code's JSON output form (`{"decision": "block", "reason": ...}`,
  `{"hookSpecificOutput": {"permissionDecision": "deny", ...}}`, `{"continue": false}`),
  or a string: context for the model (SessionStart, UserPromptSubmit) or, for PreToolUse,
  the reason to block.

The agent makes each hook an `AgentHook` once, when it is given (`Agent(hooks=...)`, or
`agent.hooks.append`: a `HookList`): its methods are looked up and their arity checked then,
so an object with none of them or a method of the wrong shape is a TypeError at once, and the
loop calls `hook.before` / `hook.after` / `hook.on_event` without probing the object.

While the loop fires an event, `hook_caller()` names the agent it fires for and where its run's
events go, so a hook that runs an agent of its own (extensions/agent_hooks.py) can reuse that
agent's folders and approvals and show its steps in the run's stream.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, SupportsIndex

from agentica_cli.tools.base import FunctionCall, format_tool_error
from agentica_cli.tools.callables import require_positional

BeforeHook = Callable[[FunctionCall], Any]
AfterHook = Callable[[FunctionCall], Any]
EventHook = Callable[[str, dict[str, Any]], Any]

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
               "PermissionRequest", "Notification", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionEnd")
_DECISION_RANK = {None: 0, "allow": 1, "ask": 2, "deny": 3}


@dataclass
class HookOutcome:
    """What the hooks of one event decided, merged (any block wins; deny > ask > allow)."""

    block: bool = False  # refuse the call / the prompt; for Stop: keep working
    reason: str = ""  # why, for the model (or the user, for a blocked prompt)
    decision: str | None = None  # PreToolUse: "allow" (skip the confirmation), "ask" (always confirm), "deny"
    updated_input: dict[str, Any] | None = None  # PreToolUse: the tool's new arguments
    context: list[str] = field(default_factory=list)  # text added for the model
    stop: bool = False  # `continue: false`: end the run
    stop_reason: str = ""
    messages: list[str] = field(default_factory=list)  # for the user: non-blocking errors, systemMessage

    def merge(self, other: HookOutcome | None) -> HookOutcome:
        if other is None:
            return self
        if other.block:
            self.reason = "\n".join(r for r in (self.reason, other.reason) if r)
        self.block = self.block or other.block
        if _DECISION_RANK[other.decision] > _DECISION_RANK[self.decision]:
            self.decision = other.decision
            if other.decision == "deny" and other.reason and other.reason not in self.reason:
                self.reason = "\n".join(r for r in (self.reason, other.reason) if r)
        if other.updated_input is not None:
            self.updated_input = other.updated_input
        self.context += other.context
        if other.stop and not self.stop:
            self.stop, self.stop_reason = True, other.stop_reason
        self.messages += other.messages
        return self

    @property
    def refuses(self) -> bool:
        return self.block or self.decision == "deny" or self.stop


CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")  # where a hook's plain text is context for the model


def outcome_from_output(event: str, output: str) -> HookOutcome:
    """What a hook's answer (a command's stdout, an http hook's body) decided: a JSON object is
    Claude Code's hook JSON; other text is context for the model on CONTEXT_EVENTS, else nothing."""
    text = output.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return outcome_from_json(data)
    if text and event in CONTEXT_EVENTS:
        return HookOutcome(context=[text])
    return HookOutcome()


@dataclass
class HookCaller:
    """The agent whose event is being handled, and `emit`, which puts an event in its run's stream."""

    agent: Any
    emit: Callable[[Any], None]


# Set by Agent._loop in its own task, so it holds for every hook that run fires (its tools'
# tasks inherit it) and a sub-agent's run, in a task of its own, sets its own.
_CALLER: ContextVar[HookCaller | None] = ContextVar("agentica_hook_caller", default=None)


def set_hook_caller(agent: Any, emit: Callable[[Any], None]) -> None:
    _CALLER.set(HookCaller(agent, emit))


def hook_caller() -> HookCaller | None:
    """The running agent a hook is called for; None outside a run (a UI's SessionStart)."""
    return _CALLER.get()


def outcome_from_json(data: dict[str, Any]) -> HookOutcome:
    """Claude Code's hook JSON output as a HookOutcome."""
    outcome = HookOutcome()
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision = specific.get("permissionDecision") or data.get("decision")
    reason = specific.get("permissionDecisionReason") or data.get("reason") or ""
    verdict = specific.get("decision")
    if isinstance(verdict, dict):  # PermissionRequest: {"behavior": "allow" | "deny", "message", "updatedInput"}
        decision = {"allow": "allow", "deny": "deny"}.get(str(verdict.get("behavior")))
        reason = verdict.get("message") or reason
        if isinstance(verdict.get("updatedInput"), dict):
            specific = {**specific, "updatedInput": verdict["updatedInput"]}
    if decision in ("allow", "ask", "deny"):
        outcome.decision = decision
        outcome.reason = str(reason)
    elif decision in ("block", "approve"):  # the older PreToolUse spelling, and block for the others
        if decision == "block":
            outcome.block, outcome.reason = True, str(reason or "blocked by a hook")
        else:
            outcome.decision = "allow"
    updated = specific.get("updatedInput")
    if isinstance(updated, dict):
        outcome.updated_input = updated
    extra = specific.get("additionalContext")
    if isinstance(extra, str) and extra.strip():
        outcome.context.append(extra.strip())
    if data.get("continue") is False:
        outcome.stop = True
        outcome.stop_reason = str(data.get("stopReason") or "stopped by a hook")
    message = data.get("systemMessage")
    if isinstance(message, str) and message.strip():
        outcome.messages.append(message.strip())
    return outcome


def as_outcome(value: Any, event: str) -> HookOutcome | None:
    """A hook's return value as a HookOutcome (see the module docstring)."""
    if value is None or value is True:
        return None
    if isinstance(value, HookOutcome):
        return value
    if isinstance(value, dict):
        return outcome_from_json(value)
    if value is False:
        return HookOutcome(block=True, reason=f"a {event} hook")
    if isinstance(value, str):
        if not value:
            return None
        if event == "PreToolUse":
            return HookOutcome(block=True, reason=value)
        return HookOutcome(context=[value])
    return None


class ToolHooks:
    """Hooks from plain functions: `ToolHooks(before=log_call, after=record_result,
    on_event=lambda event, payload: ...)`. Each is checked here: `before(call)`,
    `after(call)`, `on_event(event, payload)`."""

    def __init__(self, before: BeforeHook | None = None, after: AfterHook | None = None,
                 on_event: EventHook | None = None):
        for fn, count, shape in ((before, 1, "ToolHooks(before=fn): fn(call) -> None | bool | str"),
                                 (after, 1, "ToolHooks(after=fn): fn(call) -> None"),
                                 (on_event, 2, "ToolHooks(on_event=fn): fn(event: str, payload: dict)")):
            if fn is not None:
                require_positional(fn, count, shape + " (sync or async)")
        self._before = before
        self._after = after
        self._on_event = on_event

    async def before_tool_call(self, call: FunctionCall) -> Any:
        return await call_maybe_async(self._before, call) if self._before else None

    async def after_tool_call(self, call: FunctionCall) -> Any:
        return await call_maybe_async(self._after, call) if self._after else None

    async def hook_event(self, event: str, payload: dict[str, Any]) -> Any:
        return await call_maybe_async(self._on_event, event, payload) if self._on_event else None


BEFORE_SHAPE = "before_tool_call(call) -> None | bool | str (sync or async)"
AFTER_SHAPE = "after_tool_call(call) -> None (sync or async)"
EVENT_SHAPE = "hook_event(event: str, payload: dict) -> None | HookOutcome | dict | str (sync or async)"
HOOK_SHAPE = ("an object with before_tool_call(call), after_tool_call(call) and/or hook_event(event, payload) "
              "(e.g. agentica_cli.agent.ToolHooks)")


@dataclass(frozen=True)
class AgentHook:
    """One hook as the loop calls it: its three entry points, each None where the object has
    none. Made once, when the hook is given to the agent (`as_agent_hook`), so the loop never
    asks an object what it can do in the middle of a run. `source` is the object given."""

    source: object
    before: BeforeHook | None = None
    after: AfterHook | None = None
    on_event: EventHook | None = None


def as_agent_hook(hook: object) -> AgentHook:
    """`hook` (an object with before_tool_call / after_tool_call / hook_event) as an AgentHook;
    TypeError for an object with none of them or one that takes the wrong arguments."""
    if isinstance(hook, AgentHook):
        return hook
    before = getattr(hook, "before_tool_call", None)
    after = getattr(hook, "after_tool_call", None)
    on_event = getattr(hook, "hook_event", None)
    if before is None and after is None and on_event is None:
        raise TypeError(f"an agent hook must be {HOOK_SHAPE}; got {type(hook).__name__} {hook!r}")
    for fn, count, shape in ((before, 1, BEFORE_SHAPE), (after, 1, AFTER_SHAPE), (on_event, 2, EVENT_SHAPE)):
        if fn is not None:
            require_positional(fn, count, f"{type(hook).__name__}.{shape}")
    return AgentHook(hook, before, after, on_event)


class HookList(list[AgentHook]):
    """An agent's hooks: whatever is added (append, insert, extend, +=) is made an AgentHook
    then; `x in hooks` is true for the object given as well as for its AgentHook."""

    def __init__(self, hooks: Iterable[object] = ()):
        super().__init__(as_agent_hook(h) for h in hooks)

    def append(self, hook: object) -> None:
        super().append(as_agent_hook(hook))

    def insert(self, index: SupportsIndex, hook: object) -> None:
        super().insert(index, as_agent_hook(hook))

    def extend(self, hooks: Iterable[object]) -> None:
        super().extend(as_agent_hook(h) for h in hooks)

    # += takes any hook object (it is made an AgentHook), wider than list's __add__ takes.
    def __iadd__(self, hooks: Iterable[object]) -> HookList:  # type: ignore[override,misc]
        self.extend(hooks)
        return self

    def __contains__(self, hook: object) -> bool:
        return any(h is hook or h.source is hook for h in self)

    @property
    def with_events(self) -> list[AgentHook]:
        """The hooks that take lifecycle events (hook_event)."""
        return [h for h in self if h.on_event is not None]


async def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


def as_hook_list(hooks: object) -> HookList:
    """`Agent(hooks=...)`: None, one hook, or a list or tuple of them."""
    if hooks is None:
        return HookList()
    if isinstance(hooks, (list, tuple)):
        return HookList(hooks)
    return HookList([hooks])


def event_payload(agent: Any, event: str, **fields: Any) -> dict[str, Any]:
    """The JSON a hook of `event` receives: the common fields, then the event's own."""
    approve = getattr(agent, "approve", None)
    return {
        "session_id": getattr(agent, "session_id", ""),
        "transcript_path": str(getattr(agent, "transcript_path", "") or ""),
        "cwd": str(getattr(agent, "work_dir", "") or os.getcwd()),
        "permission_mode": str(getattr(approve, "mode", "") or "default"),
        "hook_event_name": event,
        **fields,
    }


def tool_payload(agent: Any, event: str, call: FunctionCall) -> dict[str, Any]:
    fields: dict[str, Any] = {"tool_name": call.name, "tool_input": dict(call.args or {}), "tool_use_id": call.call_id}
    if event == "PostToolUse":
        fields["tool_response"] = call.result or ""
    elif event == "PostToolUseFailure":  # Claude Code's fields for a call that failed
        fields["error"] = call.error or call.result or ""
        fields["is_interrupt"] = False
    elif event == "PermissionRequest":
        fields["permission_suggestions"] = []
    return event_payload(agent, event, **fields)


async def fire_event(hooks: Sequence[AgentHook], event: str, payload: dict[str, Any]) -> HookOutcome:
    """Every hook's `hook_event` for one event, merged. A hook that raises does not stop the
    others; the failure is a message for the user (for PreToolUse the executor blocks instead)."""
    merged = HookOutcome()
    for hook in hooks:
        handler = hook.on_event
        if handler is None:
            continue
        try:
            merged.merge(as_outcome(await call_maybe_async(handler, event, payload), event))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if event == "PreToolUse":
                raise
            merged.messages.append(f"{event} hook failed: {format_tool_error(exc)}")
    return merged
