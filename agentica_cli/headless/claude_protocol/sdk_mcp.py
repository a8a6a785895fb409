"""The SDK's in-process MCP servers (`create_sdk_mcp_server`), as agent tools.

The program serves them itself: `--mcp-config` names them with `"type": "sdk"`, and every
JSON-RPC message goes to the program in an `mcp_message` control request (the SDK hands it to
its `mcp.server.Server` and answers with the server's reply). This client speaks the little
of MCP an agent needs over that: initialize, tools/list, tools/call. Each tool becomes a
function named `<server>__<tool>` like agentica's other MCP tools (Claude's name for it,
`mcp__<server>__<tool>`, is what rules, hooks and the SDK's messages use).
"""

from __future__ import annotations

import itertools
from typing import Any

from agentica_cli.headless.claude_protocol.channel import ControlChannel, ControlError
from agentica_cli.tools.base import Function, Tool
from agentica_cli.tools.mcp.tool import parameters_from_schema, safe_name

PROTOCOL_VERSION = "2025-06-18"


class SdkMcpError(Exception):
    """The server answered with a JSON-RPC error, or the SDK could not deliver the message."""


class SdkMcpServer(Tool):
    def __init__(self, name: str, channel: ControlChannel):
        super().__init__(name=safe_name(name))
        self.server_name = name
        self.channel = channel
        self._ids = itertools.count(1)
        self.connection_status = "pending"  # pending, connected or failed (mcp_status reports it)
        self.connected = False  # read by the agent loop, which connects a tool that is not
        self.error = ""
        self.server_info: dict[str, Any] = {}
        self.tool_specs: list[dict[str, Any]] = []

    async def _send(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = await self.channel.request({"subtype": "mcp_message", "server_name": self.server_name,
                                                 "message": message})
        except ControlError as err:
            raise SdkMcpError(f"SDK MCP server '{self.server_name}': {err}") from None
        reply = answer.get("mcp_response")
        return reply if isinstance(reply, dict) else {}

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = await self._send({"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params})
        if isinstance(reply.get("error"), dict):
            raise SdkMcpError(f"SDK MCP server '{self.server_name}': {reply['error'].get('message') or 'error'}")
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    async def connect(self) -> None:
        """The handshake and the tool list; a failure leaves the server out (status failed)."""
        from agentica_cli import __version__

        try:
            init = await self.rpc("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                                 "clientInfo": {"name": "agentica", "version": __version__}})
            await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed = await self.rpc("tools/list", {})
        except SdkMcpError as err:
            self.connection_status, self.error = "failed", str(err)
            return
        info = init.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        self.tool_specs = [t for t in listed.get("tools") or [] if isinstance(t, dict) and t.get("name")]
        for spec in self.tool_specs:
            self.functions[self.function_name(spec["name"])] = self._function(spec)
        self.connection_status, self.error, self.connected = "connected", "", True

    def function_name(self, tool: str) -> str:
        return f"{safe_name(self.server_name)}__{safe_name(tool)}"[:64]

    def _function(self, spec: dict[str, Any]) -> Function:
        tool = str(spec["name"])
        annotations = spec.get("annotations")
        hints: dict[str, Any] = annotations if isinstance(annotations, dict) else {}
        read_only = bool(hints.get("readOnlyHint"))

        async def call_sdk_tool(**arguments: Any) -> str:
            result = await self.rpc("tools/call", {"name": tool, "arguments": arguments})
            text = "\n".join(str(part.get("text", "")) for part in result.get("content") or []
                             if isinstance(part, dict) and part.get("type") == "text")
            if result.get("isError"):
                raise SdkMcpError(text or f"the tool '{tool}' failed")
            return text

        call_sdk_tool.__name__ = safe_name(tool)
        return Function(name=self.function_name(tool), entrypoint=call_sdk_tool,
                        description=spec.get("description") or f"MCP tool {tool}",
                        parameters=parameters_from_schema(spec.get("inputSchema")),
                        is_read_only=read_only, concurrency_safe=read_only,
                        is_destructive=not read_only and hints.get("destructiveHint") is not False)

    def status_entry(self) -> dict[str, Any]:
        """This server in an `mcp_status` answer."""
        entry: dict[str, Any] = {"name": self.server_name, "status": self.connection_status,
                                 "config": {"type": "sdk", "name": self.server_name}, "scope": "dynamic"}
        if self.connected:
            entry["serverInfo"] = self.server_info
            entry["tools"] = [{"name": s["name"], "description": s.get("description") or ""} for s in self.tool_specs]
        if self.error:
            entry["error"] = self.error
        return entry
