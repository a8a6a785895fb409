"""An MCP server (official SDK) with tools that must be called as tasks (MCP 2025-11-25):
`research` has `execution.taskSupport = "required"`, `lookup` has "optional", `confirm`
(required) needs the user's answer first: its task waits in `input_required` until the
client asks for its result, and the server then sends an elicitation request (2025-11-25:
input for a task is asked while the client waits in `tasks/result`). The SDK has no server
side for tasks, so a middleware serves them: a task-augmented `tools/call` starts the work in
the background and answers with the task; `tasks/get`, `tasks/result` and `tasks/cancel`
follow the spec. `task_log` (a plain tool) reports what the client did.
Serves stdio; the client must use the 2025 handshake (protocol "legacy")."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    ElicitRequestedSchema,
    ServerTasksCapability,
    ServerTasksRequestsCapability,
    TasksCallCapability,
    TasksCancelCapability,
    TasksToolsCapability,
    ToolExecution,
)

POLL_INTERVAL_MS = 200
TASKS: dict[str, dict[str, Any]] = {}
LOG: list[str] = []  # "get <id> <monotonic>", "cancel <id>", "plain <name>"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _public(task: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in task.items() if not k.startswith("_")}


async def _research(task: dict[str, Any], topic: str, steps: int) -> dict[str, Any]:
    for step in range(1, steps + 1):
        await asyncio.sleep(0.2)
        task.update(statusMessage=f"reading source {step}/{steps}", lastUpdatedAt=_now())
    return {"content": [{"type": "text", "text": f"research on {topic}: {steps} sources read"}], "isError": False}


async def _confirm(task: dict[str, Any], seconds: float) -> dict[str, Any]:
    await task["_answered"].wait()
    await asyncio.sleep(seconds)  # the work after the answer: the call's timeout counts this
    answer = task["_answer"]
    text = f"confirmed: {answer.content.get('ok')}" if answer.action == "accept" else f"not confirmed ({answer.action})"
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def _ask(ctx: Any, task: dict[str, Any]) -> None:
    """tasks/result of a task in input_required: ask the client (once), then let it work on."""
    if task.get("status") != "input_required" or task.get("_asking"):
        return
    task["_asking"] = True
    schema = ElicitRequestedSchema(type="object", properties={"ok": {"type": "boolean"}}, required=["ok"])
    task["_answer"] = await ctx.session.elicit_form("Go ahead?", schema)
    task.update(status="working", statusMessage="confirmed", lastUpdatedAt=_now())
    task["_answered"].set()


def _start(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    task_id = f"task-{len(TASKS) + 1}"
    now = _now()
    task: dict[str, Any] = {"taskId": task_id, "status": "working", "statusMessage": "starting",
                            "createdAt": now, "lastUpdatedAt": now, "ttl": 60_000,
                            "pollInterval": POLL_INTERVAL_MS}
    steps = int(arguments.get("steps", 3))
    if name == "research":
        work = _research(task, str(arguments.get("topic", "")), steps)
    elif name == "confirm":
        task.update(status="input_required", statusMessage="waiting for the user", _answered=asyncio.Event())
        work = _confirm(task, float(arguments.get("seconds", 0)))
    else:
        work = _lookup(arguments)

    async def run() -> None:
        try:
            task["_result"] = await work
            task.update(status="completed", statusMessage=None, lastUpdatedAt=_now())
        except asyncio.CancelledError:
            task.update(status="cancelled", statusMessage="cancelled by the client", lastUpdatedAt=_now())
        task["_done"].set()

    task["_done"] = asyncio.Event()
    task["_job"] = asyncio.get_running_loop().create_task(run())
    TASKS[task_id] = task
    return task


async def _lookup(arguments: dict[str, Any]) -> dict[str, Any]:
    text = f"found {arguments.get('key')}"
    return {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}, "isError": False}


class TaskMiddleware:
    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        method, params = ctx.method, dict(ctx.params or {})
        if method == "tools/call" and params.get("name") in ("research", "lookup", "confirm"):
            name, arguments = params["name"], dict(params.get("arguments") or {})
            if params.get("task") is None:
                if name != "lookup":
                    raise MCPError(-32601, f"Tool {name} requires task augmentation")
                LOG.append(f"plain {name}")
                return await _lookup(arguments)
            return {"task": _public(_start(name, arguments))}
        if method in ("tasks/get", "tasks/result", "tasks/cancel"):
            task = TASKS.get(str(params.get("taskId")))
            if task is None:
                raise MCPError(-32602, "unknown task")
            if method == "tasks/get":
                LOG.append(f"get {task['taskId']} {time.monotonic():.3f}")
                return _public(task)
            if method == "tasks/cancel":
                LOG.append(f"cancel {task['taskId']}")
                task["_job"].cancel()
                await task["_done"].wait()
                return _public(task)
            await _ask(ctx, task)
            await task["_done"].wait()
            if task["status"] != "completed":
                raise MCPError(-32603, f"task {task['status']}")
            meta = {"io.modelcontextprotocol/related-task": {"taskId": task["taskId"]}}
            return {**task["_result"], "_meta": meta}
        return await call_next(ctx)


class TasksServer(MCPServer):
    async def list_tools(self):  # type: ignore[no-untyped-def]
        support = {"research": "required", "lookup": "optional", "confirm": "required"}
        return [t.model_copy(update={"execution": ToolExecution(task_support=support[t.name])})
                if t.name in support else t for t in await super().list_tools()]


def build_server() -> MCPServer:
    server = TasksServer("tasks")

    @server.tool()
    def research(topic: str, steps: int = 3) -> str:
        """Research a topic (long-running: must be called as a task)."""
        raise AssertionError("served by the task middleware")

    @server.tool()
    def lookup(key: str) -> str:
        """Look a key up (may be called as a task)."""
        raise AssertionError("served by the task middleware")

    @server.tool()
    def confirm(seconds: float = 0) -> str:
        """Ask the user to confirm, then work `seconds` (must be called as a task)."""
        raise AssertionError("served by the task middleware")

    @server.tool()
    def task_log() -> str:
        """What the client asked of the task side so far."""
        return "\n".join(LOG) or "(nothing)"

    low = server._lowlevel_server
    low.middleware.append(TaskMiddleware())
    plain_capabilities = low.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> Any:  # declare tasks/* for tools/call
        capabilities = plain_capabilities(*args, **kwargs)
        capabilities.tasks = ServerTasksCapability(
            cancel=TasksCancelCapability(),
            requests=ServerTasksRequestsCapability(tools=TasksToolsCapability(call=TasksCallCapability())))
        return capabilities

    low.get_capabilities = get_capabilities  # type: ignore[method-assign]
    return server


if __name__ == "__main__":
    build_server().run("stdio")
