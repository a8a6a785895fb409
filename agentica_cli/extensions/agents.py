"""Custom sub-agents: one Markdown file each; the body is the sub-agent's system prompt.

Front matter: `name` (else the file name), `description` (when to use it: the main model
reads it to choose), `tools` (an allow-list, Claude Code's names or ours; absent = the same
tools as the general sub-agent), `model` (a model id of the same provider; absent or
`inherit` = the parent's model). Claude's model ids and aliases (`sonnet`, `opus`, `haiku`,
`claude-opus-4-1`, ...) are mapped by extensions/model_names.py where the session is built.
A name with spaces or capitals (`Code Reviewer`) is used as a slug (`code-reviewer`); dots are
fine (`dotnet-framework-4.8-expert`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentica_cli.extensions.frontmatter import as_list
from agentica_cli.extensions.loading import first_line, read_markdown, say_which_wins, slug, text_field
from agentica_cli.extensions.model_names import ModelNames
from agentica_cli.extensions.places import Places, markdown_files
from agentica_cli.extensions.tool_names import agent_tool

GENERAL = "general"  # the task tool's built-in sub-agent
_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")


@dataclass
class AgentSpec:
    name: str
    description: str
    prompt: str
    path: Path | None = None
    scope: str = "user"
    tools: list[str] | None = None  # our tool names; None: the general sub-agent's tools
    model: str | None = None  # None: the parent's model
    display_name: str = ""  # the `name:` as written, when it was not usable as it is
    listed_tools: list[str] | None = None  # `tools:` as written


def load_agents(places: Places, problems: list[str] | None = None,
                models: ModelNames | None = None) -> dict[str, AgentSpec]:
    problems = problems if problems is not None else []
    models = models if models is not None else ModelNames()
    agents: dict[str, AgentSpec] = {}
    for folder in places.folders("agents"):
        for path in markdown_files(folder.path, recursive=False):
            parsed = read_markdown(path, folder.root, problems)
            if parsed is None:
                continue
            meta, body = parsed
            written = text_field(meta, "name") or path.stem
            name = written if _NAME.match(written) else slug(written)
            if not _NAME.match(name) or name == GENERAL:
                problems.append(f"{path} skipped: '{written}' is not a usable agent name")
                continue
            tools = as_list(meta.get("tools"))
            spec = AgentSpec(
                name=name,
                description=text_field(meta, "description") or first_line(body),
                prompt=body,
                path=path,
                scope=folder.scope,
                tools=None if tools is None else list(dict.fromkeys(agent_tool(t) for t in tools)),
                model=models.resolve(text_field(meta, "model")),
                display_name=written if written != name else "",
                listed_tools=tools,
            )
            earlier = agents.get(name)
            if earlier is not None and earlier.path is not None:
                say_which_wins("agent", name, earlier.path, path, problems)
            agents[name] = spec
    return agents
