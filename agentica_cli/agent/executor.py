"""ToolExecutor: runs the tool calls of one model reply and gives every call exactly one result.

Consecutive concurrency-safe calls run together (asyncio.gather); any other call runs alone,
in order. Per call: limit, unknown tool, arguments, input guardrails, before-hooks, approval
(destructive tools, and any the approve hook's `needs_review` names), execution, output
guardrails, after-hooks. Results keep the model's order, also when the run is cancelled
half-way (unfinished calls are recorded as cancelled).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agentica_cli.agent.approval import ApprovalPolicy, CallableApproval, Decision
from agentica_cli.agent.events import (
    ApprovalRequested,
    Event,
    Notice,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
)
from agentica_cli.agent.hooks import HookList, HookOutcome, as_outcome, call_maybe_async, fire_event, tool_payload
from agentica_cli.models.base import ToolCallRequest
from agentica_cli.tools.base import Function, FunctionCall, Tool, format_tool_error
from agentica_cli.tools.context import ToolContext

if TYPE_CHECKING:
    from pathlib import Path

    from agentica_cli.agent.config import ToolConfig
    from agentica_cli.agent.run_state import RunState
    from agentica_cli.tools.guardrails import ToolInputGuardrail, ToolOutputGuardrail

CANCELLED = "Cancelled: the user interrupted the run before this call finished."


def limit_reached_note(limit: int) -> str:
    return (f"\n\n[Tool call limit reached: this run may make at most {limit} tool calls. Tools are no longer "
            "available; answer the user now with what you have.]")


@dataclass
class CallRecord:
    request: ToolCallRequest
    call: FunctionCall
    status: str = "pending"  # final: ok, error, denied, blocked, cancelled, malformed, unknown_tool, limit
    done: bool = False

    @property
    def stops_run(self) -> bool:
        if self.call.control == "stop":
            return True
        return self.status == "ok" and self.call.function.stop_after_tool_call

    @property
    def runs_alone(self) -> bool:
        fn = self.call.function
        return self.status != "pending" or not fn.concurrency_safe or fn.is_destructive


class ExecutorHost(Protocol):
    """What the executor uses of the agent that runs it (the Agent; typed here so this module
    does not import agent.py, which imports it). Tools get it as ToolContext.agent."""

    tool_config: ToolConfig
    tool_input_guardrails: list[ToolInputGuardrail]
    tool_output_guardrails: list[ToolOutputGuardrail]
    hooks: HookList
    tools: list[Function | Tool]
    model: Any  # the model client (whether it takes images)
    results_dir: Path | None  # where oversized results go (made on first use)

    @property
    def approve(self) -> ApprovalPolicy | None:
        """The approval policy (Agent wraps a plain approve callable in a CallableApproval)."""
        ...

    def _append(self, message: dict[str, Any]) -> None: ...

    async def notify(self, message: str) -> None: ...


class ToolExecutor:
    def __init__(self, agent: ExecutorHost, run: RunState, functions: dict[str, Function]):
        self.agent = agent
        self.run = run
        self.functions = functions

    async def execute(self, requests: list[ToolCallRequest]) -> list[CallRecord]:
        records = [self._prepare(req) for req in requests]
        try:
            await self._run_batches(records)
        finally:
            # Also on cancellation: the history must hold one result for every call.
            for record in records:
                if not record.done:
                    record.call.fail(CANCELLED)
                    self._finish(record, "cancelled")
            limit = self.agent.tool_config.tool_call_limit
            if limit is not None and self.run.tool_calls_used >= limit and not self.run.limit_noted:
                records[-1].call.result = (records[-1].call.result or "") + limit_reached_note(limit)
                self.run.limit_noted = True
            self._note_resource_updates(records[-1])
            images = self._images(records)
            for record in records:
                self.agent._append({"role": "tool", "tool_call_id": record.request.id,
                                    "content": record.call.result or ""})
            if images:  # tool messages carry text only: the images follow as a user message
                self.agent._append({"role": "user", "content": images})
        return records

    def _note_resource_updates(self, record: CallRecord) -> None:
        """MCP resources the model has seen that changed meanwhile: their new text goes with
        this reply's results (tools/mcp/resource_updates.py)."""
        tools = [t for t in self.agent.tools if hasattr(t, "take_resource_updates")]
        if not tools:
            return
        from agentica_cli.tools.mcp.resource_updates import describe, take_resource_updates, update_note

        updates = take_resource_updates(tools)
        if updates:
            record.call.result = (record.call.result or "") + "\n\n" + update_note(updates)
            self.run.emit(Notice(describe(updates), kind="info"))

    def _images(self, records: list[CallRecord]) -> list[dict[str, Any]]:
        """Content parts for the images the calls returned, when the model takes images;
        otherwise a note in each such result says they were left out."""
        with_images = [r for r in records if r.call.images and r.status == "ok"]
        if not with_images:
            return []
        from agentica_cli.images import describe_all, supports_vision

        if not supports_vision(self.agent.model):
            for record in with_images:
                record.call.result = (record.call.result or "") + (
                    f"\n[{len(record.call.images)} image(s) not shown: the model "
                    f"'{getattr(self.agent.model, 'id', '')}' is not known to take images (set model.vision = true "
                    "in the config if it does)]")
            return []
        parts: list[dict[str, Any]] = []
        for record in with_images:
            parts.append({"type": "text", "text": f"[image(s) returned by {record.call.name} "
                                                  f"(call {record.request.id})]"})
            parts += [image.part() for image in record.call.images]
            self.run.emit(Notice(f"{record.call.name} image(s) sent to the model: "
                                 f"{describe_all(record.call.images)}", kind="info"))
        return parts

    # -- planning -----------------------------------------------------------------------

    def _prepare(self, req: ToolCallRequest) -> CallRecord:
        function = self.functions.get(req.name)
        if function is None:
            function = Function(name=req.name or "(no name)", parameters={})
            record = CallRecord(req, FunctionCall(function, req.id, req.arguments))
            available = ", ".join(self.functions) or "none"
            record.call.fail(f"Error: unknown tool '{req.name}'. Available tools: {available}.")
            record.status = "unknown_tool"
            return record
        record = CallRecord(req, FunctionCall(function, req.id, req.arguments))
        limit = self.agent.tool_config.tool_call_limit
        if limit is not None and self.run.tool_calls_used >= limit:
            record.call.fail(f"Error: not run: the tool call limit for this run ({limit}) was reached. "
                             "Answer with what you have.")
            record.status = "limit"
            return record
        self.run.tool_calls_used += 1
        if not record.call.parse_arguments():
            record.status = "malformed"
        return record

    def _batches(self, records: list[CallRecord]) -> list[list[CallRecord]]:
        batches: list[list[CallRecord]] = []
        for record in records:
            if batches and not record.runs_alone and not batches[-1][-1].runs_alone:
                batches[-1].append(record)
            else:
                batches.append([record])
        return batches

    async def _run_batches(self, records: list[CallRecord]) -> None:
        stopper: CallRecord | None = None
        for batch in self._batches(records):
            if stopper is not None:
                for record in batch:
                    record.call.fail(f"Not run: the run was stopped by the '{stopper.call.name}' call before this one.")
                    self._finish(record, "cancelled")
                continue
            if len(batch) == 1:
                await self._run_one(batch[0])
            else:
                await asyncio.gather(*(self._run_one(r) for r in batch))
            stopper = next((r for r in batch if r.stops_run), None)

    # -- one call -----------------------------------------------------------------------

    async def _run_one(self, record: CallRecord) -> None:
        call = record.call
        self.run.emit(ToolCallStarted(call.call_id, call.name, call.args or _loose_args(record.request.arguments)))
        if record.status != "pending":  # unknown, malformed or over the limit: already answered
            self._finish(record, record.status)
            return
        hooked = HookOutcome()
        blocked = await self._check_input(call, hooked)
        if blocked is not None:
            call.fail(blocked)
            if hooked.stop:
                call.control = "stop"
                call.result = f"Stopped by a hook: {hooked.stop_reason}"
            self._finish(record, "blocked")
            return
        decision = await self._decide(call, hooked)
        if decision is not None and not decision.allowed:
            call.fail(decision.message or f"Permission denied: the user did not allow '{call.name}' to run.")
            await self._after_hooks(call, ran=False)
            self._finish(record, "denied")
            return
        emit = self._emitter(call.call_id)
        await call.execute(ToolContext(call_id=call.call_id, agent=self.agent, emit=emit,
                                       output=lambda text: emit(ToolOutput(call.call_id, text))))
        status = "error" if call.error is not None or call.control == "retry" else "ok"
        if call.control is None:
            status = await self._check_output(call, status)
        if hooked.context:
            call.result = (call.result or "") + "".join(f"\n\n[hook: {text}]" for text in hooked.context)
        self._bound_result(call)
        await self._after_hooks(call)
        self._finish(record, status)

    async def _check_input(self, call: FunctionCall, hooked: HookOutcome) -> str | None:
        """Guardrails, then the PreToolUse hooks (their verdicts merged into `hooked`):
        the reason the call is blocked, or None."""
        args = call.args or {}
        for guardrail in self.agent.tool_input_guardrails:
            verdict = await guardrail.run(call.name, args)
            if not verdict.allowed:
                return f"Blocked: the call to '{call.name}' was not run ({verdict.message})."
        for hook in self.agent.hooks:
            try:
                if hook.on_event is not None:
                    hooked.merge(await fire_event([hook], "PreToolUse", tool_payload(self.agent, "PreToolUse", call)))
                if hook.before is not None:
                    hooked.merge(as_outcome(await call_maybe_async(hook.before, call), "PreToolUse"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                return f"Blocked: the call to '{call.name}' was not run (before_tool_call hook failed: " \
                       f"{format_tool_error(exc)})."
            for message in hooked.messages:
                self.run.emit(Notice(message, kind="warning"))
            hooked.messages.clear()
            if hooked.refuses:
                reason = hooked.reason or hooked.stop_reason or "a before_tool_call hook"
                return f"Blocked: the call to '{call.name}' was not run ({reason})."
            if hooked.updated_input is not None:
                updated, hooked.updated_input = hooked.updated_input, None
                if not call.replace_arguments(updated):
                    return f"Blocked: a hook rewrote the arguments of '{call.name}' badly: {call.result}"
                args = call.args or {}
        return None

    async def _decide(self, call: FunctionCall, hooked: HookOutcome) -> Decision | None:
        """Whether the call may run; None when nobody needs to decide. A PreToolUse hook's
        "allow" skips the question (the approval policy's `hook_allowed` may still refuse: deny
        rules, plan mode); its "ask" always asks."""
        if hooked.decision == "allow":
            return await self._after_hook_allowed(call, None)
        if hooked.decision == "ask" or self._needs_approval(call):
            return await self._ask_approval(call, hooked.reason if hooked.decision == "ask" else None)
        return None

    def _needs_approval(self, call: FunctionCall) -> bool:
        """Destructive calls go to the approval policy; other calls too when its
        `needs_review(call)` says so (a permission policy with deny rules or a read-only mode
        must see them; a plain approve callable reviews none). A failing check counts as "needs it"."""
        approve = self.agent.approve
        if approve is None:
            return False
        if call.function.is_destructive:
            return True
        try:
            return bool(approve.needs_review(call))
        except Exception:
            return True

    async def _ask_approval(self, call: FunctionCall, hook_asks: str | None = None) -> Decision:
        """The approve hook's decision. `hook_asks` (a PreToolUse hook said "ask", with this
        reason): the user is asked whatever the mode, through the policy's `confirm`."""
        approve = self.agent.approve
        if approve is None:  # (only a hook's "ask" gets here without one)
            return Decision.deny(f"Permission denied: a hook asks for the user's confirmation of '{call.name}' "
                                 "and nobody can answer here.")
        answered = await self._permission_request_hooks(call)
        if answered is not None:
            return answered
        self.run.emit(ApprovalRequested(call.call_id, call.name, call.args or {}))
        await self.run.flush()  # the UI has the request in hand before the hook asks
        if isinstance(approve, CallableApproval):  # a plain callable asks a person
            await self.agent.notify(f"agentica needs your permission to use {call.name}")
        try:
            if hook_asks is not None:
                decision = await call_maybe_async(approve.confirm, call, hook_asks or "a hook asks")
            else:
                decision = await call_maybe_async(approve, call)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return Decision.deny(f"Permission denied: the approval check failed ({format_tool_error(exc)}); "
                                 f"'{call.name}' was not run.")
        if not isinstance(decision, Decision):  # fail closed on a policy that breaks its Protocol
            return Decision.deny(f"Permission denied: the approval check returned {type(decision).__name__}, "
                                 f"not a Decision; '{call.name}' was not run.")
        return decision

    async def _permission_request_hooks(self, call: FunctionCall) -> Decision | None:
        """PermissionRequest hooks, when a person is about to be asked: one that denies (or
        exits 2) refuses the call; one that allows answers for the person (deny rules and plan
        mode still apply, through the approve hook's `hook_allowed`); None: ask as usual."""
        if not self.agent.hooks.with_events:
            return None
        said = await fire_event(self.agent.hooks.with_events, "PermissionRequest",
                                tool_payload(self.agent, "PermissionRequest", call))
        for message in said.messages:
            self.run.emit(Notice(message, kind="warning"))
        if said.refuses:
            reason = said.reason or said.stop_reason or "a PermissionRequest hook"
            return Decision.deny(f"Permission denied: the call to '{call.name}' was not run ({reason}).")
        if said.decision != "allow":
            return None
        if said.updated_input is not None and not call.replace_arguments(said.updated_input):
            return Decision.deny(f"Permission denied: a hook rewrote the arguments of '{call.name}' badly.")
        return await self._after_hook_allowed(call, Decision(True))

    async def _after_hook_allowed(self, call: FunctionCall, without_check: Decision | None) -> Decision | None:
        """A hook allowed `call`: what the approve hook's `hook_allowed` still says (deny rules,
        plan mode, escalations); `without_check` where the agent has no approval policy."""
        approve = self.agent.approve
        if approve is None:
            return without_check
        try:
            return await call_maybe_async(approve.hook_allowed, call)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return Decision.deny(f"Permission denied: the approval check failed ({format_tool_error(exc)}).")

    async def _check_output(self, call: FunctionCall, status: str) -> str:
        for guardrail in self.agent.tool_output_guardrails:
            verdict = await guardrail.run(call.name, call.result or "")
            if not verdict.allowed:
                call.fail(f"Blocked: the result of '{call.name}' was withheld ({verdict.message}).")
                return "blocked"
            if verdict.replaced:
                call.result = verdict.message
        return status

    def _bound_result(self, call: FunctionCall) -> None:
        """Hold the result to the ToolConfig budget (the whole text is saved to a file)."""
        from agentica_cli.agent.result_budget import bounded_result, over_budget, temporary_results_dir

        limit = self.agent.tool_config.max_result_tokens
        if call.result is None or not over_budget(call.result, limit):
            return
        if self.agent.results_dir is None:
            self.agent.results_dir = temporary_results_dir()
        bounded = bounded_result(call.result, max_tokens=limit, folder=self.agent.results_dir,
                                 name=call.name, call_id=call.call_id)
        if call.error is not None:
            call.error = bounded
        call.result = bounded

    async def _after_hooks(self, call: FunctionCall, ran: bool = True) -> None:
        """after_tool_call (every call that got past the before-hooks), and PostToolUse (a call
        that ran): a PostToolUse block or context is added to the result the model reads (the
        call has run; nothing is undone)."""
        for hook in self.agent.hooks:
            try:
                if ran and hook.on_event is not None:  # PostToolUseFailure for a call that failed
                    event = "PostToolUse" if call.error is None else "PostToolUseFailure"
                    said = await fire_event([hook], event, tool_payload(self.agent, event, call))
                    for message in said.messages:
                        self.run.emit(Notice(message, kind="warning"))
                    notes = ([said.reason] if said.block and said.reason else []) + said.context
                    if notes:
                        call.result = (call.result or "") + "".join(f"\n\n[{event} hook: {n}]" for n in notes)
                if hook.after is not None:
                    await call_maybe_async(hook.after, call)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.run.emit(Notice(f"after_tool_call hook failed for '{call.name}': {format_tool_error(exc)}",
                                     kind="warning"))

    def _finish(self, record: CallRecord, status: str) -> None:
        record.status = status
        record.done = True
        call = record.call
        error = call.error if status != "ok" else None
        self.run.emit(ToolCallFinished(call.call_id, call.name, call.result or "", error, call.elapsed, status,
                                       call.function.show_result))

    def _emitter(self, call_id: str) -> Callable[[Event], None]:
        """`emit` for a tool: its events are attributed to its call (e.g. a sub-agent's)."""
        prefix = f"task:{call_id}"

        def emit(event: Event) -> None:
            if not event.source:
                event.source = prefix
            elif event.source != prefix and not event.source.startswith(prefix + "/"):
                event.source = f"{prefix}/{event.source}"
            self.run.emit(event)

        return emit


def _loose_args(raw: str) -> dict[str, Any]:
    """Best-effort arguments for display when the call was not validated."""
    try:
        value = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
