"""The client's side of MCP for every front end: roots (the folders servers may work in),
`agentica -p`'s refusal of what would need a person, `@server:uri` resource mentions and server
prompts as slash commands (`/mcp__server__prompt args`).

`agentica -p` cannot ask anyone: it declines input and sampling requests, says so on stderr,
and the run goes on. The REPL's forms and approvals are tui/mcp_client_ui.py's.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, McpClientHandlers, SamplingRequest


def roots_for(work_dir: Path, allowed_dirs: Iterable[Path]) -> list[Path]:
    """The folders MCP servers are told they may work in: the work folder and --add-dir folders."""
    roots = [Path(work_dir).resolve()]
    for extra in allowed_dirs:
        path = Path(extra).expanduser().resolve()
        if path not in roots:
            roots.append(path)
    return roots


async def decline_input(request: ElicitRequest, who: str = "-p") -> ElicitAnswer:
    """A server's request for input where nobody can answer it: declined, said on stderr."""
    sys.stderr.write(f"agentica: MCP server '{request.server}' asked for input "
                     f"({safe_text(request.message)[:200]}); declined: {who} cannot ask\n")
    return ElicitAnswer("decline")


async def decline_sampling(request: SamplingRequest, who: str = "-p") -> str | None:
    """A server's request to use the model where nobody can approve it: declined, said on stderr."""
    sys.stderr.write(f"agentica: MCP server '{request.server}' asked to use the model; declined: "
                     f"{who} cannot ask for approval\n")
    return None


def print_mode_handlers(work_dir: Path, allowed_dirs: Sequence[Path], *, who: str = "-p") -> McpClientHandlers:
    """Where nobody can fill a form or approve a sampling request (-p; ACP, whose protocol has
    neither): roots, and a clean refusal of what would need a person, said on stderr."""

    async def elicit(request: ElicitRequest) -> ElicitAnswer:
        return await decline_input(request, who)

    async def sample(request: SamplingRequest) -> str | None:
        return await decline_sampling(request, who)

    return McpClientHandlers(roots=roots_for(work_dir, allowed_dirs), elicit=elicit, sample=sample)


def offer_usable_tools(agent: Any, servers: Any) -> None:
    """Give the agent the tools of usable MCP servers: ready ones, and ones that stopped after
    starting (their next call restarts them); a server still starting or that failed to start
    leaves its tools out. The agent's other tools keep their places. (REPL and ACP, before each
    turn; -p waits for its servers once and takes what is ready.)"""
    ready = servers.usable_tools()
    managed = {id(t) for t in servers.tools}
    ready_ids = {id(t) for t in ready}
    kept = [t for t in agent.tools if id(t) not in managed or id(t) in ready_ids]
    present = {id(t) for t in kept}
    agent.tools = kept + [t for t in ready if id(t) not in present]


RESOURCE_MENTION = re.compile(r"(?:^|(?<=\s))@([A-Za-z0-9_-]+):(\S+)")
MAX_RESOURCE_CHARS = 100_000


async def attach_resources(text: str, servers: Any) -> tuple[str, list[str], list[str]]:
    """`explain @docs:file:///readme.md`: the message plus the resource's text. Returns the
    text, what was attached and what could not be read (with why)."""
    attached: list[str] = []
    failed: list[str] = []
    blocks: list[str] = []
    if servers is None:
        return text, attached, failed
    for match in RESOURCE_MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(".,;!?)")
        tool = servers.ready_tool(server) if server in servers.names else None
        if tool is None or f"{server}:{uri}" in attached:
            continue
        try:
            body = await tool.read_resource(uri)
        except Exception as err:
            failed.append(f"{server}:{uri} ({err})")
            continue
        attached.append(f"{server}:{uri}")
        blocks.append(f'<resource server="{server}" uri="{uri}">\n{body[:MAX_RESOURCE_CHARS]}\n</resource>')
    if blocks:
        text = text + "\n\n" + "\n\n".join(blocks)
    return text, attached, failed


def prompt_arguments(prompt: Any, text: str) -> dict[str, str]:
    """`/mcp__s__p a b key=value`: words fill the prompt's arguments in order, key=value by
    name. Raises ValueError naming a missing required argument or an unknown name."""
    declared = [a.name for a in (prompt.arguments or ())]
    required = [a.name for a in (prompt.arguments or ()) if a.required]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in shlex.split(text) if text.strip() else []:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            values[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in values]
    if len(positional) > len(free):
        if not free:
            raise ValueError(f"/{prompt.name} takes no more arguments (it has: {', '.join(declared) or 'none'})")
        positional[len(free) - 1:] = [" ".join(positional[len(free) - 1:])]  # the last one takes the rest
    values.update(zip(free, positional, strict=False))
    missing = [name for name in required if name not in values]
    if missing:
        raise ValueError(f"missing argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)} "
                         f"(usage: {usage(prompt)})")
    return values


def usage(prompt: Any) -> str:
    args = [a.name if a.required else f"[{a.name}]" for a in (prompt.arguments or ())]
    return " ".join(args) or "(no arguments)"


async def prompt_text(tool: Any, prompt: Any, rest: str) -> str:
    """The text a prompt command sends as the user's message."""
    messages = await tool.get_prompt(prompt.name, prompt_arguments(prompt, rest))
    return "\n\n".join(text for _, text in messages)
