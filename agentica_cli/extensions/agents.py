"""Custom sub-agents: one Markdown file each; the body is the sub-agent's system prompt.

Front matter: `name` (else the file name), `description` (when to use it: the main model
reads it to choose), `tools` (an allow-list, Claude Code's names or ours; absent = the same
tools as the general sub-agent), `model` (a model id of the same provider; absent or
`inherit` = the parent's model). Claude Code's aliases `sonnet`, `opus`, `haiku` name no model
here and also mean the parent's model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentica_cli.extensions.frontmatter import as_list
from agentica_cli.extensions.loading import first_line, read_markdown, text_field
from agentica_cli.extensions.places import Places, markdown_files
from agentica_cli.extensions.tool_names import tool_of_rule

GENERAL = "general"  # the task tool's built-in sub-agent
CLAUDE_MODEL_ALIASES = ("inherit", "sonnet", "opus", "haiku")
_NAME = re.compile(r"^[A-Za-z0-9][\w-]*$")


@dataclass
class AgentSpec:
    name: str
    description: str
    prompt: str
    path: Path | None = None
    scope: str = "user"
    tools: list[str] | None = None  # our tool names; None: the general sub-agent's tools
    model: str | None = None  # None: the parent's model


def load_agents(places: Places, problems: list[str] | None = None) -> dict[str, AgentSpec]:
    problems = problems if problems is not None else []
    agents: dict[str, AgentSpec] = {}
    for folder in places.folders("agents"):
        for path in markdown_files(folder.path, recursive=False):
            parsed = read_markdown(path, folder.root, problems)
            if parsed is None:
                continue
            meta, body = parsed
            name = text_field(meta, "name") or path.stem
            if not _NAME.match(name) or name == GENERAL:
                problems.append(f"{path} skipped: '{name}' is not a usable agent name")
                continue
            model = text_field(meta, "model") or None
            tools = as_list(meta.get("tools"))
            agents[name] = AgentSpec(
                name=name,
                description=text_field(meta, "description") or first_line(body),
                prompt=body,
                path=path,
                scope=folder.scope,
                tools=None if tools is None else list(dict.fromkeys(tool_of_rule(t) for t in tools)),
                model=None if model is None or model.lower() in CLAUDE_MODEL_ALIASES else model,
            )
    return agents
