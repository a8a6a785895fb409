"""BuiltinTaskTool: hand a self-contained job to a sub-agent with a fresh context.

The sub-agent uses the parent's model, approval hook, guardrails and hooks, and fresh
builtin tools for the same folders, limited to the functions the parent itself has (so
never wider), without `task`. Its events go into the parent's stream marked
"task:<call_id>"; only its final answer comes back, capped.

Custom sub-agents (`set_agents`, e.g. from .agentica/agents/*.md) are chosen with the
`agent` argument: each has its own system prompt, an allow-list of tools (a call to any
other tool is refused as unknown) and optionally its own model id. Several task calls in
one reply run side by side.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable
from typing import Any

from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext
from builtin_tools.files import BuiltinFileTool
from builtin_tools.toolset import core_tools

MAX_RESULT_CHARS = 20_000

SUB_AGENT_PROMPT = """You are a sub-agent doing one task for another agent, which sees only your final reply.
Work on the task with the tools until it is done (or clearly cannot be done), then reply with a
complete, concise answer: the facts found, files and line numbers, what you changed. Do not ask
questions; nobody will answer them."""


GENERAL_AGENT = "general"


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
        self.agents: dict[str, Any] = {}
        self.left_out: list[str] = []  # agents the schema's listing has no room for (set_agents)
        # Sub-agents run side by side; each of their calls still goes through the approvals.
        self.register(self.task, is_read_only=read_only, concurrency_safe=True)

    def set_agents(self, agents: dict[str, Any], budget: int | None = None) -> None:
        """The custom sub-agents (objects with name, description, prompt, tools, model), offered
        to the model as the `agent` argument's choices. `budget`: characters the listing in the
        schema may take (tools/listing.py; None: the share of a 128k-token window). When they do
        not all fit, the ones left out are still accepted by name, and the listing says so."""
        from agentica_cli.tools.listing import fit_listing, listing_budget, listing_order

        self.agents = dict(agents)
        prop = self.functions["task"].parameters["properties"]["agent"]
        listing = fit_listing(((spec.name, spec.description) for spec in listing_order(self.agents.values())),
                              budget if budget is not None else listing_budget(None))
        self.left_out = listing.left_out
        if listing.complete:  # the schema names every choice, so a typo is caught before the call
            prop["enum"] = [GENERAL_AGENT, *sorted(self.agents)]
        else:
            prop.pop("enum", None)
        lines = [f"{GENERAL_AGENT}: a general sub-agent with the same tools as you (minus task)", *listing.lines]
        if listing.left_out:
            lines.append(f"{len(listing.left_out)} more not listed here: use one the user names, or call task "
                         "with words of what you need as the agent to get the matching names")
        prop["description"] = "Which sub-agent does the task:\n" + "\n".join(f"- {line}" for line in lines)

    def unknown_agent(self, agent: str) -> str:
        """The error for a name that is no agent: the names that match it (the whole list only
        when it is short)."""
        from agentica_cli.tools.listing import matching_names

        if len(self.agents) <= 30:
            known = ", ".join([GENERAL_AGENT, *sorted(self.agents)])
            return f"Error: no sub-agent named {agent!r}. Choose one of: {known}."
        found = matching_names(agent, ((n, s.description) for n, s in sorted(self.agents.items())))
        hint = (f"Sub-agents that match: {', '.join(found)}." if found
                else "No sub-agent name or description matches it.")
        return (f"Error: no sub-agent named {agent!r}. {hint} ({len(self.agents)} custom sub-agents; "
                f"{GENERAL_AGENT} is always there.)")

    def get_system_prompt(self) -> str:
        text = ("task starts a sub-agent with a fresh context for a self-contained job (a wide search, "
                "an investigation): give it complete instructions, it sees nothing of this conversation.")
        if self.agents:
            text += (" Specialised sub-agents (the agent argument) are listed in task's schema; pick one whose "
                     "description fits. Independent tasks in one reply run in parallel.")
        return text

    def sub_agent_tools(self, parent: Any, only: Iterable[str] | None = None) -> list[Any]:
        """Fresh builtin tools for the same folders, minus task, limited to what the parent has
        (and to `only`, a custom agent's allow-list, which may also name the parent's other
        tools, e.g. MCP ones)."""
        tools = core_tools(self.work_dir, allowed_dirs=self.allowed_dirs, **self.tool_options)
        for tool in tools:  # the parent's file content source (an editor's buffers, `agentica acp`)
            twin = next((t for t in getattr(parent, "tools", ()) if type(t) is type(tool)), None)
            # BuiltinFileTool is the one tool with a file_access (the twin is of the same type)
            if isinstance(tool, BuiltinFileTool) and isinstance(twin, BuiltinFileTool) \
                    and twin.file_access is not None:
                tool.file_access = twin.file_access
        allowed = _parent_function_names(parent)
        wanted = None if only is None else set(only) - {"task"}
        kept: list[Any] = []
        for tool in tools:
            for name, function in list(tool.functions.items()):
                if (allowed is not None and name not in allowed) or (self.read_only and not function.is_read_only) \
                        or (wanted is not None and name not in wanted):
                    del tool.functions[name]
            if tool.functions:
                kept.append(tool)
        if wanted:
            have = {name for tool in kept for name in tool.functions}
            parent_functions = getattr(parent, "functions", None) or {}
            kept += [parent_functions[name] for name in sorted(wanted - have) if name in parent_functions
                     and not (self.read_only and not parent_functions[name].is_read_only)]
        return kept

    async def task(self, description: str, prompt: str, agent: str = GENERAL_AGENT,
                   ctx: ToolContext = None) -> str:  # type: ignore[assignment]
        """Run a sub-agent on a self-contained task and return its final answer.

        It has a fresh context (none of this conversation) and the same tools minus task;
        write prompt as complete instructions and say what the answer must contain.
        The answer is cut at 20,000 chars.

        Args:
            description: A 3-5 word label for the task, shown to the user.
            prompt: The full task for the sub-agent.
            agent: Which sub-agent does the task.
        """
        from agentica_cli.agent.agent import Agent
        from agentica_cli.agent.events import Error, TurnFinished

        parent = ctx.agent if ctx is not None else None
        if not isinstance(parent, Agent):
            raise SubAgentError("task can only run inside an agent (no parent agent in the tool context).")
        spec = self.agents.get(agent)
        if spec is None and agent != GENERAL_AGENT:
            return self.unknown_agent(agent)

        model = parent.model
        if spec is not None and spec.model and spec.model != getattr(model, "id", None):
            model = copy.copy(model)  # same provider, endpoint and key; another model id
            model.id = spec.model
        system = spec.prompt if spec is not None and spec.prompt.strip() else SUB_AGENT_PROMPT
        sub_agent = Agent(
            model,
            tools=self.sub_agent_tools(parent, spec.tools if spec is not None else None),
            instructions=f"{system}\n\nWorking directory: {self.work_dir}",
            tool_config=parent.tool_config,
            tool_input_guardrails=parent.tool_input_guardrails,
            tool_output_guardrails=parent.tool_output_guardrails,
            approve=parent.approve,
            hooks=list(parent.hooks),
            name=f"task: {description}" if spec is None else f"{spec.name}: {description}",
        )
        sub_agent.is_subagent = True  # its end fires SubagentStop, not the session's Stop
        sub_agent.session_id = parent.session_id
        sub_agent.transcript_path = parent.transcript_path
        source = f"task:{ctx.call_id}"
        # SubagentStart: what its hooks add is context for the sub-agent
        started = await parent.fire_hooks("SubagentStart", agent_id=source,
                                          agent_type=spec.name if spec else GENERAL_AGENT)
        if started.context:
            prompt = prompt + "".join(f"\n\n[SubagentStart hook: {text}]" for text in started.context)
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
