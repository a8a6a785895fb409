"""One ACP session: an agent, its permission policy and saved conversation, and the turn that
runs in it. Consumes the agent's event stream and sends each event as a session update.
"""

from __future__ import annotations

import asyncio
import os
import sys
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
from agentica_cli.app.permissions.approvals import Answer, call_args, edit_path, policy_from_settings
from agentica_cli.app.safe_text import safe_text

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
    def __init__(self, conn: Any, session_id: str, work_dir: Path, settings: Any, model: Any, *,
                 client_caps: Any, add_dirs: list[Path], stored: Any, messages: list[dict[str, Any]] | None,
                 mcp: Any = None):
        from agentica_cli.app.runtime import PermissionModePrompt, build_agent

        self.conn = conn
        self.id = session_id
        self.work_dir = work_dir
        self.settings = settings
        self.stored = stored  # the SessionStore session written to (None: --no-session)
        self.mcp = mcp
        self.mcp_waited = False
        from agentica_cli.app.usage import UsageCounter

        self.usage = UsageCounter.for_session(stored)  # /cost: sub-agents and earlier processes included
        self.policy = policy_from_settings(settings, work_dir, allowed_dirs=add_dirs, ask=self.ask,
                                           on_grant=self.granted)
        self.agent = build_agent(
            settings, work_dir, model=model, allowed_dirs=add_dirs, approve=self.policy, messages=messages,
            on_message=stored.append if stored is not None else None,
            on_history_replaced=stored.replace_history if stored is not None else None,
            report=log,
        )
        self.agent.session_id = session_id  # what hooks are told: the ACP id is the saved session's
        self.agent.transcript_path = str(stored.path) if stored is not None else ""
        self.mode_prompt = PermissionModePrompt(self.agent)
        self.starting: asyncio.Task[list[str]] | None = None  # SessionStart hooks (begin)
        self.notices: list[str] = []  # what this untrusted project sets and the session ignores
        self.extensions = self.agent.extensions  # custom commands (after trust), found once with the agent
        self.turn: asyncio.Task[StopReason] | None = None
        self.edits: dict[str, tuple[str, str | None, str]] = {}  # call id -> (path, old text, new text)
        self.outputs: dict[str, str] = {}  # call id -> live output so far (its tail)
        self.terminals: dict[str, str] = {}  # call id -> the editor terminal it ran in
        self.started: dict[str, tuple[str, dict[str, Any]]] = {}  # call id -> (name, args)
        self.fs_read = bool(client_caps and client_caps.fs and client_caps.fs.read_text_file)
        self.fs_write = bool(client_caps and client_caps.fs and client_caps.fs.write_text_file)
        self.journal: Any = None  # the edits made through the editor, for /undo (acp/checkpoints.py)
        self.plug_client_io(bool(client_caps and client_caps.terminal))

    def begin(self) -> None:
        """SessionStart hooks, as the session opens (new: "startup", loaded: "resume"); the
        first prompt waits for them, and gets their context."""
        async def start() -> list[str]:
            messages = (await self.agent.start_session()).messages
            for message in messages:
                log(message)
            return messages

        self.starting = asyncio.create_task(start())

    async def session_started(self) -> None:
        """Wait for SessionStart; what its hooks said for the user is shown as a thought, once,
        after what the session ignores of an untrusted project (app/startup.untrusted_notices)."""
        notices, self.notices = self.notices, []
        for notice in notices:
            await self.send(update_agent_thought_text(f"\n[notice] {safe_text(notice)}\n"))
        if self.starting is None:
            return
        starting, self.starting = self.starting, None
        try:
            messages = await starting
        except Exception as exc:  # a broken hook must not cost the session its prompt
            messages = [f"SessionStart hooks failed: {type(exc).__name__}: {exc}"]
        for message in messages:
            await self.send(update_agent_thought_text(f"\n[hook] {safe_text(message)}\n"))

    # -- the editor's files and terminals -----------------------------------------------

    def plug_client_io(self, terminal: bool) -> None:
        from agentica_cli.acp.client_io import ClientFileAccess, ClientTerminalRunner
        from agentica_cli.tools.local.execute import BuiltinExecuteTool
        from builtin_tools.files import BuiltinFileTool

        loop = asyncio.get_running_loop()
        if self.fs_read and self.fs_write:
            from agentica_cli.acp.checkpoints import EditJournal

            self.journal = EditJournal()
        else:
            self.use_file_backups()
        self.file_access = None
        for tool in self.agent.tools:
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

            safe = {name for tool in self.agent.tools if isinstance(tool, (BuiltinFileTool, BuiltinTodoTool))
                    for name in tool.functions}
            safe.add("task")  # a sub-agent gets a copy of these hooks: its own tool calls are watched
            self.agent.hooks.append(CommandWatch(self.file_access, safe))

    def use_file_backups(self) -> None:
        """Edits land on the disk: /undo uses copies of the files the file tools change (no
        git, so no snapshot of the work tree holds up a turn's first update)."""
        from agentica_cli.app.checkpoint_setup import attach_checkpoints, checkpoint_options

        if checkpoint_options(self.settings)["enabled"]:
            from agentica_cli.checkpoints.backups import FileBackups

            backups = FileBackups(self.work_dir, session_id=self.id)
            backups.notice = ""  # chosen here, not for want of git: nothing to warn about
            attach_checkpoints(self.agent, backups)

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
        restore = None
        from agentica_cli.app.extension_setup import find_command

        found = find_command(text, self.extensions)
        if found is not None:  # a custom command: its prompt, and its model and tools for this turn
            content, restore = await self.command_prompt(content, *found)
        await self.sync_mcp_tools()
        await self.session_started()
        self.mode_prompt.apply(self.policy.mode)
        if self.journal is not None:
            self.journal.begin(text)
        try:
            return await self._run_turn(content)
        finally:
            if self.journal is not None:
                self.journal.end()
            if restore is not None:
                restore()

    async def command_prompt(self, content: str | list[dict[str, Any]], command: Any,
                             arguments: str) -> tuple[str | list[dict[str, Any]], Any]:
        """A custom command's prompt (its !`commands` run first, shown as thoughts) in place of
        the typed text; images sent with it stay. Returns it and what restores the settings."""
        from agentica_cli.app.command_shell import command_turn

        shown: list[str] = []
        turn = await command_turn(command, arguments, self.agent, self.work_dir, shown.append)
        expanded = turn.prompt
        if shown:
            await self.send(update_agent_thought_text("\n".join(safe_text(line) for line in shown) + "\n"))
        if isinstance(content, list):  # text and images: the command's text replaces the typed one
            content = [{"type": "text", "text": expanded},
                       *(part for part in content if isinstance(part, dict) and part.get("type") != "text")]
        else:
            content = expanded
        return content, turn.restore

    async def _run_turn(self, content: str | list[dict[str, Any]]) -> StopReason:
        self.turn = asyncio.create_task(self._run(content))
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

    async def _run(self, content: str | list[dict[str, Any]]) -> StopReason:
        stop: StopReason = "end_turn"
        async with aclosing(self.agent.run_stream(content)) as stream:
            async for event in stream:
                self.usage.add(event)  # before the sub-agent filter: their requests count too
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
        function = self.agent.functions.get(name)
        # Pending while the policy will ask about it; a call that runs at once is in progress.
        asks = self.policy.evaluate(SimpleNamespace(name=name, args=args, function=function)).kind == "ask"
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

    async def ask(self, call: Any, verdict: Any = None) -> Answer:
        """The policy's question, asked through session/request_permission."""
        call_id = getattr(call, "call_id", "")
        name = getattr(call, "name", "")
        args = call_args(call)
        question = self.policy.question(call, verdict) if verdict is not None else None
        options = [PermissionOption(option_id="once", name="Allow once", kind="allow_once")]
        if question is not None and question.always:
            options.append(PermissionOption(option_id="always", name=f"Always allow {question.always}",
                                            kind="allow_always"))
        options.append(PermissionOption(option_id="no", name="Reject", kind="reject_once"))
        content = await self.edit_content(call_id, name, args) or []
        note = question.note if question is not None else ""
        if note:
            content = [tool_content(_text(note)), *content]
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
        self.policy.set_mode(mode)
        self.mode_prompt.apply(mode)

    async def mode_changed(self) -> None:
        from acp.helpers import update_current_mode

        await self.send(update_current_mode(self.policy.mode))

    def switch_model(self, name: str) -> str | None:
        """Use model `name` from the next request on; a message when it cannot be built."""
        from agentica_cli.app.commands import switch_model

        switched = switch_model(self.settings, name)
        if not switched.ok:
            return switched.problem
        self.agent.model = switched.model
        return None

    def config_options(self) -> list[Any]:
        """The model picker: the current model and [model] choices from the config."""
        from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

        from agentica_cli.app.runtime import model_label

        current = model_label(self.agent.model)
        choices = list(dict.fromkeys([current, *self.settings.model.choices]))
        return [SessionConfigOptionSelect(
            id="model", name="Model", category="model", type="select", current_value=current,
            options=[SessionConfigSelectOption(value=c, name=c) for c in choices],
        )]

    # -- MCP ------------------------------------------------------------------------------

    async def sync_mcp_tools(self) -> None:
        """Offer the tools of usable MCP servers (the first prompt waits for them to start)."""
        if self.mcp is None:
            return
        if not self.mcp_waited:
            self.mcp_waited = True
            await self.mcp.wait_ready(timeout=30)
        from agentica_cli.app.mcp_client import offer_usable_tools

        offer_usable_tools(self.agent, self.mcp)

    async def close(self) -> None:
        self.cancel()
        if self.starting is not None:
            self.starting.cancel()
        try:
            await self.agent.end_session("other")  # SessionEnd hooks (once, if the session started)
        except Exception as exc:
            log(f"SessionEnd hooks failed: {type(exc).__name__}: {exc}")
        if self.mcp is not None:
            try:
                await self.mcp.close()
            except Exception:
                pass
        if self.stored is not None:
            self.stored.close()
            if getattr(self.stored, "save_error", ""):
                log(self.stored.save_error)


def _text(text: str) -> Any:
    from acp import text_block

    return text_block(text)

