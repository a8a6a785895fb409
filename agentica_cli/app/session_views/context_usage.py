"""What fills the model's context window, part by part, for `/context` (and any front end).

The parts: the system prompt (agentica's instructions, plan-mode note, tool guidance), the
instruction files in it (AGENTS.md, CLAUDE.md, ...), the builtin tools' schemas, each MCP
server's tool schemas, the conversation, and what the user attached to it (`@file` contents,
folder listings, images). Each is counted with the agent's own estimator
(`agent.context.estimate_tokens`, about four characters a token, images at what the provider
charges for their pixels): no tokenizer to download, the same figure the agent uses to decide
when to compact. The window is the agent's; the last request's size as the API reported it is
given beside the estimate when known.

`/compact` would replace all but the last few messages by a summary: `compact_frees` is what
those messages take now (the summary's own few hundred tokens come back).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# The blocks prompt_input.attach_mentions (and the MCP resources) put into a user message.
_ATTACHMENT = re.compile(r'<(file|directory|resource) (?:path|uri)="[^"]*">.*?</\1>', re.S)


class _Function(Protocol):
    name: str

    def to_openai(self) -> dict[str, Any]: ...


class _Agent(Protocol):
    messages: list[dict[str, Any]]
    tools: list[Any]

    @property
    def functions(self) -> dict[str, Any]: ...

    @property
    def context_window(self) -> int: ...

    def system_prompt(self) -> str: ...


@dataclass(frozen=True)
class ContextPart:
    label: str
    tokens: int
    detail: str = ""  # e.g. the instruction files, a server's tool count


@dataclass(frozen=True)
class ContextUsage:
    window: int
    parts: list[ContextPart] = field(default_factory=list)
    reported_tokens: int | None = None  # the last request's prompt tokens, as the API counted them
    compact_frees: int = 0
    compact_keeps: int = 0  # messages /compact would keep as they are

    @property
    def used(self) -> int:
        return sum(part.tokens for part in self.parts)

    @property
    def free(self) -> int:
        return max(self.window - self.used, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"window": self.window, "used": self.used, "free": self.free,
                "reported_tokens": self.reported_tokens, "compact_frees": self.compact_frees,
                "compact_keeps": self.compact_keeps,
                "parts": [{"label": p.label, "tokens": p.tokens, "detail": p.detail} for p in self.parts]}


def _estimate(value: Any) -> int:
    from agentica_cli.agent.context import estimate_tokens

    return estimate_tokens(value) if value else 0


def _schemas_tokens(functions: Iterable[_Function]) -> int:
    schemas = [fn.to_openai() for fn in functions]
    return _estimate(json.dumps(schemas, ensure_ascii=False)) if schemas else 0


def _tool_functions(tool: Any) -> list[_Function]:
    getter = getattr(tool, "get_functions", None)
    return list(getter()) if getter is not None else [tool]


def _split_attachments(message: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A user message without its attached files and images, and what those took."""
    content = message.get("content")
    if isinstance(content, str):
        found = _ATTACHMENT.findall(content)
        if not found:
            return message, 0
        stripped = _ATTACHMENT.sub("", content)
        return message | {"content": stripped}, _estimate(content) - _estimate(stripped)
    if isinstance(content, list):
        texts = [part for part in content if isinstance(part, dict) and part.get("type") == "text"]
        images = [part for part in content if not (isinstance(part, dict) and part.get("type") == "text")]
        text = "\n".join(str(part.get("text", "")) for part in texts)
        rest, attached = _split_attachments(message | {"content": text})
        image_tokens = _estimate({"role": "user", "content": images}) if images else 0
        return rest, attached + image_tokens
    return message, 0


def context_usage(agent: _Agent, *, mcp_tools: Sequence[Any] = (), instruction_texts: Sequence[str] = (),
                  instruction_names: Sequence[str] = (), reported_tokens: int | None = None,
                  compact_keep: int | None = None) -> ContextUsage:
    """The parts of `agent`'s next request. `mcp_tools`: the McpTool of each server (named by
    `.name`); `instruction_texts`: the instruction files' texts inside the system prompt."""
    functions = agent.functions
    parts: list[ContextPart] = []
    system_prompt = agent.system_prompt()
    instructions = sum(_estimate(text) for text in instruction_texts if text and text in system_prompt)
    parts.append(ContextPart("system prompt", max(_estimate(system_prompt) - instructions, 0)))
    if instructions:
        parts.append(ContextPart("instruction files", instructions, ", ".join(instruction_names)))
    in_servers: set[str] = set()
    server_parts: list[ContextPart] = []
    for server in mcp_tools:
        offered = [fn for fn in _tool_functions(server) if functions.get(fn.name) is fn]
        in_servers.update(fn.name for fn in offered)
        if any(item is server for item in agent.tools):
            count = f"{len(offered)} tool{'s' if len(offered) != 1 else ''}"
            server_parts.append(ContextPart(f"MCP {getattr(server, 'name', '?')}", _schemas_tokens(offered), count))
    builtin = [fn for name, fn in functions.items() if name not in in_servers]
    parts.append(ContextPart("tools", _schemas_tokens(builtin), f"{len(builtin)} tools"))
    parts += server_parts
    history = attachments = 0
    for message in agent.messages:
        if message.get("role") == "user":
            rest, attached = _split_attachments(message)
            history += _estimate(rest)
            attachments += attached
        else:
            history += _estimate(message)
    parts.append(ContextPart("conversation", history, f"{len(agent.messages)} messages"))
    if attachments:
        parts.append(ContextPart("attachments", attachments, "@files, folder listings, images"))
    frees = keeps = 0
    splitter = getattr(agent, "context", None)
    if compact_keep is not None and agent.messages and splitter is not None:
        cut = splitter.split_for_compaction(agent.messages, compact_keep)  # where /compact's kept tail starts
        if cut > 0:
            frees = sum(_estimate(m) for m in agent.messages[:cut])
            keeps = len(agent.messages) - cut
    return ContextUsage(agent.context_window, parts, reported_tokens, frees, keeps)
