"""An MCP server (official SDK) whose resources change: `demo://status` is updated by the
`set_status` tool and announced to subscribers (2025: resources/subscribe and
notifications/resources/updated; 2026: subscriptions/listen), and `add_resource` changes the
resource list. Serves stdio."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import EmptyResult, SubscribeRequestParams

STATE = {"status": "draft"}
SUBSCRIBED: list[str] = []


def build_server() -> MCPServer:
    server = MCPServer("watch")

    @server.resource("demo://status", mime_type="text/plain")
    def status() -> str:
        """A document that changes (set_status)."""
        return f"status: {STATE['status']}"

    @server.resource("demo://static", mime_type="text/plain")
    def static() -> str:
        return "never changes"

    @server.tool()
    async def set_status(value: str, ctx: Context) -> str:
        """Change demo://status and tell subscribers."""
        STATE["status"] = value
        await ctx.session.send_resource_updated("demo://status")  # 2025 subscribers
        await ctx.notify_resource_updated("demo://status")  # 2026 listen streams
        return f"status set to {value}"

    @server.tool()
    async def add_resource(ctx: Context) -> str:
        """Add demo://added and tell the client its resource list changed."""

        @server.resource("demo://added", mime_type="text/plain")
        def added() -> str:
            return "added later"

        await ctx.session.send_resource_list_changed()
        await ctx.notify_resources_changed()
        return "added"

    async def on_subscribe(ctx: object, params: SubscribeRequestParams) -> EmptyResult:
        SUBSCRIBED.append(str(params.uri))
        return EmptyResult()

    # MCPServer serves no resources/subscribe of its own; a 2025 server declares it by serving it.
    server._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, on_subscribe)

    @server.tool()
    def subscriptions() -> str:
        """The URIs a 2025 client subscribed to."""
        return ", ".join(SUBSCRIBED) or "(none)"

    return server


if __name__ == "__main__":
    build_server().run("stdio")
