"""The MCP server: two tools, `agentica` and `agentica_reply`, on the MCP SDK's MCPServer.

Approvals reach the client as elicitation requests, in the form the connection's protocol has:
on a handshake connection (protocol <= 2025-11-25) an `elicitation/create` request in the middle
of the tool call; on a 2026-07-28 one, an `InputRequiredResult` whose retry carries the answer
(the turn waits between the two requests, found again by its `request_state`).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    TextContent,
)
from mcp_types.version import is_version_at_least
from pydantic import Field

from agentica_cli.mcp_serve.errors import ServeError, log
from agentica_cli.mcp_serve.hub import ServeOptions, SessionHub
from agentica_cli.mcp_serve.questions import ApprovalForm, Question, approval_schema, client_can_elicit
from agentica_cli.mcp_serve.turn import Turn

INPUT_REQUIRED_VERSION = "2026-07-28"  # from this protocol on, a tool call elicits through InputRequiredResult

INSTRUCTIONS = """agentica is a coding agent working in a folder of this machine. Call `agentica` with a task
(and the folder as `cwd`): it reads, edits and runs code there and returns its answer, the files it changed
and a session id; `agentica_reply` continues that session. Changes it must ask about come to you as
elicitation requests: accept to allow, decline to refuse."""

Mode = Literal["default", "accept-edits", "plan", "auto"]


def _uses_input_required(ctx: Context[Any, Any]) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def _result(turn: Turn) -> CallToolResult:
    outcome, session_id = turn.outcome, turn.session_id
    lines = [outcome.answer.strip() or "(no answer)", "", f"session_id: {session_id}",
             f"files changed: {', '.join(outcome.files_changed) if outcome.files_changed else 'none'}"]
    if outcome.stop_reason not in ("completed", "stopped_by_tool"):
        lines.append(f"stopped: {outcome.stop_reason}" + (f" ({outcome.error})" if outcome.error else ""))
    refused_note = ""
    if outcome.refused:
        refused_note = (f"refused without asking: {', '.join(dict.fromkeys(outcome.refused))}: these calls needed "
                        "approval and this MCP client cannot answer elicitation requests (it did not declare the "
                        "elicitation capability)")
        lines.append(refused_note)
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(lines))],
        structured_content={"session_id": session_id, "answer": outcome.answer, "stop_reason": outcome.stop_reason,
                            "files_changed": outcome.files_changed, "refused": list(outcome.refused),
                            "error": outcome.error},
        is_error=outcome.stop_reason == "error",
    )


class AgenticaMcpServer:
    def __init__(self, options: ServeOptions) -> None:
        from agentica_cli import __version__

        self.hub = SessionHub(options)
        self.mcp = MCPServer("agentica", title="agentica", version=__version__, instructions=INSTRUCTIONS,
                             log_level="WARNING")
        self.mcp.add_tool(self.agentica, name="agentica", title="Run agentica on a task",
                          description="Run an agentica coding session on a task in a folder; returns its answer, "
                                      "the files it changed and the session id (for agentica_reply).")
        self.mcp.add_tool(self.agentica_reply, name="agentica_reply", title="Continue an agentica session",
                          description="Send a follow-up prompt to an agentica session; returns its answer and the "
                                      "files it changed.")

    # -- the tools ----------------------------------------------------------------------

    async def agentica(
        self,
        prompt: Annotated[str, Field(description="The task, as you would type it to agentica")],
        ctx: Context[Any, Any],
        cwd: Annotated[str | None, Field(description="The folder to work in (default: the server's)")] = None,
        permission_mode: Annotated[Mode | None, Field(
            description="default: asks before changes; accept-edits: edits run, other changes ask; plan: read "
                        "only; auto: nothing asks (only when the server allows it)")] = None,
        model: Annotated[str | None, Field(description="A model id (default: the configured one)")] = None,
    ) -> CallToolResult | InputRequiredResult:
        resumed = await self._resumed(ctx)
        if resumed is not None:
            return resumed
        try:
            session = await self.hub.create(cwd, permission_mode, model)
            turn = session.start(prompt, can_ask=client_can_elicit(ctx.client_capabilities))
        except ServeError as err:
            raise ToolError(str(err)) from None
        return await self._drive(turn, ctx)

    async def agentica_reply(
        self,
        session_id: Annotated[str, Field(description="The session_id an `agentica` result gave")],
        prompt: Annotated[str, Field(description="The follow-up prompt")],
        ctx: Context[Any, Any],
    ) -> CallToolResult | InputRequiredResult:
        resumed = await self._resumed(ctx)
        if resumed is not None:
            return resumed
        try:
            session = await self.hub.get(session_id)
            turn = session.start(prompt, can_ask=client_can_elicit(ctx.client_capabilities))
        except ServeError as err:
            raise ToolError(str(err)) from None
        return await self._drive(turn, ctx)

    # -- running a turn -----------------------------------------------------------------

    async def _drive(self, turn: Turn, ctx: Context[Any, Any]) -> CallToolResult | InputRequiredResult:
        """Wait for the turn, asking the client each approval it needs, until it ends; its steps
        go to the client as progress notifications meanwhile (when it asked for them)."""
        forwarder = asyncio.create_task(self._forward_progress(turn, ctx))
        try:
            while (question := await turn.next_question()) is not None:
                if _uses_input_required(ctx):
                    return self._ask_in_result(turn, question)
                await self._elicit(question, ctx)
        except BaseException:  # the request went away (cancelled, the client disconnected): so does its turn
            turn.cancel()
            raise
        finally:
            forwarder.cancel()
        if turn.task is not None:
            await turn.task
        return _result(turn)

    @staticmethod
    async def _forward_progress(turn: Turn, ctx: Context[Any, Any]) -> None:
        """Each step as a notifications/progress (a no-op without the client's progressToken):
        a client whose request times out can keep waiting on a long turn."""
        while True:
            message = await turn.progress.get()
            turn.steps += 1
            try:
                await ctx.report_progress(turn.steps, None, message)
            except Exception:  # a closed stream: the call's own result still goes back (or not)
                return

    async def _elicit(self, question: Question, ctx: Context[Any, Any]) -> None:
        """A handshake connection: an elicitation/create request, answered before the call goes on."""
        try:
            reply = await ctx.elicit(question.message, ApprovalForm)
        except Exception as exc:  # an error reply, or no channel back to the client: refused
            log(f"elicitation failed ({type(exc).__name__}: {exc}): {question.name} refused")
            question.answer(None)
            return
        data = getattr(reply, "data", None)
        question.answer(reply.action, data.model_dump() if data is not None else None)

    def _ask_in_result(self, turn: Turn, question: Question) -> InputRequiredResult:
        """A 2026-07-28 connection: the question goes back as the call's result; the retry answers it."""
        turn.asked = question
        self.hub.turns[turn.token] = turn
        request = ElicitRequest(params=ElicitRequestFormParams(message=question.message,
                                                               requested_schema=approval_schema()))
        return InputRequiredResult(input_requests={question.key: request}, request_state=turn.token)

    async def _resumed(self, ctx: Context[Any, Any]) -> CallToolResult | InputRequiredResult | None:
        """A retried call carrying the answer to a question the turn asked: answer it, go on."""
        token = ctx.request_state
        if not token:
            return None
        turn = self.hub.turns.pop(token, None)
        if turn is None or turn.asked is None:
            raise ToolError("this approval is no longer pending (the session's turn ended or the server restarted); "
                            "call the tool again without request_state")
        question, turn.asked = turn.asked, None
        response = (ctx.input_responses or {}).get(question.key)
        if response is None:  # retried without the answer: ask again
            return self._ask_in_result(turn, question)
        content = getattr(response, "content", None)
        question.answer(getattr(response, "action", None), content if isinstance(content, dict) else None)
        return await self._drive(turn, ctx)
