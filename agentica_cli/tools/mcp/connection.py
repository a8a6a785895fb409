"""One live connection to an MCP server, owned by one background task.

The SDK's transports and `Client` are anyio context managers: they must be entered and
exited in the same task. So a dedicated owner task enters them, lists the tools, then
serves tool calls that arrive over a queue (each in its own child task, so calls run
concurrently) until it is told to close or the connection dies. Callers never touch the
SDK objects; they get a future per call, bounded by a timeout, so a crashed or hung
server can make a call fail but can never hang the caller.
"""

from __future__ import annotations

import asyncio
import math
import signal
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeGuard, cast

import agentica_cli.tools.mcp.process as mcp_process
from agentica_cli.tools.mcp.call_clock import CallClock

Transport = Literal["stdio", "sse", "streamable-http"]

# Error codes of the SDK's JSON-RPC layer (mcp_types.CONNECTION_CLOSED / REQUEST_TIMEOUT).
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001

# How long a tools/list probe may take before a server whose call timed out counts as hung.
PROBE_TIMEOUT = 5.0
# How long close() waits for the owner task before it kills the server and moves on.
CLOSE_TIMEOUT = 8.0
# Margin on top of a call's own timeout before the caller stops waiting for the owner task.
OWNER_GRACE = 3.0
# How long an HTTP event stream may stay silent. A server that sends nothing while idle
# must not lose its session after a few minutes; a dead one is caught by the per-call
# timeout and the probe instead.
IDLE_STREAM_TIMEOUT = 24 * 3600.0
# Resources one session keeps fresh (subscribed to) at most.
MAX_WATCHED = 32


class McpServerError(Exception):
    """The MCP server could not be started, crashed, hung or is unavailable.

    `reason` is the short cause without the server's name (what `/mcp` shows).
    """

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or message


class McpToolError(Exception):
    """The MCP tool reported an error (an `isError` result or a JSON-RPC error for the call)."""


class McpConnectionLost(McpServerError):
    """The connection to the server ended (the process exited, the HTTP stream broke)."""


class McpCallTimeout(McpServerError):
    """The server did not answer a call within its timeout."""


@dataclass(frozen=True)
class ServerTarget:
    """Where an MCP server is: a command to run (stdio) or a URL (SSE / streamable HTTP)."""

    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # "auto" probes for the 2026 protocol; "legacy" is the 2025 handshake (where servers
    # send elicitation, sampling and roots requests and list_changed notifications).
    protocol: str = "auto"
    oauth: Any = field(default=None, compare=False)  # oauth.McpOAuth for a server behind OAuth

    def describe(self) -> str:
        if self.transport == "stdio":
            import shlex

            return shlex.join([self.command or "", *self.args])
        return f"{self.url} ({self.transport})"


@dataclass(eq=False)  # identity: requests live in a set
class _CallRequest:
    name: str
    arguments: dict[str, Any]
    timeout: float
    future: asyncio.Future[Any]
    scope: Any = None  # the anyio CancelScope of the task serving it, once started
    # "tool" (name: the tool), "probe", "relist", "list_prompts", "get_prompt" (name),
    # "list_resources", "read_resource" (name: the URI)
    kind: str = "tool"
    progress: Any = None  # async (progress, total, message) for a tool call
    task: bool = False  # call the tool as a task (tasks.py)
    status: Any = None  # (line) -> None: the task's status changes, for the call's line
    clock: CallClock = field(init=False)  # the timeout, stopped while the user is asked for input

    def __post_init__(self) -> None:
        self.clock = CallClock(self.timeout)


def _consume_outcome(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen: its waiter may have given up (timeout, cancel)
    before it was set, and asyncio would then log "exception was never retrieved"."""
    if not future.cancelled():
        future.exception()


if TYPE_CHECKING:
    class _ExceptionGroup(BaseException):
        """What _is_group checks and _leaf_exception reads of an exception group (builtin from
        3.11, the `exceptiongroup` backport's on 3.10): for the type checker only."""

        exceptions: tuple[BaseException, ...]


def _is_group(exc: BaseException) -> TypeGuard[_ExceptionGroup]:
    # BaseExceptionGroup is builtin from 3.11; on 3.10 anyio uses the `exceptiongroup` backport.
    return isinstance(getattr(exc, "exceptions", None), tuple) and type(exc).__name__.endswith("ExceptionGroup")


def _leaf_exception(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, skipping cancellations."""
    while _is_group(exc):
        assert isinstance(exc, BaseException)
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if not inner:
            return exc.exceptions[0]
        exc = inner[0]
    return exc


def is_connection_error(exc: BaseException) -> bool:
    """True for errors that mean the connection is gone, not that the call went wrong."""
    import anyio

    code = getattr(exc, "code", None)
    if type(exc).__name__ == "MCPError":
        return code == CONNECTION_CLOSED
    if isinstance(exc, OSError | EOFError | anyio.ClosedResourceError | anyio.BrokenResourceError):
        return True
    if isinstance(exc, anyio.EndOfStream):
        return True
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore")


def is_timeout_error(exc: BaseException) -> bool:
    if type(exc).__name__ == "MCPError":
        return getattr(exc, "code", None) == REQUEST_TIMEOUT
    return isinstance(exc, TimeoutError)


def quiet_sdk_logging() -> None:
    """The SDK logs transport errors (with tracebacks) that we already turn into tool errors;
    without a handler they would reach stderr through logging's last resort, over the UI.
    An application that configures logging still receives them (propagation stays on)."""
    import logging

    sdk_logger = logging.getLogger("mcp")
    if not any(isinstance(h, logging.NullHandler) for h in sdk_logger.handlers):
        sdk_logger.addHandler(logging.NullHandler())


class McpConnection:
    """A started MCP session: `open()`, then `call()` any number of times, then `close()`."""

    def __init__(
        self,
        target: ServerTarget,
        *,
        server_name: str,
        log_path: Path,
        connect_timeout: float,
        client_version: str = "0",
        handlers: Any = None,
        on_tools_changed: Any = None,
        on_resources_changed: Any = None,
        on_resource_updated: Any = None,
        watch: Any = (),
    ):
        self.target = target
        self.handlers = handlers  # client_features.McpClientHandlers
        self.on_tools_changed = on_tools_changed  # called with the new tool list after list_changed
        # Called with (resources, templates) after resources/list_changed, and with (uri, result)
        # when a watched resource was updated and read again.
        self.on_resources_changed = on_resources_changed
        self.on_resource_updated = on_resource_updated
        self.resources: list[Any] = []  # as listed at connect (or after list_changed)
        self.templates: list[Any] = []
        self.modern = False  # a 2026 connection: changes arrive on a subscriptions/listen stream
        # Resources read this session that the server should tell us about when they change.
        self._watched: dict[str, None] = dict.fromkeys(watch)
        self._subscribed: set[str] = set()  # 2025: resources/subscribe sent for these
        self._relisten = False  # the watch set changed: open a new listen stream
        self._listen_scope: Any = None  # anyio.CancelScope around reading the open listen stream
        self._watch_version = 0  # bumped when the watch set grows ...
        self._listen_version = -1  # ... and the version the open listen stream covers
        self._listen_acked: Any = None  # anyio.Event set whenever a new listen stream is acknowledged
        self.capabilities: Any = None  # the server's (prompts, resources, ...)
        self.has_resources = False  # it lists at least one resource or template
        # A tool list being read again after tools/list_changed: a call that caused it
        # returns once it is read, so the model's next request offers the new tools.
        # Likewise a watched resource being read again after it was updated: the call that
        # changed it returns with the fresh text already recorded.
        self._refreshes: set[asyncio.Future[Any]] = set()
        self.server_name = server_name
        self.log_path = log_path
        self.connect_timeout = connect_timeout
        self.client_version = client_version
        self.tools: list[Any] = []  # mcp_types.Tool, as listed at connect
        self.instructions: str | None = None
        self.server_info: Any = None
        self.pid: int | None = None  # the process we started (the guardian on Linux): what we stop
        self.server_pid: int | None = None  # the server program's own process
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lost_reason: str | None = None  # set once the connection is unusable
        self._marker = uuid.uuid4().hex
        self._requests: asyncio.Queue[_CallRequest | None] | None = None
        self._inflight: set[_CallRequest] = set()
        self._serving: set[_CallRequest] = set()  # requests the owner task is serving now
        self._owner: asyncio.Task[None] | None = None
        self._scope: Any = None
        self._log: TextIO | None = None
        self._log_offset = 0
        self._connect_timed_out = False
        self._opened = False
        self._http_error: str | None = None  # the last HTTP error status seen (streamable HTTP)

    # -- state -------------------------------------------------------------------------

    @property
    def dead(self) -> bool:
        """The session ended: closed, lost, or its server process exited."""
        if self.lost_reason is None and self.loop is not None and self.loop.is_closed():
            self.lost_reason = "the event loop it ran in has ended (e.g. Agent.run_sync returned)"
        if self.lost_reason is not None or self._owner is None or self._owner.done():
            return True
        for pid in (self.server_pid, self.pid):  # the server, then its guardian, which follows it
            if pid is not None and not mcp_process.is_running(pid):
                self.lost_reason = self.exit_reason()
                return True
        return False

    @property
    def alive(self) -> bool:
        """Usable for calls from the running event loop (a session cannot cross loops)."""
        if self.dead:
            return False
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    async def wait_exit(self, timeout: float = 0.5) -> bool:
        """After the connection closed: give a dying stdio server a moment to be reaped."""
        if self.pid is None:
            return False
        deadline = time.monotonic() + timeout
        while mcp_process.is_running(self.pid):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    def log_tail(self) -> str:
        return mcp_process.read_log_tail(self.log_path, self._log_offset)

    def exit_reason(self) -> str:
        where = f" (its stderr is in {self.log_path})" if self.target.transport == "stdio" else ""
        return f"the server process exited{where}"

    # -- lifecycle ---------------------------------------------------------------------

    async def open(self) -> None:
        """Start the server (stdio) or connect (HTTP), handshake and list its tools.

        Raises McpServerError with a message that says what went wrong.
        """
        quiet_sdk_logging()
        self.loop = asyncio.get_running_loop()
        self._requests = asyncio.Queue()
        opened: asyncio.Future[None] = self.loop.create_future()
        opened.add_done_callback(_consume_outcome)
        self._owner = self.loop.create_task(self._own(opened), name=f"mcp:{self.server_name}")
        try:
            # The owner's own watchdog enforces connect_timeout; this outer bound only
            # matters if the SDK's teardown itself were stuck.
            await asyncio.wait_for(asyncio.shield(opened), self.connect_timeout + CLOSE_TIMEOUT)
        except asyncio.TimeoutError:
            self.kill()
            self._owner.cancel()
            reason = f"did not start within {self.connect_timeout:g} s"
            raise McpServerError(self._describe_failure(reason), reason) from None
        except asyncio.CancelledError:
            await self.close()
            raise

    async def close(self) -> None:
        """Stop serving, end the session and stop the server; bounded in time."""
        owner = self._owner
        if owner is None or owner.done():
            self._release()
            return
        try:
            current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if self.loop is not None and current is not self.loop:
            # The session lives in another event loop (e.g. run_sync's helper thread):
            # it must be wound down there; if that loop no longer runs, only a kill is left.
            if self.loop.is_running():
                asyncio.run_coroutine_threadsafe(self.close(), self.loop)
            else:
                self.kill()
            return
        if not self._opened:
            self.abandon("closed while starting")  # nothing to wind down gracefully yet
        if self.lost_reason is None:
            self.lost_reason = "the connection was closed"
        if self._requests is not None:
            self._requests.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(owner), CLOSE_TIMEOUT)
        except asyncio.TimeoutError:
            self.kill()
            owner.cancel()
        except asyncio.CancelledError:
            self.kill()  # our caller is going away: do not leave the server behind
            owner.cancel()
            self._release()
            raise
        except Exception:
            pass
        self._release()

    def kill(self) -> None:
        """Kill the server process group at once (stdio); HTTP servers are not ours to kill."""
        if self.target.transport != "stdio":
            return
        pid = self.pid or mcp_process.find_child_pid(self._marker)
        if pid is not None:
            mcp_process.kill_process_group(pid)

    def abandon(self, reason: str) -> None:
        """Mark the connection unusable, kill a stdio server and wind the owner down."""
        if self.lost_reason is None:
            self.lost_reason = reason
        self.kill()
        if self._scope is not None:
            self._scope.cancel()

    # -- calls -------------------------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any], timeout: float, *, kind: str = "tool",
                   progress: Any = None, task: bool = False, status: Any = None) -> Any:
        """Call a tool (or another request, by `kind`); returns the SDK's result.

        Raises McpConnectionLost, McpCallTimeout, or the SDK's own error for the call.
        """
        if not self.alive or self._requests is None or self.loop is None:
            raise McpConnectionLost(self.lost_reason or "the connection is closed")
        self._http_error = None  # a status seen before this call says nothing about it
        request = _CallRequest(name, arguments, timeout, self.loop.create_future(), kind=kind, progress=progress,
                               task=task, status=status)
        request.future.add_done_callback(_consume_outcome)
        self._inflight.add(request)
        self._requests.put_nowait(request)
        try:
            result = await request.clock.wait(request.future, OWNER_GRACE)
        except TimeoutError:
            raise McpCallTimeout(f"no answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            # The agent cancelled the call (e.g. Ctrl-C): cancel it on the server side too.
            if request.scope is not None:
                request.scope.cancel()
            elif not request.future.done():
                request.future.cancel()
            raise
        finally:
            self._inflight.discard(request)
        if self._listen_acked is not None:
            # 2026: a change event that arrived with this result is read by the listen task;
            # let it run first, so the refresh it starts is waited for below.
            for _ in range(3):
                await asyncio.sleep(0)
        pending = {f for f in self._refreshes if not f.done()}
        if pending:
            await asyncio.wait(pending, timeout=PROBE_TIMEOUT)
        return result

    async def probe(self, timeout: float = PROBE_TIMEOUT) -> bool:
        """True if the server still answers a cheap request (tools/list) within `timeout`."""
        if not self.alive or self._requests is None or self.loop is None:
            return False
        request = _CallRequest("", {}, timeout, self.loop.create_future(), kind="probe")
        request.future.add_done_callback(_consume_outcome)
        self._inflight.add(request)
        self._requests.put_nowait(request)
        try:
            await asyncio.wait_for(asyncio.shield(request.future), timeout + OWNER_GRACE)
            return True
        except Exception:
            return False
        finally:
            self._inflight.discard(request)

    @contextmanager
    def waiting_on_user(self) -> Iterator[None]:
        """While agentica asks the user for this server (a form, a sampling request): the
        timeouts of the calls in flight stop. Which call a 2025 server's request belongs to is
        not said, so all of this server's calls wait; calls of other servers run on."""
        paused = [request.clock for request in self._serving]
        for clock in paused:
            clock.pause()
        try:
            yield
        finally:
            for clock in paused:
                clock.resume()

    # -- the owner task ----------------------------------------------------------------

    async def _own(self, opened: asyncio.Future[None]) -> None:
        import anyio

        loop = asyncio.get_running_loop()
        self._scope = scope = anyio.CancelScope()
        watchdog = loop.call_later(self.connect_timeout, self._on_connect_timeout)
        error: BaseException | None = None
        try:
            with scope:
                await self._session(opened, watchdog)
        except Exception as exc:  # the SDK raised: startup failed or the connection broke
            error = _leaf_exception(exc)
        except BaseException as group:
            if not _is_group(group):
                raise  # cancellation of the owner task itself (e.g. the event loop is closing)
            error = _leaf_exception(group)
        finally:
            watchdog.cancel()
            self._finish(opened, error)

    async def _session(self, opened: asyncio.Future[None], watchdog: asyncio.TimerHandle) -> None:
        from contextlib import AsyncExitStack

        import anyio
        from mcp.client.client import Client
        from mcp_types import Implementation

        from agentica_cli.tools.mcp.client_features import client_callbacks

        async with AsyncExitStack() as stack:
            transport = self._transport(stack)
            client = Client(
                transport,
                read_timeout_seconds=self.connect_timeout,
                client_info=Implementation(name="agentica", version=self.client_version),
                mode=self.target.protocol,  # type: ignore[arg-type]
                message_handler=self._on_message,
                **client_callbacks(self.server_name, self.handlers, self.waiting_on_user),
            )
            await stack.enter_async_context(client)
            # Unwound first: a session that ends any other way than close() (the event loop
            # shutting down with the tool still open, a broken connection) stops the server
            # now instead of waiting out the SDK's 2 s stdin-EOF grace for a busy server.
            stack.push(self._stop_server_unless_closed)
            tools: list[Any] = []
            cursor: str | None = None
            for _ in range(100):  # a paginator that never ends cannot hang the connect
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            watchdog.cancel()
            self.tools = tools
            self.instructions = client.instructions
            self.server_info = client.server_info
            try:
                self.capabilities = client.server_capabilities
            except Exception:
                self.capabilities = None
            # Resource tools are offered only when there is something to read.
            if getattr(self.capabilities, "resources", None) is not None:
                try:
                    self.resources = await self._list_all(client.list_resources, "resources")
                    self.templates = await self._list_all(client.list_resource_templates, "resource_templates")
                    self.has_resources = bool(self.resources or self.templates)
                except Exception:
                    self.has_resources = False
            from mcp_types.version import MODERN_PROTOCOL_VERSIONS

            self.modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
            # The SDK's `server/discover` probe of a 2025 HTTP server answers 400: that is
            # not an error of anything that comes later.
            self._http_error = None
            if self.target.transport == "stdio":
                self.pid = mcp_process.find_child_pid(self._marker)
                if self.pid is not None:
                    mcp_process.track(self.pid)
                    # Under the guardian (Linux) the server is its child; else it is ours.
                    self.server_pid = mcp_process.find_child_pid(self._marker, self.pid) or self.pid
            self._opened = True
            if not opened.done():
                opened.set_result(None)
            assert self._requests is not None
            async with anyio.create_task_group() as tasks:
                if self.modern:
                    tasks.start_soon(self._listen, client)
                elif self._watched and self.can_subscribe:
                    tasks.start_soon(self._subscribe_all, client)
                while True:
                    request = await self._requests.get()
                    if request is None:
                        break
                    tasks.start_soon(self._serve, client, request)
                tasks.cancel_scope.cancel()

    def _stop_server_unless_closed(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        """Exit-stack hook: SIGTERM a stdio server's group unless the session ended by close()."""
        if exc_type is not None and self.target.transport == "stdio":
            pid = self.pid or mcp_process.find_child_pid(self._marker)
            if pid is not None and mcp_process.is_running(pid):
                mcp_process.kill_process_group(pid, signal.SIGTERM)
        return False  # never swallow the exception

    async def _serve(self, client: Any, request: _CallRequest) -> None:
        import anyio

        with anyio.CancelScope() as scope:
            request.scope = scope
            if request.future.done():  # the caller gave up before we started
                return
            self._serving.add(request)
            try:
                # The call's clock bounds it (call_clock.py): it stops while the user is asked
                # for input, which the SDK's own read timeout would not, so that one is off.
                with request.clock.fail_after():
                    if request.kind == "tool" and request.task:
                        from agentica_cli.tools.mcp.tasks import call_tool_as_task

                        result = await call_tool_as_task(client.session, request.name, request.arguments,
                                                         clock=request.clock, status=request.status)
                    elif request.kind == "tool":
                        result = await client.call_tool(
                            request.name, request.arguments, read_timeout_seconds=math.inf,
                            progress_callback=request.progress,
                        )
                    else:
                        result = await self._other_request(client, request)
            except Exception as exc:
                if not request.future.done():
                    request.future.set_exception(exc)
            else:
                if not request.future.done():
                    request.future.set_result(result)
            finally:
                self._serving.discard(request)
        if not request.future.done():
            request.future.cancel()

    async def _other_request(self, client: Any, request: _CallRequest) -> Any:
        import anyio

        kind = request.kind
        if kind == "probe":  # a liveness probe: any answer within the time will do
            return await client.list_tools(cache_mode="bypass")
        if kind == "relist":
            tools = await self._list_all(client.list_tools)
            self.tools = tools
            if self.on_tools_changed is not None:
                self.on_tools_changed(tools)
            return tools
        if kind == "list_prompts":
            return await self._list_all(client.list_prompts, "prompts")
        if kind == "get_prompt":
            return await client.get_prompt(request.name, request.arguments)
        if kind == "list_resources":
            resources = await self._list_all(client.list_resources, "resources")
            templates = await self._list_all(client.list_resource_templates, "resource_templates")
            return resources, templates
        if kind == "read_resource":
            result = await client.read_resource(request.name, cache_mode="bypass")
            self.watch(request.name)
            if not self.modern and request.name in self._watched:
                await self._subscribe(client, request.name)
            elif self.modern and self._listen_acked is not None:
                # An update right after this read must not be missed: wait (briefly) for the
                # listen stream that includes it.
                with anyio.move_on_after(PROBE_TIMEOUT / 2):
                    while self._listen_version < self._watch_version and self._listen_acked is not None:
                        await self._listen_acked.wait()
            return result
        if kind == "refresh":  # a watched resource was updated: read it again
            result = await client.read_resource(request.name, cache_mode="bypass")
            if self.on_resource_updated is not None:
                self.on_resource_updated(request.name, result)
            return result
        if kind == "relist_resources":
            self.resources = await self._list_all(client.list_resources, "resources")
            self.templates = await self._list_all(client.list_resource_templates, "resource_templates")
            self.has_resources = bool(self.resources or self.templates)
            if self.on_resources_changed is not None:
                self.on_resources_changed(self.resources, self.templates)
            return self.resources
        raise ValueError(f"unknown MCP request kind {kind!r}")

    @staticmethod
    async def _list_all(method: Any, attr: str = "tools") -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends cannot hang us
            page = await method(cursor=cursor, cache_mode="bypass")  # fresh: lists change
            items.extend(getattr(page, attr))
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    # -- change notifications and resource subscriptions ------------------------------

    @property
    def can_subscribe(self) -> bool:
        resources = getattr(self.capabilities, "resources", None)
        return bool(resources is not None and getattr(resources, "subscribe", False))

    def watch(self, uri: str) -> None:
        """Keep `uri` fresh: subscribe to its updates (when the server offers subscriptions)."""
        if uri in self._watched or not self.can_subscribe or len(self._watched) >= MAX_WATCHED:
            return
        self._watched[uri] = None
        self._watch_version += 1
        if self.modern:
            # A listen stream's filter is fixed: end the open one, the listen loop opens one that
            # includes it (or, if one is being opened now, opens another right after).
            self._relisten = True
            if self._listen_scope is not None:
                self._listen_scope.cancel()

    async def _subscribe(self, client: Any, uri: str) -> None:
        """2025 servers: resources/subscribe, once per URI and session (a refusal is not an error
        of the read that asked for it)."""
        import warnings

        if uri in self._subscribed:
            return
        self._subscribed.add(uri)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated as of 2026; it is how 2025 servers work
                await client.subscribe_resource(uri)
        except Exception:
            pass

    async def _subscribe_all(self, client: Any) -> None:
        for uri in list(self._watched):  # watched in an earlier session of this tool (a restart)
            await self._subscribe(client, uri)

    async def _listen(self, client: Any) -> None:
        """2026 servers announce changes only on a `subscriptions/listen` stream: keep one open
        for list changes and the watched resources, and open a new one when the watch set grows."""
        import anyio

        tools_cap = getattr(self.capabilities, "tools", None)
        resources_cap = getattr(self.capabilities, "resources", None)
        tools_changed = bool(tools_cap is not None and getattr(tools_cap, "list_changed", False))
        resources_changed = bool(resources_cap is not None and getattr(resources_cap, "list_changed", False))
        if not (tools_changed or resources_changed or self.can_subscribe):
            return
        self._listen_acked = anyio.Event()
        try:
            await self._listen_loop(client, tools_changed, resources_changed)
        finally:  # no stream any more: a read must not wait for one
            acked, self._listen_acked = self._listen_acked, None
            acked.set()

    async def _listen_loop(self, client: Any, tools_changed: bool, resources_changed: bool) -> None:
        import anyio

        failures = 0
        while failures < 3:  # a server that keeps dropping the stream is not worth a busy loop
            self._relisten = False
            version, watched = self._watch_version, list(self._watched)
            try:
                async with client.listen(tools_list_changed=tools_changed, resources_list_changed=resources_changed,
                                         resource_subscriptions=watched) as stream:
                    self._listen_version = version
                    acked, self._listen_acked = self._listen_acked, anyio.Event()
                    if acked is not None:
                        acked.set()
                    # watch() cancels this scope itself. No helper task waits to do it: a task
                    # spawned here that the event loop's shutdown cancels before its first step
                    # leaves its coroutine "never awaited" (a RuntimeWarning at exit).
                    with anyio.CancelScope() as scope:
                        self._listen_scope = scope
                        if self._relisten:  # the watch set grew while this stream was being opened
                            scope.cancel()
                        try:
                            async for event in stream:
                                self._on_event(type(event).__name__, getattr(event, "uri", None))
                        finally:
                            self._listen_scope = None
                    failures = 0
                    if not self._relisten:
                        return  # the server closed the stream gracefully: nothing more will come
            except Exception:
                failures += 1
                await anyio.sleep(0.2 * failures)

    def _on_event(self, kind: str, uri: str | None = None) -> None:
        """A change announced by the server (a 2025 notification or a 2026 stream event): read
        what changed again in its own request, so the SDK's receive loop never waits on us."""
        if self._requests is None or self.loop is None:
            return
        if kind == "ToolsListChanged":
            request = _CallRequest("", {}, PROBE_TIMEOUT * 2, self.loop.create_future(), kind="relist")
        elif kind == "ResourcesListChanged":
            request = _CallRequest("", {}, PROBE_TIMEOUT * 2, self.loop.create_future(), kind="relist_resources")
        elif kind == "ResourceUpdated" and uri is not None and uri in self._watched:
            request = _CallRequest(uri, {}, PROBE_TIMEOUT * 2, self.loop.create_future(), kind="refresh")
        else:
            return
        request.future.add_done_callback(_consume_outcome)
        request.future.add_done_callback(self._refreshes.discard)
        self._refreshes.add(request.future)
        self._requests.put_nowait(request)

    async def _on_message(self, message: Any) -> None:
        """2025 server notifications: list changes and updates of subscribed resources."""
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed":
            self._on_event("ToolsListChanged")
        elif method == "notifications/resources/list_changed":
            self._on_event("ResourcesListChanged")
        elif method == "notifications/resources/updated":
            params = getattr(message, "params", None)
            self._on_event("ResourceUpdated", str(getattr(params, "uri", "")))

    def _transport(self, stack: Any) -> Any:
        target = self.target
        if target.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            from agentica_cli.private_files import open_private
            from agentica_cli.tools.mcp.stdio_lines import install

            install()  # the server's output read in whole lines: linear in a long message's size

            # 0600 in a 0700 folder; cast: open_private's mode is a run-time str, so it returns IO[Any],
            # and "a" with an encoding is a text stream (the SDK's errlog wants a TextIO)
            self._log = cast(TextIO, open_private(self.log_path, "a", encoding="utf-8", errors="replace"))
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            self._log.write(f"\n--- {stamp} starting MCP server '{self.server_name}': {target.describe()}\n")
            self._log.flush()
            self._log_offset = self._log.tell()
            env = mcp_process.minimal_environment(target.env, marker=self._marker)
            command, args = mcp_process.server_command(target.command or "", target.args, env, target.cwd)
            params = StdioServerParameters(command=command, args=args, env=env, cwd=target.cwd)
            return stdio_client(params, errlog=self._log)
        headers = dict(target.headers)
        if target.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(
                target.url or "",
                auth=target.oauth.provider() if target.oauth is not None else None,
                headers=headers or None,
                timeout=self.connect_timeout,
                sse_read_timeout=IDLE_STREAM_TIMEOUT,
            )
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def note_http_error(response: Any) -> None:
            # The SDK turns a 401/403/500 into a generic "error response"; keep the status.
            if response.status_code >= 400:
                self._http_error = f"HTTP {response.status_code} {response.reason_phrase}".strip()

        http = httpx2.AsyncClient(
            auth=target.oauth.provider() if target.oauth is not None else None,
            headers=headers or None,
            timeout=httpx2.Timeout(self.connect_timeout, read=IDLE_STREAM_TIMEOUT),
            event_hooks={"response": [note_http_error]},
        )
        # Entered on our stack so that it is closed with the session.
        stack.push_async_callback(http.aclose)
        return streamable_http_client(target.url or "", http_client=http)

    def _on_connect_timeout(self) -> None:
        self._connect_timed_out = True
        self.kill()  # a fast kill first, so the SDK's teardown need not wait out its grace periods
        if self._scope is not None:
            self._scope.cancel()

    def _finish(self, opened: asyncio.Future[None], error: BaseException | None) -> None:
        """The owner is done: record why, fail whatever still waits, forget the process."""
        if self._connect_timed_out:
            reason = f"did not start within {self.connect_timeout:g} s"
        elif error is not None:
            reason = self._error_text(error)
            if self._opened and self.target.transport != "stdio":
                reason = f"the connection was lost ({reason})"
        elif self.pid is not None and not mcp_process.is_running(self.pid) and self.lost_reason is None:
            reason = self.exit_reason()
        else:
            reason = self.lost_reason or "the connection was closed"
        if self.lost_reason is None:
            self.lost_reason = reason
        if not opened.done():
            opened.set_exception(McpServerError(self._describe_failure(reason), reason))
        for request in list(self._inflight):
            if not request.future.done():
                request.future.set_exception(McpConnectionLost(self.lost_reason))
        if self._requests is not None:
            while not self._requests.empty():
                pending = self._requests.get_nowait()
                if pending is not None and not pending.future.done():
                    pending.future.set_exception(McpConnectionLost(self.lost_reason))
        self._release()

    def _release(self) -> None:
        if self.target.oauth is not None:
            self.target.oauth.close()  # its redirect listener
        if self.pid is not None:
            mcp_process.untrack(self.pid)
        if self._log is not None:
            try:
                self._log.close()
            except OSError:
                pass
            self._log = None

    def _error_text(self, error: BaseException) -> str:
        if isinstance(error, FileNotFoundError):
            return f"command not found: {self.target.command}"
        if isinstance(error, PermissionError):
            return f"cannot run {self.target.command}: permission denied"
        message = str(error).strip() or type(error).__name__
        if self.target.transport != "stdio":
            message = message.splitlines()[0]  # httpx appends a documentation link
        if type(error).__name__ == "MCPError" and getattr(error, "code", None) == CONNECTION_CLOSED:
            message = "the connection closed"
            if self.target.transport == "stdio":
                pid = self.pid or mcp_process.find_child_pid(self._marker)
                if pid is None or not mcp_process.is_running(pid):
                    message = "the server process exited"
        if self.target.transport == "stdio":
            tail = self.log_tail()
            if tail:
                message += f"; its last stderr output:\n{tail}"
        elif self._http_error and self._http_error not in message:
            message += f" ({self._http_error})"
        return message

    def _describe_failure(self, reason: str) -> str:
        where = self.target.describe()
        text = f"MCP server '{self.server_name}' ({where}) failed to start: {reason}"
        if self.target.transport == "stdio":
            text += f"\n(server log: {self.log_path})"
        return text
