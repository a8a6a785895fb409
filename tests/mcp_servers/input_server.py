"""An MCP server (official SDK) that asks for input the way 2026 servers must: its tools take
`Resolve(...)` parameters whose resolvers return `Elicit`, `Sample` or `ListRoots`. On a
2026-07-28 connection the SDK turns them into an `InputRequiredResult` the client answers by
calling again with `input_responses` (multi-round trip); on 2025 connections the same tools
send classic server->client requests. Serves stdio."""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel


class Person(BaseModel):
    name: str
    age: int


def ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


def ask_model(topic: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"A haiku about {topic}"))],
                  max_tokens=100_000)


def ask_roots() -> ListRoots:
    return ListRoots()


def build_server() -> MCPServer:
    server = MCPServer("input", instructions="Asks for input through results (2026) or requests (2025).")

    @server.tool()
    def register(person: Annotated[ElicitationResult[Person], Resolve(ask_person)], ctx: Context) -> str:
        """Ask the user for their name and age (elicitation)."""
        era = ctx.protocol_version
        if isinstance(person, AcceptedElicitation):
            return f"registered {person.data.name}, {person.data.age} ({era})"
        return f"not registered ({person.action}, {era})"

    @server.tool()
    async def register_then_work(seconds: float, person: Annotated[ElicitationResult[Person], Resolve(ask_person)],
                                 ctx: Context) -> str:
        """Ask who the user is, then work `seconds` (the call's timeout counts only this part)."""
        await anyio.sleep(seconds)
        name = person.data.name if isinstance(person, AcceptedElicitation) else person.action
        return f"worked for {name} ({ctx.protocol_version})"

    @server.tool()
    def haiku(topic: str, answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
        """Ask the client's model for a haiku (sampling)."""
        content = answer.content
        return f"model wrote: {content.text if isinstance(content, TextContent) else content}"

    @server.tool()
    def list_roots(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
        """The client's roots."""
        return "\n".join(str(root.uri) for root in roots.roots) or "(no roots)"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
