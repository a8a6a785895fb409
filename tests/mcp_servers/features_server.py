"""An MCP server (official SDK) for the client features beyond tool calls: a tool list that
changes, elicitation, sampling, roots, progress, prompts, resources, and a tool that needs
task-augmented calls. Serves stdio; clients connect with the 2025 handshake (protocol
"legacy"), where a server sends these requests itself."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage, TextContent, ToolExecution
from pydantic import BaseModel, Field


class Person(BaseModel):
    name: str
    age: int


class Newsletter(BaseModel):
    email: str = Field(title="The e-mail address the weekly project newsletter is sent to")


class FeaturesServer(MCPServer):
    async def list_tools(self):  # type: ignore[no-untyped-def]
        tools = await super().list_tools()
        # `research` says it must be called as a task (like server-everything's simulate-research-query).
        return [t.model_copy(update={"execution": ToolExecution(task_support="required")}) if t.name == "research"
                else t for t in tools]


def build_server() -> MCPServer:
    server = FeaturesServer("features", instructions="Client features test server.")

    @server.tool()
    async def unlock(ctx: Context) -> str:
        """Add the `secret` tool and tell the client its tool list changed."""

        @server.tool()
        def secret() -> str:
            """A tool that exists only after unlock."""
            return "the secret is 42"

        await ctx.session.send_tool_list_changed()  # 2025 clients
        await ctx.notify_tools_changed()  # 2026 clients (subscriptions/listen)
        return "unlocked"

    @server.tool()
    async def register(ctx: Context) -> str:
        """Ask the user for their name and age (elicitation)."""
        answer = await ctx.elicit("Who are you?", Person)
        if answer.action == "accept":
            return f"registered {answer.data.name}, {answer.data.age}"
        return f"not registered ({answer.action})"

    @server.tool()
    async def subscribe(ctx: Context) -> str:
        """Ask the user for an e-mail address (elicitation; a field title wider than a narrow terminal)."""
        answer = await ctx.elicit("Where should the newsletter go?", Newsletter)
        if answer.action == "accept":
            return f"subscribed {answer.data.email}"
        return f"not subscribed ({answer.action})"

    @server.tool()
    async def haiku(topic: str, ctx: Context) -> str:
        """Ask the client's model for a haiku (sampling)."""
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"A haiku about {topic}"))],
            max_tokens=100_000,
        )
        return f"model wrote: {result.content.text}"

    @server.tool()
    async def list_roots(ctx: Context) -> str:
        """The client's roots."""
        result = await ctx.session.list_roots()
        return "\n".join(str(root.uri) for root in result.roots) or "(no roots)"

    @server.tool()
    async def count(ctx: Context) -> str:
        """Count to three, reporting progress."""
        for i in range(1, 4):
            await ctx.report_progress(i, 3, f"step {i}")
        return "counted"

    @server.tool()
    def research(topic: str) -> str:
        """Needs task augmentation (so clients must not offer it as a plain tool)."""
        return f"research on {topic}"

    @server.prompt()
    def review(file: str, focus: str = "bugs") -> str:
        """Review a file."""
        return f"Please review {file}, looking for {focus}."

    @server.resource("demo://readme", mime_type="text/plain")
    def readme() -> str:
        """The project readme."""
        return "README: the demo project"

    @server.resource("demo://notes/{topic}")
    def note(topic: str) -> str:
        return f"notes about {topic}"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
