"""The SDK's side of the control channel, for the run (run.py's ClaudeRun): the dispatcher that
reads stdin (control messages answered at once, user messages queued as turns, stdin's end), and
the SDK's requests: initialize (hooks, agents), interrupt, set_permission_mode, set_model,
mcp_status, control_cancel_request; the others are answered with an error naming them.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.headless.claude_protocol.channel import ControlChannel, ControlLine
from agentica_cli.headless.claude_protocol.flags import ClaudeOptions
from agentica_cli.headless.claude_protocol.messages import MessageWriter
from agentica_cli.headless.claude_protocol.permissions import SdkPermissions, set_claude_mode
from agentica_cli.headless.claude_protocol.sdk_hooks import SdkHooks
from agentica_cli.headless.claude_protocol.tool_names import claude

UNSUPPORTED_REQUESTS = {
    "rewind_files": "agentica rewinds files with `agentica --undo` (checkpoints), not over the control protocol",
    "get_context_usage": "agentica does not report context usage by category",
    "mcp_reconnect": "agentica reconnects an MCP server at its next call",
    "mcp_toggle": "agentica cannot switch an MCP server on or off mid-session",
    "stop_task": "agentica has no background tasks to stop",
}


class SdkControlRequests:
    """Mixed into ClaudeRun, which sets these."""

    channel: ControlChannel
    options: ClaudeOptions
    writer: MessageWriter
    permissions: SdkPermissions
    sdk_hooks: SdkHooks
    sdk_servers: list[Any]
    handlers: dict[str, asyncio.Task[None]]
    turns: asyncio.Queue[Any]
    turn_task: asyncio.Task[None] | None
    interrupt_requested: bool
    claude_mode: str
    configured_model: str | None
    app: Any  # the AppSession (app/session.py): its agent, policy, mode prompt, extensions, model, settings

    def apply_agents(self, agent: Any) -> None:
        raise NotImplementedError  # ClaudeRun's

    async def dispatch(self, stdin: Any) -> None:
        try:
            while (item := await stdin.next()) is not None:
                if isinstance(item, ControlLine):
                    try:
                        await self.on_control(item)
                    except Exception as err:  # a malformed control line must not stop the reading
                        sys.stderr.write(f"agentica: stdin line {item.line}: {safe_text(str(err))}\n")
                elif hasattr(item, "problem"):  # an InputError: said on stderr, stdout keeps Claude's schema
                    if "keep_alive" not in item.problem:  # the SDK's heartbeat
                        sys.stderr.write(f"agentica: {safe_text(item.message)}\n")
                else:
                    await self.turns.put(item)
        finally:
            self.channel.close("the SDK closed agentica's stdin")
            self.turns.put_nowait(None)

    async def on_control(self, item: ControlLine) -> None:
        data = item.data
        if item.kind == "control_response":
            self.channel.answer(data)
            return
        request_id = str(data.get("request_id") or "")
        if item.kind == "control_cancel_request":
            handler = self.handlers.pop(request_id, None)
            if handler is not None:
                handler.cancel()
            return
        given = data.get("request")
        request: dict[str, Any] = given if isinstance(given, dict) else {}
        subtype = str(request.get("subtype") or "")
        if subtype == "initialize":  # before the next line: a user message after it runs with its hooks
            await self.answer(request_id, subtype, request)
            return
        task = asyncio.create_task(self.answer(request_id, subtype, request))
        self.handlers[request_id] = task
        task.add_done_callback(lambda _: self.handlers.pop(request_id, None))

    async def answer(self, request_id: str, subtype: str, request: dict[str, Any]) -> None:
        try:
            response = await self.handle_request(subtype, request)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self.channel.respond(request_id, error=str(err) or type(err).__name__)
            return
        self.channel.respond(request_id, response)

    async def handle_request(self, subtype: str, request: dict[str, Any]) -> dict[str, Any]:
        if subtype == "initialize":
            return self.initialize(request)
        if subtype == "interrupt":
            self.interrupt_turn()
            return {}
        if subtype == "set_permission_mode":
            self.set_mode(str(request.get("mode")))
            return {}
        if subtype == "set_model":
            self.switch_model(request.get("model"))
            return {}
        if subtype == "mcp_status":
            return {"mcpServers": self.mcp_entries()}
        if subtype in UNSUPPORTED_REQUESTS:
            raise ValueError(f"{subtype} is not supported: {UNSUPPORTED_REQUESTS[subtype]}")
        raise ValueError(f"unknown control request {subtype!r}")

    def interrupt_turn(self) -> None:
        if self.turn_task is not None and not self.turn_task.done():
            self.interrupt_requested = True
            self.turn_task.cancel()

    def set_mode(self, mode: str) -> None:
        """Claude's permission mode, now (or when the agent is built)."""
        if self.app.agent is not None:  # else applied when the agent is built (build_claude_agent)
            set_claude_mode(self.app.policy, self.app.mode_prompt, self.permissions, mode)
        else:
            from agentica_cli.headless.claude_protocol.flags import PERMISSION_MODES

            if mode not in PERMISSION_MODES:
                raise ValueError(f"permission mode {mode!r} is not supported (agentica has: "
                                 f"{', '.join(PERMISSION_MODES)})")
        self.claude_mode = mode

    def initialize(self, request: dict[str, Any]) -> dict[str, Any]:
        self.writer.forward_subagent_text = bool(request.get("forwardSubagentText"))
        if isinstance(request.get("skills"), list) and request["skills"]:
            raise ValueError("skills is not supported over the SDK; agentica loads skills from .claude/skills "
                             "and .agentica/skills")
        self.sdk_hooks.register(request.get("hooks"))
        if isinstance(request.get("agents"), dict):
            self.options.agents.update(request["agents"])
            if self.app.agent is not None:
                self.apply_agents(self.app.agent)
        from agentica_cli.app.runtime import model_label

        commands = [{"name": name, "description": getattr(command, "description", "") or "", "argumentHint": ""}
                    for name, command in (getattr(self.app.extensions, "commands", {}) or {}).items()]
        label = model_label(self.app.model)
        return {"commands": commands, "agents": [{"name": n, "description": str((a or {}).get("description") or "")}
                                                 for n, a in self.options.agents.items()],
                "output_style": "default", "available_output_styles": ["default"],
                "models": [{"value": label, "displayName": label, "description": "the configured model"}],
                "account": {}, "pid": os.getpid(), "hook_on_failure_supported": True, "hooks_applied": True}

    def switch_model(self, name: Any) -> None:
        """set_model: None or "default" is the configured model; a Claude alias maps as --model does."""
        from agentica_cli.app.extension_setup import model_names
        from agentica_cli.app.runtime import model_label
        from agentica_cli.extensions.model_names import is_claude_model

        target = str(name).strip() if isinstance(name, str) and name.strip() not in ("", "default") else None
        if target is not None and is_claude_model(target):
            target = model_names(self.app.settings).resolve(target)
        switched = self.app.switch_model(target or self.configured_model)  # the agent's model too
        if not switched.ok:
            raise ValueError(switched.problem)
        self.writer.model = model_label(switched.model)

    def mcp_entries(self) -> list[dict[str, Any]]:
        states = {"ready": "connected", "starting": "pending", "idle": "pending", "failed": "failed",
                  "closed": "failed"}
        entries = []
        if self.app.mcp is not None:
            for status in self.app.mcp.statuses():
                entry: dict[str, Any] = {"name": status.name, "status": states.get(status.state, status.state),
                                         "tools": [{"name": claude(t)} for t in status.tools]}
                if status.error:
                    entry["error"] = status.error
                entries.append(entry)
        return entries + [server.status_entry() for server in self.sdk_servers]
