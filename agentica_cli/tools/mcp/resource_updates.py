"""Telling the model that an MCP resource it has seen changed.

A resource read this session (an `@server:uri` mention, or the model's `read_resource`) is
subscribed to when its server offers subscriptions. When the server says it was updated, the
tool reads it again at once; the next model request then carries the new text in a note, as
the result of the tool call that ran meanwhile or with the user's next message, so the model
never works from a stale copy. Duck-typed over the agent's tools: no MCP import here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# The new text of one resource in the note; past it the model is told to read it again.
MAX_UPDATE_CHARS = 20_000


def take_resource_updates(tools: Iterable[Any]) -> list[tuple[str, str, str]]:
    """(server, uri, new text) of every watched resource updated since the last call."""
    updates: list[tuple[str, str, str]] = []
    for tool in tools:
        take = getattr(tool, "take_resource_updates", None)
        if callable(take):
            updates += take()
    return updates


def update_note(updates: list[tuple[str, str, str]]) -> str:
    """The note the model reads: what changed, and the current text of each resource."""
    blocks = []
    for server, uri, text in updates:
        body = text
        if len(body) > MAX_UPDATE_CHARS:
            body = (body[:MAX_UPDATE_CHARS] + f"\n[... {len(text) - MAX_UPDATE_CHARS:,} more characters: read the "
                    f"resource again with {server}__read_resource to see them]")
        blocks.append(f'<resource server="{server}" uri="{uri}" updated="true">\n{body}\n</resource>')
    names = ", ".join(f"{server}:{uri}" for server, uri, _ in updates)
    return (f"[The MCP server has updated {'a resource' if len(updates) == 1 else 'resources'} read earlier in this "
            f"conversation ({names}); the earlier text is out of date. The current text:]\n" + "\n\n".join(blocks))


def describe(updates: list[tuple[str, str, str]]) -> str:
    """One line for the user."""
    names = ", ".join(f"{server}:{uri}" for server, uri, _ in updates)
    return f"MCP resource{'s' if len(updates) > 1 else ''} changed: {names}; the new text goes to the model"
