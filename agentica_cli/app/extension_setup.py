"""The user's extensions (agentica_cli.extensions) for this run: found once, wired into the agent.

Custom commands feed the REPL's slash commands and completion; agents become the task tool's
`agent` choices; skills add the `skill` tool; command hooks join the agent's hooks. A
project's files count only when the project is trusted (cli/trust.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.config import Settings
from agentica_cli.extensions.agents import AgentSpec, load_agents
from agentica_cli.extensions.commands import CustomCommand, load_commands
from agentica_cli.extensions.hook_config import HookConfigError, HookSpec, load_hook_specs, specs_from_toml
from agentica_cli.extensions.model_names import ModelNames
from agentica_cli.extensions.places import Places, project_extensions
from agentica_cli.extensions.skills import Skill, load_skills
from agentica_cli.extensions.tool_names import agent_tool


@dataclass
class Extensions:
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    agents: dict[str, AgentSpec] = field(default_factory=dict)
    skills: dict[str, Skill] = field(default_factory=dict)
    hooks: list[HookSpec] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def places_for(work_dir: Path) -> Places:
    from agentica_cli.app.settings.trust import is_trusted, project_root

    return Places(project=project_root(work_dir) if is_trusted(work_dir) else None)


def untrusted_project_extensions(work_dir: Path) -> list[str]:
    """What an untrusted project defines (commands, agents, skills, hooks): ignored until trust."""
    from agentica_cli.app.settings.trust import is_trusted, project_root

    return [] if is_trusted(work_dir) else project_extensions(project_root(work_dir))


def model_names(settings: Settings) -> ModelNames:
    """How Claude's model names in commands and agents map to this session's (model_names.py)."""
    aliases = settings.models.aliases
    return ModelNames(aliases={str(k): str(v) for k, v in aliases.items()},
                      served=set(settings.model.choices), session_model=settings.model_name or "")


def load_extensions(settings: Settings, work_dir: Path) -> Extensions:
    places = places_for(work_dir)
    found = Extensions()
    models = model_names(settings)
    found.commands = load_commands(places, found.problems, models)
    found.agents = load_agents(places, found.problems, models)
    found.skills = load_skills(places, found.problems)
    found.hooks = load_hook_specs(places, found.problems)
    try:
        found.hooks += specs_from_toml(dict(settings.hooks), "config.toml")
    except HookConfigError as err:
        found.problems.append(str(err))
    return found


def attach_extensions(agent: Any, found: Extensions, work_dir: Path,
                      report: Callable[[str], None] | None = None) -> None:
    """Sub-agents into the task tool, the skill tool, the command hooks; problems reported
    (with what the listings leave out: listing_notices)."""
    from agentica_cli.tools.listing import listing_budget
    from builtin_tools.task import BuiltinTaskTool

    budget = listing_budget(getattr(agent, "context_window", None))
    for tool in agent.tools:
        if isinstance(tool, BuiltinTaskTool) and found.agents:
            tool.set_agents(found.agents, budget)
            found.problems += dropped_agent_tools(found.agents, set(getattr(agent, "functions", None) or {}))
    if found.skills:
        from agentica_cli.extensions.skill_tool import SkillTool

        agent.tools.append(SkillTool(found.skills, budget))
    if found.hooks:
        from agentica_cli.extensions.hooks import CommandHooks

        agent.hooks.append(CommandHooks(found.hooks, work_dir, model=lambda: agent.model,  # prompt hooks ask it
                                        rule_matches=_rule_matcher(work_dir)))
    if report is not None:
        from agentica_cli.app.safe_text import safe_text

        for problem in [*found.problems, *listing_notices(found, getattr(agent, "context_window", None))]:
            report(safe_text(problem, keep_newlines=False))


def listing_notices(found: Extensions, context_window: int | None) -> list[str]:
    """What the model's listings of agents and skills leave out for want of room (tools/listing.py)."""
    from agentica_cli.tools.listing import fit_listing, listing_budget, listing_order

    budget = listing_budget(context_window)
    notes = []
    for kind, items, command in (("sub-agents", found.agents, "/agents"), ("skills", found.skills, "/skills")):
        left_out = fit_listing(((x.name, x.description) for x in listing_order(items.values())), budget).left_out
        if left_out:
            notes.append(f"{len(left_out)} of {len(items)} {kind} are not listed to the model (the list's share "
                         f"of the context window is {budget:,} characters); it can still use them by name: "
                         f"{command} or `agentica doctor` lists them all")
    return notes
def dropped_agent_tools(agents: dict[str, AgentSpec], have: set[str]) -> list[str]:
    """A notice per sub-agent whose `tools:` names tools this session does not have (an MCP
    tool, `server__tool`, may come once its server starts: not named here)."""
    notices = []
    for spec in agents.values():
        if spec.tools is None or not have:
            continue
        missing = [t for t in spec.tools if t not in have and "__" not in t and t != "task"]
        if not missing:
            continue
        written = {agent_tool(t): t for t in (spec.listed_tools or [])}
        names = ", ".join(written.get(t, t) for t in missing)
        left = [t for t in spec.tools if t in have or "__" in t]
        rest = f"it gets {', '.join(left)}" if left else "it gets no tools"
        notices.append(f"{spec.path}: the agent '{spec.name}' lists tools agentica does not have "
                       f"({names}): dropped; {rest}")
    return notices


def _rule_matcher(work_dir: Path) -> Callable[[str, str, dict[str, Any]], bool]:
    """A hook entry's `if`: a permission-rule pattern (`Bash(git commit:*)`) the call must match;
    it matches when any simple command of a command line does (as an ask or deny rule)."""
    from agentica_cli.app.permissions.permission_rules import PermissionRule

    def matches(rule: str, tool: str, args: dict[str, Any]) -> bool:
        return PermissionRule.parse("ask", rule).matches(tool, args, work_dir)

    return matches


def bind_session(agent: Any, session: Any) -> None:
    """Hooks are told the CLI's session id and its transcript file."""
    if agent is not None and session is not None:
        agent.session_id = session.id
        agent.transcript_path = str(session.path)


def use_command_settings(agent: Any, command: CustomCommand) -> Callable[[], None]:
    """A command's `model` and `allowed-tools` for one turn; returns what puts them back."""
    import copy

    saved_model, saved_filter = agent.model, agent.tool_filter
    if command.model and command.model != getattr(agent.model, "id", None):
        agent.model = copy.copy(agent.model)  # same provider, endpoint and key; another model id
        agent.model.id = command.model
    if command.tool_names is not None:
        agent.tool_filter = command.tool_names

    def restore() -> None:
        agent.model, agent.tool_filter = saved_model, saved_filter

    return restore


def find_command(prompt: str, found: Extensions) -> tuple[CustomCommand, str] | None:
    """`/review app.py` -> (the custom command, its arguments); None for any other prompt.
    Its prompt is made by cli/command_shell.expand_command."""
    if not prompt.startswith("/"):
        return None
    name, _, arguments = prompt[1:].partition(" ")
    from agentica_cli.extensions.commands import find

    command = find(found.commands, name.strip())
    return (command, arguments) if command is not None else None
