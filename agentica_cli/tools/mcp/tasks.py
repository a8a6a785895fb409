"""Task-augmented tool calls (MCP 2025-11-25 "tasks").

A tool whose `execution.taskSupport` is "required" must be called as a task: `tools/call`
with a `task` field answers at once with a task id; the client polls `tasks/get` (no faster
than the server's `pollInterval`), showing the task's status on the call's line, and once the
task is finished (or needs input) fetches the tool's result with `tasks/result`. A call that
is cancelled (the user interrupts, or its timeout passes) sends `tasks/cancel`, so the server
stops the work.

The SDK (2.x) has the types of these messages but no client for them, so the requests go
through the session's own dispatcher, stamped like the session's requests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentica_cli.tools.mcp.call_clock import CallClock

# How long the server should keep a task's result after it was created (milliseconds).
TASK_TTL_MS = 30 * 60 * 1000
# Polling: the server's pollInterval, but never faster than MIN_POLL nor slower than MAX_POLL
# (a server asking for minutes between polls would leave the user staring at a still line).
DEFAULT_POLL = 1.0
MIN_POLL = 0.05
MAX_POLL = 10.0
# One tasks/get or tasks/cancel request; tasks/result may block until the task ends.
REQUEST_TIMEOUT = 30.0
CANCEL_TIMEOUT = 3.0
TERMINAL = ("completed", "failed", "cancelled")


def server_runs_tool_tasks(capabilities: Any) -> bool:
    """The server declares task-augmented tools/call (capabilities.tasks.requests.tools.call);
    without it, the spec says clients must not send task-augmented calls."""
    tasks = getattr(capabilities, "tasks", None)
    requests = getattr(tasks, "requests", None)
    tools = getattr(requests, "tools", None)
    return getattr(tools, "call", None) is not None


async def _request(session: Any, method: str, params: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    data: dict[str, Any] = {"method": method, "params": params}
    opts: dict[str, Any] = {}
    if timeout is not None:
        opts["timeout"] = timeout
    session._stamp(data, opts)  # the protocol's _meta / headers, as the session's own requests get
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)


def _status_line(task: dict[str, Any]) -> str:
    message = task.get("statusMessage")
    return f"[task {task.get('status', '?')}]{' ' + str(message) if message else ''}\n"


async def call_tool_as_task(
    session: Any,
    name: str,
    arguments: dict[str, Any],
    *,
    clock: CallClock,
    status: Callable[[str], None] | None = None,
) -> Any:
    """Run tool `name` as a task; returns its CallToolResult. `clock` is the call's timeout,
    stopped while the user answers the task's questions (its running out also cancels this
    coroutine from outside, which sends tasks/cancel); `status` gets a line whenever the
    task's status or message changes."""
    import anyio
    import mcp_types as types

    created = await _request(session, "tools/call",
                             {"name": name, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}},
                             max(0.1, min(clock.remaining(), REQUEST_TIMEOUT)))
    if "task" not in created:  # the server ran it as a plain call after all
        return types.CallToolResult.model_validate(created, by_name=False)
    task: dict[str, Any] = created["task"]
    task_id = str(task["taskId"])
    shown = ""
    try:
        while True:
            line = _status_line(task)
            if status is not None and line != shown:
                status(line)
            shown = line
            if task.get("status") in TERMINAL or task.get("status") == "input_required":
                break  # input_required: tasks/result carries the server's questions (elicitation)
            if clock.expired:
                raise TimeoutError(f"the task {task_id} did not finish in time")
            interval = task.get("pollInterval")
            delay = DEFAULT_POLL if interval is None else float(interval) / 1000
            await anyio.sleep(min(max(delay, MIN_POLL), MAX_POLL, max(0.0, clock.remaining())))
            task = {**task, **await _request(session, "tasks/get", {"taskId": task_id}, REQUEST_TIMEOUT)}
        if task.get("status") == "cancelled":
            message = task.get("statusMessage")
            return types.CallToolResult(content=[types.TextContent(
                type="text", text=f"The server cancelled the task{': ' + str(message) if message else ''}.")],
                is_error=True)
        # Blocks until the task ends, after any input it asks for: the user's time must not
        # count, so no read timeout of the SDK's; the call's clock bounds it from outside.
        raw = await _request(session, "tasks/result", {"taskId": task_id}, None)
    except BaseException:
        if task.get("status") not in TERMINAL:
            # Cancelled (Ctrl-C) or out of time: tell the server to stop the work, briefly.
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT):
                try:
                    await _request(session, "tasks/cancel", {"taskId": task_id}, CANCEL_TIMEOUT)
                except Exception:
                    pass
        raise
    return types.CallToolResult.model_validate(raw, by_name=False)
