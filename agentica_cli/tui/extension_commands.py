"""The REPL side of the user's extensions: /NAME custom commands, /agents, /skills, the /help section."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentica_cli.app.safe_text import safe_text
from agentica_cli.extensions.commands import CustomCommand
from agentica_cli.tui.terminal import home_relative, plain

if TYPE_CHECKING:
    from agentica_cli.tui.repl_host import ReplHost


def completion_entries(commands: dict[str, CustomCommand]) -> dict[str, str]:
    """name -> the line Tab completion shows beside it."""
    return {name: safe_text(c.help_line(), keep_newlines=False) for name, c in commands.items()}


def show_help(commands: dict[str, CustomCommand], builtin: dict[str, str]) -> None:
    if not commands:
        return
    plain("custom commands (.agentica/commands, .claude/commands, ~/.agentica/commands):", "1")
    for name, command in sorted(commands.items()):
        hidden = " [a built-in command of that name wins]" if name in builtin else ""
        plain(f"  /{safe_text(name, keep_newlines=False):<12} {safe_text(command.help_line(), keep_newlines=False)}"
              f"{hidden}", hang=16)


async def run_custom_command(repl: ReplHost, command: CustomCommand, arguments: str) -> None:
    """Send the command's body (arguments substituted, @files attached, !`commands` run) as this
    turn's prompt, with its model and its allowed tools for this turn only (AppSession's
    expand_command, the same for every front end)."""
    await repl.ensure_agent()
    repl.ensure_renderer()  # a !`command` may ask for approval, which prints
    turn = await repl.session().expand_command(command.name, arguments.strip(), lambda line: plain(line, "2"))
    if turn.attached:
        plain(f"(attached {', '.join(turn.attached)})", "2")
    try:
        await repl.run_turn(turn.prompt)
    finally:
        turn.restore()


def show_agents(repl: ReplHost) -> None:
    agents = repl.extensions.agents
    plain("sub-agents (the task tool's agent argument):", "1")
    plain("  general      the same tools as the main agent (minus task), its model")
    for name, spec in sorted(agents.items()):
        tools = ", ".join(spec.tools) if spec.tools is not None else "same as general"
        where = home_relative(spec.path) if spec.path is not None else ""
        plain(f"  {safe_text(name, keep_newlines=False):<12} {safe_text(spec.description, keep_newlines=False)[:90]}")
        plain(f"  {'':<12} {_as_written(spec.display_name)}tools: {safe_text(tools)} · "
              f"model: {safe_text(spec.model or 'inherit')} · {spec.scope}: {safe_text(where)}", "2")
    if not agents:
        plain("  Define more in .agentica/agents/NAME.md (or .claude/agents, ~/.agentica/agents).", "2")


def show_skills(repl: ReplHost) -> None:
    skills = repl.extensions.skills
    plain("skills (the model loads one with the skill tool when a request matches):", "1")
    for name, skill in sorted(skills.items()):
        where = home_relative(skill.folder / "SKILL.md")
        plain(f"  {safe_text(name, keep_newlines=False):<12} {safe_text(skill.description, keep_newlines=False)[:90]}")
        plain(f"  {'':<12} {_as_written(skill.display_name)}{skill.scope}: {safe_text(where, keep_newlines=False)}",
              "2")
    if not skills:
        plain("  None. Add one as .agentica/skills/NAME/SKILL.md (or .claude/skills, ~/.agentica/skills).", "2")


def _as_written(display_name: str) -> str:
    """The file's own `name:` where it was not usable as a name (`Agent Development` is used as
    `agent-development`): shown so the user recognises the entry."""
    return f"name: {safe_text(display_name, keep_newlines=False)!r} · " if display_name else ""
