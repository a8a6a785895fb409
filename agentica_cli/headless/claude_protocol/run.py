"""A Claude Agent SDK session: the SDK's messages on stdin, Claude Code's on stdout.

Built on the -p stream-json run (headless/printers.py PrintRun) and so on its AppSession
(app/session.py): the same settings, session, policy, MCP servers, checkpoints and result
accounting; the policy's questions go to the SDK's `can_use_tool` (ClaudeFrontEnd). What differs
is the wire: stdin is read as
the control channel (channel.py) by a dispatcher task (control_requests.py), so control
requests (initialize, interrupt, set_permission_mode, set_model, mcp_status) are answered while
a turn runs; user messages queue up and run as turns, in order; each turn's events are written
by messages.py.
The agent is built when the first user message arrives: by then the SDK's `initialize` has
registered its hooks and agents, and the SDK's MCP servers have answered their handshake.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from agentica_cli.app import exitcodes
from agentica_cli.app.permissions.approvals import Answer, Question
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.session import HeadlessFrontEnd
from agentica_cli.app.settings.config import Settings
from agentica_cli.headless.claude_protocol.channel import ControlChannel, decode
from agentica_cli.headless.claude_protocol.control_requests import SdkControlRequests
from agentica_cli.headless.claude_protocol.flags import ClaudeOptions
from agentica_cli.headless.claude_protocol.messages import AssistantReply, MessageWriter
from agentica_cli.headless.claude_protocol.permissions import SdkPermissions, set_claude_mode
from agentica_cli.headless.claude_protocol.sdk_hooks import SdkHooks
from agentica_cli.headless.claude_protocol.sdk_mcp import SdkMcpServer
from agentica_cli.headless.claude_protocol.tool_names import BUILTIN_CLAUDE_TOOLS, claude, ours
from agentica_cli.headless.printers import OutputClosed, PrintRun, RunFailure, run_print

SCHEMA_NOTE = ("Answer with one JSON value and nothing else (no prose, no code fence) that matches this "
               "JSON Schema:\n{schema}")


def run_claude(args: argparse.Namespace, settings: Settings, work_dir: Path) -> int:
    """The settings the Claude flags change, then the run (printers.run_print builds the model)."""
    from agentica_cli.app.extension_setup import model_names

    opts: ClaudeOptions = args.claude
    if opts.model_alias and not args.model:
        mapped = model_names(settings).resolve(opts.model_alias)  # None: the configured model
        if mapped:
            settings.model = dataclasses.replace(settings.model, name=mapped)
    # --tools keeps only those builtins; a whole builtin in --disallowedTools (no pattern) is taken
    # away too, as Claude Code takes it out of the model's context (its deny rule stays as well)
    left_out = [ours(name) for name in BUILTIN_CLAUDE_TOOLS
                if (opts.base_tools is not None and ours(name) not in opts.base_tools) or name in args.disallowed_tools]
    if left_out:
        exclude = tuple(dict.fromkeys([*settings.tools.exclude, *left_out]))
        settings.tools = dataclasses.replace(settings.tools, exclude=exclude)
    if opts.json_schema is not None:
        note = SCHEMA_NOTE.format(schema=json.dumps(opts.json_schema, ensure_ascii=False))
        args.append_system_prompt = f"{args.append_system_prompt}\n\n{note}" if args.append_system_prompt else note
    return run_print(args, settings, work_dir, "", read_stdin=False, runner_class=ClaudeRun)


class ClaudeFrontEnd(HeadlessFrontEnd):
    """The session's questions go to the SDK program: `can_use_tool` (permissions.py); MCP forms
    and sampling are declined as in -p."""

    can_ask = True

    def __init__(self) -> None:
        super().__init__("the SDK session")
        self.permissions: SdkPermissions | None = None  # set by ClaudeRun

    async def ask_permission(self, call: Any, question: Question) -> Answer:
        if self.permissions is None:
            return Answer("no", "this session cannot ask yet")
        return await self.permissions(call, question)


class ClaudeRun(SdkControlRequests, PrintRun):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.options: ClaudeOptions = self.args.claude
        self.format = "claude"
        self.startup_error = ""
        self.opened_session: Any = None  # a session this run opened itself (--session-id, --fork-session)
        self._own_session()
        self.configured_model = self.app.settings.model_name
        self.channel = ControlChannel(self.emit_json)
        self.permissions = SdkPermissions(self.channel, enabled=self.options.permission_prompt,
                                          dont_ask=self.options.dont_ask)
        self.app.front_end.permissions = self.permissions  # the policy's questions go to can_use_tool
        self.sdk_hooks = SdkHooks(self.channel)
        self.sdk_servers = [SdkMcpServer(name, self.channel) for name in self.options.sdk_mcp_servers]
        import uuid

        wire_id = self.session_id or self.options.session_id or str(uuid.uuid4())
        self.writer = MessageWriter(self.emit_json, wire_id, self.model_label,
                                    partial=self.options.include_partial_messages)
        self.claude_mode = self.options.claude_mode
        self.turn_task: asyncio.Task[None] | None = None
        self.interrupt_requested = False
        self.turns_run = 0
        self.last_failed = False
        self.api_seconds = 0.0
        self.request_started: float | None = None
        self.handlers: dict[str, asyncio.Task[None]] = {}

    @staticmethod
    def make_front_end(args: argparse.Namespace) -> Any:
        return ClaudeFrontEnd()

    # -- the session ------------------------------------------------------------------------

    def _own_session(self) -> None:
        """--session-id names a new session; --fork-session continues a copy of the resumed one."""
        old = self.app.stored
        if old is None:
            return
        store = old.store
        if self.options.fork_session:
            self.opened_session = store.fork(old, self.app.work_dir, self.model_label)
            self.app.use_stored(self.opened_session)
        elif self.options.session_id:
            try:
                named = store.named(self.options.session_id, self.app.work_dir, self.model_label)
            except FileExistsError:
                self.startup_error = (f"--session-id {self.options.session_id}: that session exists already "
                                      "(resume it with --resume)")
                return
            old.close()
            self.opened_session = named
            self.app.use_stored(named)

    # -- running ---------------------------------------------------------------------------

    def run(self, prompt: str = "") -> int:
        self.options.started = True
        if self.startup_error:
            return self._refuse(self.startup_error)
        try:
            if not self.run_driver(self.drive_claude()):
                return self.output_closed()
        finally:
            if self.opened_session is not None:
                self.opened_session.close()
        if self.interrupted:
            return exitcodes.INTERRUPTED
        if isinstance(self.error, RunFailure):  # a failure outside the loop's own errors (said on stderr)
            if self.turn_task is not None:  # the turn it ended still gets its result, for the SDK
                try:
                    self.write_result()
                except OutputClosed:
                    return self.output_closed()
            return exitcodes.MODEL_ERROR
        return exitcodes.MODEL_ERROR if self.last_failed else exitcodes.OK

    def _refuse(self, message: str) -> int:
        sys.stderr.write(f"agentica: {safe_text(message)}\n")
        try:
            self.writer.result(stop_reason="error", text="", error=message, duration_ms=0, duration_api_ms=0,
                               num_turns=0, usage={})
        except OutputClosed:
            pass
        return exitcodes.USAGE_ERROR

    async def drive_claude(self) -> None:
        from agentica_cli.headless.stream_input import StdinMessages

        self.turns: asyncio.Queue[Any] = asyncio.Queue()

        def read_error(text: str) -> None:
            sys.stderr.write(f"agentica: {text}\n")

        stdin = StdinMessages(sys.stdin.fileno(), decode=decode, on_read_error=read_error)
        stdin.start()
        # What the first request imports (openai, ~0.3 s), in a thread while the SDK sends initialize
        # and its first message and the agent is built: a ClaudeSDKClient may wait long before its
        # first query. Awaited before the first turn, so no import runs in two threads then.
        warming = asyncio.get_running_loop().run_in_executor(None, _warm_imports)
        self.app.find_extensions()  # initialize lists the custom commands: found once
        dispatcher = asyncio.create_task(self.dispatch(stdin))
        tools = asyncio.create_task(self.start_tools())
        try:
            while (message := await self.turns.get()) is not None:
                if self.app.agent is None:
                    await self.build_claude_agent(await tools)
                    await self.app.session_start_messages()  # SessionStart hooks (said on stderr)
                    self.system_init()
                    await warming
                await self.claude_turn(message)
        finally:
            dispatcher.cancel()
            tools.cancel()
            for task in self.handlers.values():
                task.cancel()
            await self.app.close()  # SessionEnd hooks, MCP servers, old checkpoints

    async def start_tools(self) -> list[Any]:
        """The configured MCP servers (the session's) and the SDK's, started together; the SDK's."""
        await asyncio.gather(self.app.start_mcp(), *(server.connect() for server in self.sdk_servers))
        for server in self.sdk_servers:
            if not server.connected:
                sys.stderr.write(f"agentica: {safe_text(server.error)}\n")
        return list(self.sdk_servers)

    async def build_claude_agent(self, extra_tools: list[Any]) -> Any:
        from agentica_cli.agent.hooks import hook_caller

        # Everything below is wired before the next await: SessionStart (begun by start) sees the SDK's hooks.
        agent = await self.app.start(extra_tools)
        self.permissions.policy = self.app.policy  # what it would ask a person goes to can_use_tool (ClaudeFrontEnd)
        self.permissions.on_interrupt = self.interrupt_turn
        self.permissions.on_mode = self.set_mode
        set_claude_mode(self.app.policy, self.app.mode_prompt, self.permissions, self.claude_mode)
        agent.hooks.append(self.sdk_hooks)
        self.apply_agents(agent)
        saving = agent.on_message

        def observe(message: dict[str, Any]) -> None:
            if saving is not None:
                saving(message)
            caller = hook_caller()  # the run the loop appends for: its stream, in order with the deltas
            if message.get("role") == "assistant" and caller is not None and caller.agent is agent:
                caller.emit(AssistantReply(message=dict(message)))

        agent.on_message = observe
        return agent

    def apply_agents(self, agent: Any) -> None:
        """The SDK's agents (initialize, --agents) as the task tool's sub-agents."""
        if not self.options.agents:
            return
        from agentica_cli.app.extension_setup import model_names
        from agentica_cli.extensions.agents import AgentSpec
        from agentica_cli.extensions.tool_names import agent_tool
        from builtin_tools.task import BuiltinTaskTool

        models = model_names(self.app.settings)
        specs = {}
        for name, spec in self.options.agents.items():
            if not isinstance(spec, dict):
                continue
            tools = spec.get("tools")
            specs[name] = AgentSpec(name=str(name), description=str(spec.get("description") or ""),
                                    prompt=str(spec.get("prompt") or ""), scope="sdk",
                                    tools=[agent_tool(t) for t in tools] if isinstance(tools, list) else None,
                                    model=models.resolve(spec.get("model")))
        for tool in agent.tools:
            if isinstance(tool, BuiltinTaskTool):
                tool.set_agents({**tool.agents, **specs})

    def system_init(self) -> None:
        from builtin_tools.task import BuiltinTaskTool

        agent = self.app.agent
        agents = [name for tool in agent.tools if isinstance(tool, BuiltinTaskTool) for name in tool.agents]
        commands = list(getattr(self.app.extensions, "commands", {}) or {})
        self.writer.system_init(cwd=str(self.app.work_dir), tools=[claude(name) for name in agent.functions],
                                mcp_servers=[{"name": e["name"], "status": e["status"]} for e in self.mcp_entries()],
                                permission_mode=self.claude_mode, agents=agents, slash_commands=commands)

    async def claude_turn(self, message: Any) -> None:
        self.reset_turn()
        self.turns_run += 1
        self.interrupt_requested = False
        self.api_seconds = 0.0
        task = asyncio.create_task(self.command_turn(message))
        self.turn_task = task
        try:
            await task
        except asyncio.CancelledError:
            if not (self.interrupt_requested and task.cancelled()):
                task.cancel()
                raise
        self.write_result()
        self.turn_task = None  # (left set when the turn failed: run() still writes its result)

    async def command_turn(self, message: Any) -> None:
        """A turn; a prompt that starts with `/name` runs that custom command (its model and tools
        for this turn), as Claude Code does, unless the SDK sent it verbatim."""
        found = None if getattr(message, "verbatim", False) else self.app.find_command(message.text)
        if found is not None:
            events = self.app.run_command(found[0].name, found[1], images=message.images, show=self.show_line)
        else:
            events = self.app.turn(message.text, message.images)
        await self.stream_events(events)

    async def stream_events(self, events: Any) -> None:
        from contextlib import aclosing

        async with aclosing(events) as stream:
            async for event in stream:
                self.record(event)
                if not event.source and event.type == "model_request_started":
                    self.request_started = time.monotonic()
                elif not event.source and event.type == "usage" and self.request_started is not None:
                    self.api_seconds += time.monotonic() - self.request_started
                    self.request_started = None
                self.writer.handle(event)

    def write_result(self) -> None:
        interrupted = self.interrupt_requested
        if interrupted:
            self.writer.interrupted()
        text = self.final.content if self.final is not None else ""
        reason = "cancelled" if interrupted else (self.final.stop_reason if self.final is not None else "error")
        error = self.error.message if self.error is not None else self.blocked_message() or (
            "interrupted" if interrupted else None)
        structured, structured_error = None, None
        if self.options.json_schema is not None and reason == "completed":
            structured, structured_error = _json_answer(text)
        line = self.writer.result(stop_reason=reason, text=text, error=error,
                                  duration_ms=int((time.monotonic() - self.started) * 1000),
                                  duration_api_ms=int(self.api_seconds * 1000), num_turns=self.requests,
                                  usage=dict(self.usage), structured=structured, structured_error=structured_error)
        self.last_failed = bool(line["is_error"]) and not interrupted


def _warm_imports() -> None:
    try:
        import anyio._core._sockets
        import anyio._core._streams  # noqa: F401  (httpx2's first connection)

        from agentica_cli.models import chat_http

        chat_http.tls_context()  # the model transport, its CA certificates loaded
    except Exception:  # only a head start: the turn imports what it needs anyway
        pass


def _json_answer(text: str) -> tuple[Any, str | None]:
    """The answer as JSON for --json-schema (a code fence around it is tolerated), or why not."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return json.loads(body), None
    except ValueError:
        return None, "the answer is not the JSON value --json-schema asks for"
