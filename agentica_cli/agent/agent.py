"""Agent: the loop. Ask the model, run the tools it calls, repeat until it answers.

The loop only produces events; every UI consumes them. `run_stream` runs the loop in a
producer task and yields its events from a queue, so tools (a sub-agent) can push events
into the live stream from anywhere, and cancelling the consumer cancels the run cleanly.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any

from agentica_cli.agent.approval import ApprovalPolicy, ApproveHook, as_approval_policy
from agentica_cli.agent.checkpointing import CheckpointRunner
from agentica_cli.agent.config import RunResult, ToolConfig
from agentica_cli.agent.context import ContextManager, UnusableSummary, estimate_tokens, is_summary
from agentica_cli.agent.events import (
    Checkpoint,
    Error,
    Event,
    ModelRequestStarted,
    Notice,
    ReasoningDelta,
    RetryNotice,
    StopReason,
    TextDelta,
    TurnFinished,
    TurnStarted,
    Usage,
)
from agentica_cli.agent.executor import ToolExecutor
from agentica_cli.agent.hooks import as_hook_list, set_hook_caller
from agentica_cli.agent.lifecycle import LifecycleEvents
from agentica_cli.agent.observers import notify, notify_finished, start_observers
from agentica_cli.agent.prompt import build_system_prompt
from agentica_cli.agent.run_state import RunState
from agentica_cli.models.base import (
    Model,
    ModelError,
    ModelReasoningDelta,
    ModelResponse,
    ModelRetry,
    ModelTextDelta,
    TokenUsage,
)
from agentica_cli.tools.base import Function, Tool
from agentica_cli.tools.guardrails import ToolInputGuardrail, ToolOutputGuardrail

_DONE = object()


class Agent(LifecycleEvents):
    """An LLM with tools: `run_stream` / `run` / `run_sync` a prompt, the conversation goes on.

    tools: plain or async functions, `@tool` functions, Functions, Tools, McpTools.
    approve: called (sync or async) for `is_destructive` calls -> Decision; None allows all.
        Checked here: a callable that cannot take one argument is a TypeError.
    messages / on_message: start from a saved history / called after every appended message.
    hooks: objects with before_tool_call(call) / after_tool_call(call) and/or
        hook_event(event, payload) for the lifecycle events (agent/hooks.py), e.g. ToolHooks;
        checked here (agent.hooks is a HookList: what is appended later is checked then).
    checkpoints: e.g. agentica_cli.checkpoints.Checkpoints: snapshots at each turn's start and
        after each step with a call that is not read-only (a `Checkpoint` event per snapshot).
    """

    _approve: ApprovalPolicy | None

    def __init__(
        self,
        model: Model,
        tools: Sequence[Callable[..., Any] | Function | Tool] | None = None,
        instructions: str | None = None,
        tool_config: ToolConfig | None = None,
        tool_input_guardrails: Sequence[ToolInputGuardrail] | None = None,
        tool_output_guardrails: Sequence[ToolOutputGuardrail] | None = None,
        approve: ApproveHook | ApprovalPolicy | None = None,
        messages: list[dict[str, Any]] | None = None,
        on_message: Callable[[dict[str, Any]], None] | None = None,
        on_history_replaced: Callable[[list[dict[str, Any]]], None] | None = None,
        hooks: object = None,
        name: str | None = None,
        checkpoints: Any = None,
    ):
        self.model = model
        self.tools: list[Function | Tool] = [t if isinstance(t, (Function, Tool)) else Function.from_callable(t)
                                             for t in tools or ()]
        self.instructions = instructions
        self.tool_config = tool_config or ToolConfig()
        self.tool_input_guardrails = list(tool_input_guardrails or ())
        self.tool_output_guardrails = list(tool_output_guardrails or ())
        self.approve = approve
        self.messages: list[dict[str, Any]] = [m for m in messages or () if m.get("role") != "system"]
        self.compacted_away: list[dict[str, Any]] = []  # what compactions replaced, oldest first
        self.on_message = on_message
        # Compaction rewrites the history rather than appending to it; a session store
        # that only saw appends would resume the long version.
        self.on_history_replaced = on_history_replaced
        self.hooks = as_hook_list(hooks)
        self.name = name
        self.checkpoints = checkpoints
        self._checkpoints_runner: CheckpointRunner | None = None
        self.usage = TokenUsage()
        self.context = ContextManager(self.tool_config)
        self._connected: set[int] = set()
        self._running = False
        self.tool_filter: set[str] | None = None  # only these tools are offered (a command's allowed-tools)
        # For lifecycle hooks: the session they are told about. The CLI sets its own id and
        # transcript; a sub-agent (the task tool sets is_subagent) fires SubagentStop, not
        # the session's events.
        self.session_id = uuid.uuid4().hex
        self.transcript_path = ""
        self.is_subagent = False
        self._session_source = "resume" if self.messages else "startup"
        self._session_started = False
        self._start_context: list[str] = []  # SessionStart hooks' context, for the next prompt
        # The instruction files' texts in `instructions` (the CLI sets them): a hook's context
        # that repeats one whole is not sent twice (lifecycle.without_repeats).
        self.instruction_texts: list[str] = []
        # Where oversized tool results are saved (result_budget); a temporary folder is made on first use.
        self.results_dir: Path | None = Path(self.tool_config.result_dir).expanduser() \
            if self.tool_config.result_dir else None

    # -- configuration ------------------------------------------------------------------

    @property
    def approve(self) -> ApprovalPolicy | None:
        """The approval policy the executor asks (a plain `approve(call)` callable is wrapped)."""
        return self._approve

    @approve.setter
    def approve(self, approve: ApproveHook | ApprovalPolicy | None) -> None:
        self._approve = as_approval_policy(approve)

    @property
    def functions(self) -> dict[str, Function]:
        """Every function the model may call, by name (a later tool wins a name clash)."""
        found: dict[str, Function] = {}
        for item in self.tools:
            for fn in item.get_functions() if isinstance(item, Tool) else (item,):
                if self.tool_filter is None or fn.name in self.tool_filter:
                    found[fn.name] = fn
        return found

    def dynamic_guidance(self) -> list[str]:
        """Context lines that may change between runs; subclasses add their own."""
        limit = self.tool_config.tool_call_limit
        return [f"You may make at most {limit} tool calls to answer this request."] if limit else []

    @property
    def context_window(self) -> int:
        """Tokens the model takes: ToolConfig's figure, else the model's (which /model may change)."""
        return self.tool_config.context_window or getattr(self.model, "context_window", None) or 128_000

    def system_prompt(self) -> str:
        return build_system_prompt(self.instructions, self.tools, self.dynamic_guidance())

    def reset(self, source: str | None = "clear") -> None:
        """Forget the conversation; usage totals stay. A new session starts, whose SessionStart
        hooks get `source` ("clear", or "resume" when a saved history follows); None: the same
        session goes on with a shorter history (a rewind)."""
        self.messages = []
        self.compacted_away = []
        self.context = ContextManager(self.tool_config)
        if source is not None:
            self._session_started, self._session_source, self._start_context = False, source, []

    def _append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        if self.on_message is not None:
            self.on_message(message)

    # -- running ------------------------------------------------------------------------

    async def run_stream(self, prompt: str, images: Sequence[Any] = ()) -> AsyncGenerator[Event, None]:
        """Yield the run's events as they happen; TurnFinished ends every run not cancelled.

        `images` (agentica_cli.images.Image, or paths) go with the prompt as image parts.

        Cancelling the consuming task, or `aclose()` on the stream, stops the run: running
        tools are cancelled and recorded as such. (Leaving an `async for` with `break` does
        not close the stream until it is garbage-collected; use `contextlib.aclosing`.)
        """
        if self._running:
            raise RuntimeError("this agent is already running; use another Agent for concurrent runs")
        loaded = _as_images(images)  # a bad image fails here, before the run starts
        self._running = True
        run = RunState()
        observers = start_observers(self)  # telemetry and the like: every front end's runs alike
        producer = asyncio.create_task(self._loop(prompt, run, loaded))
        producer.add_done_callback(lambda _: run.queue.put_nowait(_DONE))
        ended: BaseException | None = None
        try:
            while (event := await run.queue.get()) is not _DONE:
                if observers:
                    notify(observers, event)
                yield event
                run.queue.task_done()
            producer.result()  # a bug in the loop surfaces here, not silently
        except BaseException as exc:
            ended = exc
            raise
        finally:
            if not producer.done():
                producer.cancel()  # the consumer went away (cancelled or closed the stream)
                await asyncio.wait({producer})
            self._running = False
            if observers:
                notify_finished(observers, ended)

    async def run(self, prompt: str, images: Sequence[Any] = ()) -> RunResult:
        content, reason, error = "", "completed", None
        usage = TokenUsage()
        async for event in self.run_stream(prompt, images):
            if event.source:
                continue
            if isinstance(event, TurnFinished):
                content, reason = event.content, event.stop_reason
            elif isinstance(event, Usage):
                usage = usage + TokenUsage(event.input_tokens, event.output_tokens, event.total_tokens)
            elif isinstance(event, Error):
                error = event.message
        return RunResult(content, list(self.messages), usage, reason, error)  # type: ignore[arg-type]

    def run_sync(self, prompt: str, images: Sequence[Any] = ()) -> RunResult:
        async def run_then_close() -> RunResult:
            try:
                return await self.run(prompt, images)
            finally:  # this loop ends here: close the model's connections while it still runs
                aclose = getattr(self.model, "aclose", None)
                if aclose is not None:
                    await aclose()

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(run_then_close())
        # Called from async code (a notebook): run on a fresh loop in a helper thread.
        box: list[Any] = []
        thread = threading.Thread(target=lambda: box.append(asyncio.run(run_then_close())))
        thread.start()
        thread.join()
        return box[0]

    async def _loop(self, prompt: str, run: RunState, images: list[Any]) -> None:
        set_hook_caller(self, run.emit)  # this task's own context: the hooks this run fires
        run.emit(TurnStarted(prompt))
        if not self.is_subagent and self.hooks:
            prompt, verdict = await self._prompt_hooks(run, prompt)
            if verdict.block or verdict.stop:
                why = verdict.reason if verdict.block else verdict.stop_reason
                run.emit(Notice(f"The prompt was blocked by a hook: {why}", kind="warning"))
                return self._finish(run, "", "blocked", why)
        await self._connect_tools(run)
        functions = self.functions
        schemas = [fn.to_openai() for fn in functions.values()] or None
        run.system_prompt = self.system_prompt()
        await self._compact_if_needed(run)  # before the new prompt joins the older turns
        if self.checkpoints is not None:  # runs while the first request is in flight: see _turn_started
            runner = self._checkpoint_runner()
            if hasattr(self.checkpoints, "save_journal"):
                # The loop waits for the scan only; the journal is written next on the worker,
                # before any later snapshot (so before any tool that may change a file runs).
                run.turn_start = runner.submit("begin_turn", prompt, len(self.messages), save=False)
                runner.submit("save_journal")
            else:
                run.turn_start = runner.submit("begin_turn", prompt, len(self.messages))
        prompt = self._with_resource_updates(run, prompt)
        asked: dict[str, Any] = {"role": "user", "content": prompt}
        if images:
            from agentica_cli.images import describe_all, supports_vision, user_content

            asked["content"] = user_content(prompt, images)
            run.emit(Notice(f"Sent with the prompt: {describe_all(images)}", kind="info"))
            if not supports_vision(self.model):
                run.emit(Notice(f"The model '{getattr(self.model, 'id', '')}' is not known to take images; the "
                                "request may be refused (set model.vision = true if it takes them).", kind="warning"))
        self._append(asked)
        try:
            await self._steps(run, asked, functions, schemas)
        except asyncio.CancelledError:
            self._keep_interrupted_answer(run, asked)
            if self.checkpoints is not None:  # a tool may have been stopped halfway: what it left is this turn's
                # Blocking, after what is queued (the turn's start, a step's snapshot): the turn
                # must be closed before the cancellation goes on, and it is a few milliseconds.
                runner = self._checkpoint_runner()
                if run.turn_start is not None:
                    self._checkpoint_done(run, run.turn_start.result())
                    run.turn_start = None
                self._checkpoint_done(run, runner.submit("end_turn").result())
            raise
        await self._checkpoint(run, "end_turn", take_snapshot=False)  # the last step's snapshot ends it

    async def _steps(self, run: RunState, asked: dict[str, Any], functions: dict[str, Function],
                     schemas: list[dict[str, Any]] | None) -> None:
        limit = self.tool_config.tool_call_limit
        content = ""
        for step in range(1, self.tool_config.max_turns + 1):
            exhausted = limit is not None and run.tool_calls_used >= limit
            if step > 1:
                await self._compact_if_needed(run)
                if _functions_changed(functions, self.functions):  # e.g. an MCP server's tools/list_changed
                    functions = self.functions
                    schemas = [fn.to_openai() for fn in functions.values()] or None
            run.emit(ModelRequestStarted(step))
            response = await self._request(run, None if exhausted else schemas)
            await self._turn_started(run)
            if response is None:
                self._answer_unanswered(asked, f"[No answer: the request failed ({run.error}).]")
                return self._finish(run, "", "error")
            run.answer_so_far = ""  # in the history now, whole
            self._append(response.to_message())
            self.context.observe(_request_size(response), len(self.messages))
            content = response.content
            ended = response.notice()  # cut, filtered, refused or empty: the user is told
            if ended:
                run.emit(Notice(ended, kind="warning"))
            if not response.tool_calls:
                if ended:
                    return self._finish(run, content, _ENDED_AS.get(response.finish_reason, "empty"), ended)
                if not exhausted and await self._stop_hooks_continue(run):
                    continue
                return self._finish(run, content, "tool_call_limit" if exhausted else "completed")
            mutating = any(not getattr(functions.get(c.name), "is_read_only", False) for c in response.tool_calls)
            if mutating and hasattr(self.checkpoints, "before_tools"):
                # What changed while the model was thinking is not the agent's: /undo must not revert it
                await self._checkpoint(run, "before_tools")
            records = await ToolExecutor(self, run, functions).execute(response.tool_calls)
            if mutating:
                await self._checkpoint(run, "snapshot")
            stopper = next((r for r in records if r.stops_run), None)
            if stopper is not None:
                return self._finish(run, stopper.call.result or "", "stopped_by_tool")
            if exhausted:  # tools were withdrawn and the model still called them: stop here
                return self._finish(run, content or f"Stopped: the tool call limit ({limit}) was reached.",
                                    "tool_call_limit")
        run.emit(Notice(f"Stopped after {self.tool_config.max_turns} model requests (max_turns).", kind="warning"))
        return self._finish(run, content, "max_turns")

    def _with_resource_updates(self, run: RunState, prompt: str) -> str:
        """MCP resources seen earlier that changed since: their new text goes with the prompt."""
        tools = [t for t in self.tools if hasattr(t, "take_resource_updates")]
        if not tools:
            return prompt
        from agentica_cli.tools.mcp.resource_updates import describe, take_resource_updates, update_note

        updates = take_resource_updates(tools)
        if not updates:
            return prompt
        run.emit(Notice(describe(updates), kind="info"))
        return f"{prompt}\n\n{update_note(updates)}"

    def _answer_unanswered(self, asked: dict[str, Any], note: str) -> None:
        """Close a prompt that got no answer (cancelled or failed request) with a short note.

        Without it the next prompt would follow this one directly: two user messages in a
        row, which strict chat templates (vLLM's Gemma, Mistral, ...) reject, and the model
        could not tell the earlier request was abandoned.
        """
        if self.messages and self.messages[-1] is asked:
            self._append({"role": "assistant", "content": note})

    def _keep_interrupted_answer(self, run: RunState, asked: dict[str, Any]) -> None:
        """The user interrupted: what the model had written of its answer stays in the history
        (the next request sees it, as the user saw it), with a note that it was cut there."""
        written = run.answer_so_far.strip()
        run.answer_so_far = ""
        if not written:
            self._answer_unanswered(asked, "[No answer: the user interrupted this request.]")
        elif self.messages and (self.messages[-1] is asked or self.messages[-1].get("role") == "tool"):
            self._append({"role": "assistant", "content": f"{written}\n\n[The user interrupted this answer here.]"})

    def open_checkpoints(self) -> None:
        """Open the checkpoints' store now, on their worker, not at the first turn's start (a
        session that waits for its first prompt, e.g. one a batch prepared ahead): the first
        turn then starts with its snapshot's scan only. Not waited for; a failure turns
        checkpoints off, which the first turn reports as it would have."""
        if self.checkpoints is not None and hasattr(self.checkpoints, "open"):
            self._checkpoint_runner().submit("open")

    def _checkpoint_runner(self) -> CheckpointRunner:
        if self._checkpoints_runner is None or self._checkpoints_runner.checkpoints is not self.checkpoints:
            self._checkpoints_runner = CheckpointRunner(self.checkpoints)
        return self._checkpoints_runner

    async def _checkpoint(self, run: RunState, method: str, *args: Any, **kwargs: Any) -> None:
        """Call `self.checkpoints.<method>` (git: off the event loop, after what is queued) and
        report the snapshot."""
        if self.checkpoints is not None:
            await self._turn_started(run)
            runner = self._checkpoint_runner()
            self._checkpoint_done(run, await runner.result(runner.submit(method, *args, **kwargs)))

    async def _turn_started(self, run: RunState) -> None:
        """Wait for the snapshot of the turn's start, if it is still pending, and report it:
        before the turn's first tool runs, or its end."""
        pending, run.turn_start = run.turn_start, None
        if pending is not None:
            self._checkpoint_done(run, await CheckpointRunner.result(pending))

    def _checkpoint_done(self, run: RunState, info: Any) -> None:
        if info is not None:
            run.emit(Checkpoint(info.commit, info.label, info.turn, list(info.files), list(info.skipped)))
            if getattr(info, "note", ""):
                run.emit(Notice(info.note, kind="info"))
        reason = getattr(self.checkpoints, "disabled", "") or getattr(self.checkpoints, "notice", "")
        if reason and not getattr(self.checkpoints, "disabled_told", False):  # said once, then quiet
            self.checkpoints.disabled_told = True
            run.emit(Notice(reason, kind="warning"))

    def _finish(self, run: RunState, content: str, reason: StopReason, why: str = "") -> None:
        run.emit(TurnFinished(content, reason, why))

    async def _request(self, run: RunState, tools: list[dict[str, Any]] | None) -> ModelResponse | None:
        messages = self.context.for_request(self.messages)
        if run.system_prompt:
            messages = [{"role": "system", "content": run.system_prompt}, *messages]
        response: ModelResponse | None = None
        run.answer_so_far = ""
        try:
            async for event in self.model.response_stream(messages, tools):
                if isinstance(event, ModelTextDelta):
                    run.answer_so_far += event.text
                    run.emit(TextDelta(event.text))
                elif isinstance(event, ModelReasoningDelta):
                    run.emit(ReasoningDelta(event.text))
                elif isinstance(event, ModelRetry):
                    run.answer_so_far = ""  # the answer starts again
                    run.emit(RetryNotice(event.describe(), attempt=event.attempt + 1,
                                         max_attempts=event.max_attempts, delay=event.delay, reason=event.reason))
                else:
                    response = event
        except ModelError as err:
            if is_context_overflow(err):
                return await self._after_overflow(run, tools, err)
            run.error = err.message
            run.emit(Error(err.message, kind=err.kind, status_code=err.status_code))
            return None
        except Exception as exc:  # a Model subclass that broke its contract: still an Error event
            run.error = f"the model request failed: {type(exc).__name__}: {exc}"
            run.emit(Error(run.error))
            return None
        if response is None:
            run.error = "the model returned no response"
            run.emit(Error(run.error))
            return None
        usage, estimated = response.usage, response.usage is None
        if usage is None:
            prompt_tokens = estimate_tokens(messages)
            out = estimate_tokens(response.to_message())
            usage = response.usage = TokenUsage(prompt_tokens, out, prompt_tokens + out)
        run.usage = run.usage + usage
        self.usage = self.usage + usage
        run.emit(Usage(usage.input_tokens, usage.output_tokens, usage.total_tokens, estimated=estimated,
                       cost=usage.cost))
        return response

    async def _after_overflow(self, run: RunState, tools: list[dict[str, Any]] | None,
                              err: ModelError) -> ModelResponse | None:
        """The provider refused the request as too long for the context: compact and try
        once more; never send the same oversized request again. If that is not possible the
        run ends with a clear error and the next run starts by compacting."""
        if not run.overflow_compacted and not run.compaction_failed:
            run.overflow_compacted = True
            if await self._compact(self.tool_config.compact_keep_messages, run) is not None:
                run.emit(Notice("The request was too long for the model's context: older messages were "
                                "replaced by a summary and it was sent again.", kind="compaction"))
                return await self._request(run, tools)
        # The next run must not send this history as it is: count it as a full window.
        self.context.observe(self.context_window, len(self.messages))
        run.error = (f"the conversation is too long for the model's context ({err.message}). "
                     "Use /compact (or /clear) before the next request")
        run.emit(Error(run.error, kind="context_length", status_code=err.status_code))
        return None

    # -- context ------------------------------------------------------------------------

    async def _compact_if_needed(self, run: RunState) -> None:
        if run.compaction_failed or not self.context.over_threshold(self.messages, run.system_prompt,
                                                                    self.context_window):
            return
        summary = await self._compact(self.tool_config.compact_keep_messages, run)
        if summary is not None:
            run.emit(Notice("The conversation was compacted: older messages were replaced by a summary.",
                            kind="compaction"))

    async def compact(self, keep_messages: int | None = None, instructions: str = "") -> str | None:
        """Summarise all but the last `keep_messages` messages into one (the CLI's /compact);
        `instructions` (`/compact focus on the tests`) go to the summariser.

        Returns the summary, or None when there was nothing to compact. Raises ModelError
        when the request fails and UnusableSummary when the reply is empty or a tool call;
        either way the history is left as it was.
        """
        keep = self.tool_config.compact_keep_messages if keep_messages is None else keep_messages
        return await self._compact(keep, None, instructions)

    async def _compact(self, keep: int, run: RunState | None, instructions: str = "") -> str | None:
        cut = self.context.split_for_compaction(self.messages, keep)
        if cut <= 0:
            return None
        await self.fire_hooks("PreCompact", run, trigger="manual" if run is None else "auto",
                              custom_instructions=instructions)
        try:
            summary = await self.context.summarise(self.model, self.messages[:cut], instructions)
        except (ModelError, UnusableSummary) as err:
            if run is None:
                raise
            run.compaction_failed = True
            run.emit(Notice(f"Could not compact the conversation ({err.message}); the history is kept as it was.",
                            kind="warning"))
            return None
        # What the summary replaced, as it was: a rewind to a turn the summary covers starts from these
        # rather than keep a summary of the turns it takes back (see uncompacted_history).
        self.compacted_away.extend(m for m in self.messages[:cut] if not is_summary(m))
        self.messages = self.context.compacted(summary, self.messages[cut:])
        await self._after_compaction(run)
        if self.on_history_replaced is not None:
            self.on_history_replaced(list(self.messages))
        return summary

    async def _connect_tools(self, run: RunState) -> None:
        """Connect tools that need it (MCP servers) before the first request that offers them.

        A server that cannot be reached costs the run its tools, not the run itself: the
        user is told, and the next run tries again.
        """
        for item in self.tools:
            connect = getattr(item, "connect", None)
            if connect is None or not inspect.iscoroutinefunction(connect):
                continue
            connected = _connection_state(item)
            if connected or (connected is None and id(item) in self._connected):
                continue
            try:
                await connect()
            except Exception as exc:
                name = getattr(item, "name", type(item).__name__)
                run.emit(Notice(f"Tool '{name}' could not connect ({type(exc).__name__}: {exc}); "
                                "continuing without its tools.", kind="warning"))
                continue
            self._connected.add(id(item))


def _as_images(images: Sequence[Any]) -> list[Any]:
    """Images to send: Image objects as they are, paths loaded (and fitted) now."""
    if not images:
        return []
    from agentica_cli.images import Image, load

    return [item if isinstance(item, Image) else load(item) for item in images]


def _connection_state(tool: Any) -> bool | None:
    """Whether a connectable tool says it is connected; None when it does not say."""
    for attr in ("connected", "is_connected"):
        value = getattr(tool, attr, None)
        if value is not None and not callable(value):
            return bool(value)
    state = getattr(tool, "status", None) or getattr(tool, "state", None)  # McpTool: "ready" when connected
    return None if state is None else state == "ready"


# How an answer that did not end normally ends the run (ModelResponse.finish_reason -> stop reason).
_ENDED_AS: dict[str, StopReason] = {"length": "truncated", "content_filter": "filtered", "refusal": "filtered"}

_OVERFLOW_WORDS = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|too long for|"
    r"token limit|tokens? exceed|exceeds? the (maximum|max|limit)|request too large|payload too large|"
    r"input is too long|reduce the length", re.IGNORECASE)


def is_context_overflow(err: ModelError) -> bool:
    """The provider refused the request for its size. OpenAIChat says so itself (kind
    "context_length", from every provider's wording: agentica_cli/models/provider_errors.py);
    for other Model classes: a 413, or a 400 whose message says so."""
    if err.kind == "context_length":
        return True
    if err.kind in ("billing", "rate_limit", "connection", "auth"):  # Groq's per-minute 413 is not the context
        return False
    if err.status_code == 413:
        return True
    if err.status_code is None and err.message:  # an error inside a 200 stream (OpenRouter, a gateway)
        from agentica_cli.models.provider_errors import OVERFLOW, ErrorReport, failure_category

        return failure_category(None, ErrorReport(message=err.message)) == OVERFLOW
    return err.status_code == 400 and bool(_OVERFLOW_WORDS.search(err.message or ""))


def _functions_changed(before: dict[str, Function], now: dict[str, Function]) -> bool:
    return before.keys() != now.keys() or any(before[name] is not fn for name, fn in now.items())


def _request_size(response: ModelResponse) -> int:
    usage = response.usage
    return (usage.input_tokens + usage.output_tokens) if usage else 0
