"""Slash commands an editor offers in its prompt box (available_commands_update), and what
they do in an ACP session. A prompt that starts with one of these runs it instead of a turn;
any other /text goes to the model as it is."""

from __future__ import annotations

from typing import Any

from agentica_cli.app.commands import commands_for

# name -> (description, input hint or None): the editor's share of app/commands.py's registry
ACP_COMMANDS: dict[str, tuple[str, str | None]] = {name: (spec.help, spec.hint) for name, spec in
                                                   commands_for("acp").items()}


def available_commands(custom: dict[str, Any] | None = None) -> list[Any]:
    """Our commands, then the user's custom ones (.agentica/commands, .claude/commands: see
    agentica_cli.extensions.commands) that do not share a name with ours."""
    from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

    listed: dict[str, tuple[str, str | None]] = dict(ACP_COMMANDS)
    for name, command in (custom or {}).items():
        listed.setdefault(name, (command.description or "custom command", command.argument_hint or None))
    return [
        AvailableCommand(name=name, description=text,
                         input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None)
        for name, (text, hint) in listed.items()
    ]


async def run_command(session: Any, line: str) -> bool:
    """Run `line` when it names one of ACP_COMMANDS; False when it does not (the model gets it)."""
    name, _, rest = line[1:].partition(" ")
    rest = rest.strip()
    if name not in ACP_COMMANDS:
        return False
    say = session.say
    agent = session.app.agent
    if name == "compact":
        before = len(agent.messages)
        try:
            summary = await agent.compact()
        except Exception as exc:
            reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            await say(f"Could not compact: {reason}. The conversation is unchanged.")
            return True
        await say("Nothing to compact yet." if summary is None else
                  f"Compacted: {before} messages -> {len(agent.messages)}.")
    elif name == "model":
        from agentica_cli.app.runtime import model_label

        if rest:
            problem = session.switch_model(rest)
            await say(problem or f"Switched to {model_label(agent.model)}.")
        else:
            await say(f"Model: {model_label(agent.model)}.")
    elif name == "mode":
        from agentica_cli.acp.modes import MODE_IDS

        if rest:
            if rest not in MODE_IDS:
                await say(f"Unknown mode {rest!r}; one of: {', '.join(MODE_IDS)}.")
                return True
            await session.set_mode(rest)
            await session.mode_changed()
        await say(f"Permission mode: {session.app.policy.mode}.")
    elif name == "tools":
        from agentica_cli.app.commands import tool_rows

        lines = [f"- `{n}`: {does}" for n, does, _, _ in tool_rows(agent.functions, session.app.policy)]
        await say("Tools, and what a call does in this mode:\n" + "\n".join(lines))
    elif name == "todos":
        from builtin_tools.todos import BuiltinTodoTool, render_todos

        todo_tool = next((t for t in agent.tools if isinstance(t, BuiltinTodoTool)), None)
        await say(render_todos(todo_tool.todos if todo_tool else []))
    elif name in ("undo", "redo"):
        from agentica_cli.acp import checkpoints

        await say(await getattr(checkpoints, name)(session, rest == "force"))
    elif name == "cost":
        await say(session.app.usage.describe() + ".")
    return True
