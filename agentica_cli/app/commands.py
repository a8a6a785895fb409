"""The slash commands, once: one registry of names and help texts, and the operations that more
than one front end offers, returning data (what changed, the line to show) that the REPL
(tui/slash.py) and ACP (acp/commands.py) render in their own way.

Add a command here first (its name, help text, input hint and the front ends that offer it),
then its handler in each front end that lists it; tests/test_front_end_parity.py checks that the
REPL's /help and ACP's available commands say the same thing for every shared command.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentica_cli.app.settings.config import Settings

TUI = "tui"
ACP = "acp"
BOTH = frozenset({TUI, ACP})


@dataclass(frozen=True)
class CommandSpec:
    help: str
    hint: str | None = None  # what the argument is, for an editor's prompt box
    front_ends: frozenset[str] = BOTH


COMMANDS: dict[str, CommandSpec] = {
    "help": CommandSpec("show commands and keys", front_ends=frozenset({TUI})),
    "clear": CommandSpec("start a new conversation", front_ends=frozenset({TUI})),
    "compact": CommandSpec("summarise the conversation to free context"),
    "model": CommandSpec("show or switch the model: /model NAME (the REPL lists the endpoint's models)",
                         "model name"),
    "mode": CommandSpec("show or switch the permission mode: default, accept-edits, plan, auto", "mode",
                        frozenset({ACP})),
    "tools": CommandSpec("list the tools the agent can use, and what a call does in this mode"),
    "todos": CommandSpec("show the agent's todo list"),
    "expand": CommandSpec("show the whole output of the last tool call", front_ends=frozenset({TUI})),
    "diff": CommandSpec("what this session changed: /diff (all) or /diff N (turn N)", front_ends=frozenset({TUI})),
    "undo": CommandSpec("put back the files the last turn changed (force: even if changed since)", "force"),
    "redo": CommandSpec("re-apply the edits /undo took back (force: even if changed since)", "force"),
    "rewind": CommandSpec("go back to before a turn: code, conversation or both", front_ends=frozenset({TUI})),
    "cost": CommandSpec("tokens used in this session, sub-agents' included"),
    "context": CommandSpec("what fills the context window, and what /compact would free", front_ends=frozenset({TUI})),
    "export": CommandSpec("write the conversation to a file: /export [FILE] [--json] [--force]",
                          front_ends=frozenset({TUI})),
    "status": CommandSpec("model, provider, base URL, session, folders, instructions, MCP servers, mode, sandbox",
                          front_ends=frozenset({TUI})),
    "resume": CommandSpec("list earlier sessions here, or /resume ID|N", front_ends=frozenset({TUI})),
    "permissions": CommandSpec("mode, rules and grants: /permissions MODE | revoke N|all", front_ends=frozenset({TUI})),
    "mcp": CommandSpec("MCP servers, their state and tools; /mcp restart|login|logout NAME",
                       front_ends=frozenset({TUI})),
    "agents": CommandSpec("the sub-agents the task tool can start", front_ends=frozenset({TUI})),
    "skills": CommandSpec("the skills the model can load: name, description, where from", front_ends=frozenset({TUI})),
    "init": CommandSpec("explore the repository and write or improve AGENTS.md (asks before writing)",
                        front_ends=frozenset({TUI})),
    "ps": CommandSpec("background processes: id, state, uptime, last lines", front_ends=frozenset({TUI})),
    "kill": CommandSpec("stop a background process: /kill ID | all", front_ends=frozenset({TUI})),
    "exit": CommandSpec("leave (also Ctrl-D)", front_ends=frozenset({TUI})),
}


def commands_for(front_end: str) -> dict[str, CommandSpec]:
    """The commands `front_end` ("tui" or "acp") offers, in the registry's order."""
    return {name: spec for name, spec in COMMANDS.items() if front_end in spec.front_ends}


def help_texts(front_end: str) -> dict[str, str]:
    return {name: spec.help for name, spec in commands_for(front_end).items()}


@dataclass(frozen=True)
class ModelSwitch:
    """The outcome of /model NAME: the new client, or why not (the settings then unchanged)."""

    model: Any = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.model is not None


def switch_model(settings: Settings, name: str) -> ModelSwitch:
    """Build the client for model `name` with these settings; on success the settings name it
    (what a reload, /status and a saved session see), on failure they keep the previous name."""
    from agentica_cli.app.runtime import MissingKey, build_model

    previous = settings.model
    settings.model = replace(previous, name=name)
    try:
        return ModelSwitch(model=build_model(settings))
    except (MissingKey, ValueError) as err:
        settings.model = previous
        return ModelSwitch(problem=f"Could not switch to {name}: {err}")


def tool_rows(functions: Mapping[str, Any], policy: Any) -> list[tuple[str, str, bool, str]]:
    """/tools: (name, what a call does in this mode, read-only, the description's first line)."""
    rows = []
    for name, function in functions.items():
        description = (getattr(function, "description", "") or "").strip().splitlines()
        rows.append((name, policy.describe_tool(function), bool(getattr(function, "is_read_only", False)),
                     description[0] if description else ""))
    return rows
