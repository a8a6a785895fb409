"""BuiltinTaskTool: hand a self-contained job to a sub-agent with a fresh context.

The sub-agent uses the parent's model, approval hook, guardrails and hooks, and fresh
builtin tools for the same folders, limited to the functions the parent itself has (so
never wider), without `task`. Its events go into the parent's stream marked
"task:<call_id>"; only its final answer comes back, capped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext
from builtin_tools.toolset import core_tools

MAX_RESULT_CHARS = 20_000

SUB_AGENT_PROMPT = """You are a sub-agent doing one task for another agent, which sees only your final reply.
Work on the task with the tools until it is done (or clearly cannot be done), then reply with a
complete, concise answer: the facts found, files and line numbers, what you changed. Do not ask
questions; nobody will answer them."""


class SubAgentError(RuntimeError):
    """The sub-agent could not finish (the model failed)."""


def _parent_function_names(parent: Any) -> set[str] | None:
    functions = getattr(parent, "functions", None)
    return set(functions) if isinstance(functions, dict) else None


class BuiltinTaskTool(Tool):
    def __init__(
        self,
        work_dir: str | os.PathLike[str] = ".",
        *,
        allowed_dirs: Iterable[str | os.PathLike[str]] = (),
        read_only: bool = False,
        tool_options: dict[str, Any] | None = None,
        max_result_chars: int = MAX_RESULT_CHARS,
    ):
        super().__init__(name="task")
        # Resolved now (as the file tools resolve theirs), so sub-agents get the same folders.
        self.work_dir = os.path.realpath(os.path.expanduser(os.fspath(work_dir)))
        self.allowed_dirs = tuple(os.path.realpath(os.path.expanduser(os.fspath(d))) for d in allowed_dirs)
        self.read_only = read_only
        self.tool_options = dict(tool_options or {})
        self.max_result_chars = max_result_chars
        # A read-only sub-agent cannot change anything, so several may run side by side.
        flags = {"is_read_only": True, "concurrency_safe": True} if read_only else {}
        self.register(self.task, **flags)

    def get_system_prompt(self) -> str:
        return (
            "task starts a sub-agent with a fresh context for a self-contained job (a wide search, "
            "an investigation): give it complete instructions, it sees nothing of this conversation."
        )

    def sub_agent_tools(self, parent: Any) -> list[Tool]:
        """Fresh builtin tools for the same folders, minus task, limited to what the parent has."""
        tools = core_tools(self.work_dir, allowed_dirs=self.allowed_dirs, **self.tool_options)
        allowed = _parent_function_names(parent)
        kept = []
        for tool in tools:
            for name, function in list(tool.functions.items()):
                if (allowed is not None and name not in allowed) or (self.read_only and not function.is_read_only):
                    del tool.functions[name]
            if tool.functions:
                kept.append(tool)
        return kept

    async def task(self, description: str, prompt: str, ctx: ToolContext = None) -> str:  # type: ignore[assignment]
        """Run a sub-agent on a self-contained task and return its final answer.

        It has a fresh context (none of this conversation) and the same tools minus task;
        write prompt as complete instructions and say what the answer must contain.
        The answer is cut at 20,000 chars.

        Args:
            description: A 3-5 word label for the task, shown to the user.
            prompt: The full task for the sub-agent.
        """
        parent = getattr(ctx, "agent", None)
        if parent is None:
            raise SubAgentError("task can only run inside an agent (no parent agent in the tool context).")
        from agentica_cli.agent.agent import Agent
        from agentica_cli.agent.events import Error, TurnFinished

        sub_agent = Agent(
            parent.model,
            tools=self.sub_agent_tools(parent),
            instructions=f"{SUB_AGENT_PROMPT}\n\nWorking directory: {self.work_dir}",
            tool_config=parent.tool_config,
            tool_input_guardrails=parent.tool_input_guardrails,
            tool_output_guardrails=parent.tool_output_guardrails,
            approve=parent.approve,
            hooks=list(getattr(parent, "hooks", []) or []),
            name=f"task: {description}",
        )
        source = f"task:{ctx.call_id}"
        content, reason, error = "", "completed", None
        async for event in sub_agent.run_stream(prompt):
            own = not event.source
            if ctx.emit is not None:
                event.source = source if own else f"{source}/{event.source}"
                ctx.emit(event)
            if own and isinstance(event, TurnFinished):
                content, reason = event.content, event.stop_reason
            elif own and isinstance(event, Error):
                error = event.message
        if error is not None and not content:
            raise SubAgentError(f"the sub-agent for {description!r} failed: {error}")
        if reason not in ("completed", "stopped_by_tool"):
            content = f"{content}\n[sub-agent stopped early: {reason}]".strip()
        if not content.strip():
            content = "(the sub-agent finished without an answer)"
        if len(content) > self.max_result_chars:
            omitted = len(content) - self.max_result_chars
            content = content[: self.max_result_chars] + f"\n[... sub-agent answer cut: {omitted:,} more characters]"
        return content
