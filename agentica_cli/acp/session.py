"""One ACP session: a thin adapter from an AppSession (app/session.py) to the editor. The
session's events become session updates, its questions session/request_permission; the editor's
files and terminals stand in for the disk and the subprocesses where it offers them.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from acp import (
    RequestError,
    start_tool_call,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import PermissionOption, ToolCallUpdate

from agentica_cli.acp import updates
from agentica_cli.acp.prompt_blocks import content_text
from agentica_cli.app.permissions.approvals import Answer, Question, Reason, edit_path
from agentica_cli.app.safe_text import safe_text
from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, SamplingRequest

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]  # ACP's
STOP_REASONS: dict[str, StopReason] = {"max_turns": "max_turn_requests", "cancelled": "cancelled",
                                       "truncated": "max_tokens", "filtered": "refusal"}  # the rest: end_turn
PREVIEW_LIMIT = 2_000_000  # characters of a file an edit preview reads
OUTPUT_TAIL = 8_000  # characters of a running command's output shown live


def log(text: str) -> None:
    """stderr is the log an editor keeps for an agent (stdout is the protocol)."""
    sys.stderr.write(f"agentica acp: {safe_text(text)}\n")
    sys.stderr.flush()


class AcpSession:
    """The editor's side of one AppSession; it is the session's FrontEnd (app/session.py)."""

    can_ask = True  # session/request_permission

    def __init__(self, conn: Any, work_dir: Path, *, client_caps: Any):
        self.conn = conn
        self.id = ""  # the AppSession's (the saved session's) id, once opened
        self.work_dir = work_dir
        self.app: Any = None  # the AppSession (attach)
        self.turn: asyncio.Task[StopReason] | None = None
        self.edits: dict[str, tuple[str, str | None, str]] = {}  # call id -> (path, old text, new text)
        self.outputs: dict[str, str] = {}  # call id -> live output so far (its tail)
        self.terminals: dict[str, str] = {}  # call id -> the editor terminal it ran in
        self.started: dict[str, tuple[str, dict[str, Any]]] = {}  # call id -> (name, args)
        self.client_caps = client_caps
        self.fs_read = bool(client_caps and client_caps.fs and client_caps.fs.read_text_file)
        self.fs_write = bool(client_caps and client_caps.fs and client_caps.fs.write_text_file)
        self.journal: Any = None  # the edits made through the editor, for /undo (acp/checkpoints.py)
        self.file_access: Any = None
        self.notices_told = False  # the untrusted project's notices, shown with the first prompt

    @property
    def uses_editor_files(self) -> bool:
        """Both fs methods or neither: an edit reads the buffer it changes."""
        return self.fs_read and self.fs_write

    async def attach(self, app: Any) -> None:
        """Take over `app` (opened with this as its front end): its agent is built, SessionStart
        hooks begin (the first prompt waits for them), the editor's files and terminals plug in."""
        self.app = app
        self.id = app.id
        await app.start()
        self.plug_client_io(bool(self.client_caps and self.client_caps.terminal))

    async def session_started(self) -> None:
        """Wait for SessionStart; what its hooks said for the user is shown as a thought, once,
        after what the session ignores of an untrusted project (app/startup.untrusted_notices)."""
        if not self.notices_told:
            self.notices_told = True
            for notice in self.app.notices:
                await self.send(update_agent_thought_text(f"\n[notice] {safe_text(notice)}\n"))
        for message in await self.app.session_start_messages():
            await self.send(update_agent_thought_text(f"\n[hook] {safe_text(message)}\n"))

    # -- the session's FrontEnd ----------------------------------------------------------------

    def report(self, text: str) -> None:
        log(text)

    def mcp_failed(self, message: str) -> None:
        log(message)  # the editor's log; the server's tools are left out of the session

    def refused(self, name: str, mode: str, why: Reason) -> None:
        return None  # the model reads why, and the editor shows the failed call

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        from agentica_cli.app.mcp_client import decline_input

        return await decline_input(request, "ACP")  # the protocol has no form to show

    async def sample(self, request: SamplingRequest) -> str | None:
        from agentica_cli.app.mcp_client import decline_sampling

        return await decline_sampling(request, "ACP")

    # -- the editor's files and terminals -----------------------------------------------

    def plug_client_io(self, terminal: bool) -> None:
        from agentica_cli.acp.client_io import ClientFileAccess, ClientTerminalRunner
        from agentica_cli.tools.local.execute import BuiltinExecuteTool
        from builtin_tools.files import BuiltinFileTool

        loop = asyncio.get_running_loop()
        if self.uses_editor_files:  # else the session keeps file backups (checkpoints "file-backups")
            from agentica_cli.acp.checkpoints import EditJournal

            self.journal = EditJournal()
        self.file_access = None
        for tool in self.app.agent.tools:
            # Both fs methods or neither: an edit reads the buffer it changes. (Sub-agents'
            # file tools get the same access: builtin_tools/task.py.)
            if isinstance(tool, BuiltinFileTool) and self.journal is not None:
                self.file_access = ClientFileAccess(self.conn, self.id, loop, self.journal, tool.sandbox)
                tool.file_access = self.file_access
            elif isinstance(tool, BuiltinExecuteTool) and terminal:
                tool.runner = ClientTerminalRunner(self.conn, self.id, self.show_terminal)
        if self.file_access is not None:
            # Until a tool that can start a process runs, nothing can swap the project's folders
            # under the editor's open-by-name; from then on the I/O is ours (client_io.py).
            from agentica_cli.acp.client_io import CommandWatch
            from builtin_tools.todos import BuiltinTodoTool

            safe = {name for tool in self.app.agent.tools if isinstance(tool, (BuiltinFileTool, BuiltinTodoTool))
                    for name in tool.functions}
            safe.add("task")  # a sub-agent gets a copy of these hooks: its own tool calls are watched
            self.app.agent.hooks.append(CommandWatch(self.file_access, safe))

    async def show_terminal(self, call_id: str, terminal_id: str) -> None:
        self.terminals[call_id] = terminal_id
        await self.send(update_tool_call(call_id, status="in_progress", content=[tool_terminal_ref(terminal_id)]))

    async def read_current(self, path: str) -> str | None:
        """A file's text as the editor has it (fs offered) or on disk; None when it does not exist."""
        if self.file_access is not None:  # the editor, or the disk beneath the roots (client_io.py)
            try:
                return await asyncio.to_thread(self.file_access.read_text, Path(path))
            except FileNotFoundError:
                return None
        try:
            if os.path.getsize(path) > PREVIEW_LIMIT:
                raise ValueError("too large to preview")
            with open(path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    # -- sending ----------------------------------------------------------------------------

    async def send(self, update: Any) -> None:
        await self.conn.session_update(session_id=self.id, update=update)

    async def say(self, text: str) -> None:
        await self.send(update_agent_message_text(text))

    # -- a turn ---------------------------------------------------------------------------

    async def prompt(self, content: str | list[dict[str, Any]]) -> StopReason:
        """Run one prompt to its end; the ACP stop reason."""
        if self.turn is not None and not self.turn.done():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text = content_text(content).strip()
        if text.startswith("/") and not text.startswith("//"):
            from agentica_cli.acp.commands import run_command

            handled = await run_command(self, text)
            if handled:
                return "end_turn"
        await self.session_started()
        shown: list[str] = []  # a custom command's !`commands`, shown as a thought before its turn
        found = self.app.find_command(text)
        if found is not None:  # a custom command: its prompt (images kept), and its model and tools for this turn
            events = self.app.run_command(found[0].name, found[1], content=content, show=shown.append)
        else:
            events = self.app.turn(content)
        if self.journal is not None:
            self.journal.begin(text)
        try:
            return await self._run_turn(events, shown)
        finally:
            if self.journal is not None:
                self.journal.end()

    async def _run_turn(self, events: AsyncGenerator[Any, None], shown: list[str]) -> StopReason:
        self.turn = asyncio.create_task(self._run(events, shown))
        try:
            await asyncio.wait({self.turn})
        except asyncio.CancelledError:  # the request itself went away (the connection closed)
            self.turn.cancel()
            raise
        if self.turn.cancelled():
            return "cancelled"
        return self.turn.result()

    def cancel(self) -> None:
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()

    async def _run(self, events: AsyncGenerator[Any, None], shown: list[str]) -> StopReason:
        stop: StopReason = "end_turn"
        async with aclosing(events) as stream:
            async for event in stream:  # (the session counts every usage event, sub-agents' too)
                if shown:
                    await self.send(update_agent_thought_text("\n".join(safe_text(line) for line in shown) + "\n"))
                    shown.clear()
                if event.type == "tool_output":  # a tool's own events carry its call as their source
                    if event.call_id in self.started:
                        await self.tool_output(event.call_id, event.text)
                    continue
                if event.source:
                    continue  # a sub-agent's steps: its task call shows the outcome
                if event.type == "turn_finished":
                    stop = STOP_REASONS.get(event.stop_reason, "end_turn")
                else:
                    await self.handle(event)
        return stop

    async def handle(self, event: Any) -> None:
        kind = event.type
        if kind == "text_delta":
            await self.send(update_agent_message_text(event.text))
        elif kind == "reasoning_delta":
            await self.send(update_agent_thought_text(event.text))
        elif kind == "tool_call_started":
            await self.tool_started(event.call_id, event.name, event.args if isinstance(event.args, dict) else {})
        elif kind == "tool_call_finished":
            await self.tool_finished(event)
        elif kind == "notice" and event.kind != "retry":
            await self.send(update_agent_thought_text(f"\n[{event.kind}] {event.message}\n"))
        elif kind == "error":
            await self.say(f"\n\nError: {event.message}")

    async def tool_started(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.started[call_id] = (name, args)
        function = self.app.agent.functions.get(name)
        # Pending while the policy will ask about it; a call that runs at once is in progress.
        asks = self.app.policy.evaluate(SimpleNamespace(name=name, args=args, function=function)).kind == "ask"
        content = await self.edit_content(call_id, name, args)
        await self.send(start_tool_call(
            call_id, updates.tool_title(name, args), kind=updates.tool_kind(name),
            status="pending" if asks else "in_progress", content=content,
            locations=updates.tool_locations(name, args, self.work_dir), raw_input=updates.raw_arguments(args),
        ))

    async def edit_content(self, call_id: str, name: str, args: dict[str, Any]) -> list[Any] | None:
        """The diff an edit call would make, for the editor to show inline (and in the question)."""
        if call_id in self.edits:
            path, old, new = self.edits[call_id]
            return [tool_diff_content(path, new, old)]
        edited = edit_path(name, args)
        if edited is None:
            return None
        from agentica_cli.app.edit_preview import edited_text

        full = updates.absolute(edited, self.work_dir)
        try:
            before = await self.read_current(full)
        except (OSError, ValueError, RequestError):
            return None
        after = edited_text(args, before or "")
        if after is None:
            return None
        self.edits[call_id] = (full, before, after)
        return [tool_diff_content(full, after, before)]

    async def tool_output(self, call_id: str, text: str) -> None:
        if call_id in self.terminals:
            return
        shown = (self.outputs.get(call_id, "") + text)[-OUTPUT_TAIL:]
        self.outputs[call_id] = shown
        await self.send(update_tool_call(call_id, status="in_progress",
                                         content=[tool_content(_text(updates.fenced(shown)))]))

    async def tool_finished(self, event: Any) -> None:
        call_id, name = event.call_id, event.name
        ok = event.status == "ok" and not event.error
        _, args = self.started.pop(call_id, (name, {}))
        self.outputs.pop(call_id, None)
        content: list[Any] = []
        if call_id in self.edits:
            path, old, new = self.edits.pop(call_id)
            if ok:
                content.append(tool_diff_content(path, new, old))
        terminal = self.terminals.pop(call_id, None)
        if terminal is not None:
            content.append(tool_terminal_ref(terminal))
        if not content or not ok:
            content.append(tool_content(_text(updates.fenced(updates.result_text(event.result or event.error or "")))))
        await self.send(update_tool_call(call_id, status="completed" if ok else "failed", content=content))
        if ok and name == "write_todos":
            entries = updates.plan_entries(args)
            if entries is not None:
                await self.send(update_plan(entries))

    # -- permissions ------------------------------------------------------------------------

    async def ask_permission(self, call: Any, question: Question) -> Answer:
        """The policy's question, asked through session/request_permission."""
        call_id = getattr(call, "call_id", "")
        name, args = question.name, question.args
        options = [PermissionOption(option_id="once", name="Allow once", kind="allow_once")]
        if question.always:
            options.append(PermissionOption(option_id="always", name=f"Always allow {question.always}",
                                            kind="allow_always"))
        options.append(PermissionOption(option_id="no", name="Reject", kind="reject_once"))
        content = await self.edit_content(call_id, name, args) or []
        if question.note:
            content = [tool_content(_text(question.note)), *content]
        request = ToolCallUpdate(tool_call_id=call_id, title=updates.tool_title(name, args),
                                 kind=updates.tool_kind(name), status="pending", content=content or None,
                                 locations=updates.tool_locations(name, args, self.work_dir),
                                 raw_input=updates.raw_arguments(args))
        response = await self.conn.request_permission(session_id=self.id, tool_call=request, options=options)
        outcome = response.outcome
        if outcome.outcome != "selected":
            return Answer("no", "The user cancelled.")
        if outcome.option_id == "no":
            return Answer("no")
        if call_id in self.started:  # not a custom command's !`command`: no tool call shows that one
            await self.send(update_tool_call(call_id, status="in_progress"))
        return Answer("always" if outcome.option_id == "always" else "once")  # the policy applies it

    async def granted(self, granted: str, mode_changed: bool) -> None:
        """The policy remembered an "always": an edit's one switched the mode, which the editor shows."""
        if mode_changed:
            await self.mode_changed()

    async def set_mode(self, mode: str) -> None:
        self.app.set_mode(mode)

    async def mode_changed(self) -> None:
        from acp.helpers import update_current_mode

        await self.send(update_current_mode(self.app.policy.mode))

    def switch_model(self, name: str) -> str | None:
        """Use model `name` from the next request on; a message when it cannot be built."""
        switched = self.app.switch_model(name)
        return None if switched.ok else switched.problem

    def config_options(self) -> list[Any]:
        """The model picker: the current model and [model] choices from the config."""
        from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

        from agentica_cli.app.runtime import model_label

        current = model_label(self.app.model)
        choices = list(dict.fromkeys([current, *self.app.settings.model.choices]))
        return [SessionConfigOptionSelect(
            id="model", name="Model", category="model", type="select", current_value=current,
            options=[SessionConfigSelectOption(value=c, name=c) for c in choices],
        )]

    async def close(self) -> None:
        """The session's teardown (once: app/session.AppSession.close), then what the log should know."""
        self.cancel()
        if self.app is None:
            return
        await self.app.close()
        if self.app.save_error:
            log(self.app.save_error)


def _text(text: str) -> Any:
    from acp import text_block

    return text_block(text)

