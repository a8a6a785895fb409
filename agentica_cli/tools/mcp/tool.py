"""McpTool: the tools of an MCP server (stdio, SSE or streamable HTTP) as agent Functions.

    async with McpTool("python my_server.py") as mcp:                 # stdio
        agent = Agent(model=..., tools=[mcp])
    async with McpTool(url="http://127.0.0.1:8000/mcp") as mcp: ...   # streamable HTTP
    async with McpTool(url="http://127.0.0.1:8000/sse") as mcp: ...   # SSE

One session per server is opened at `connect()` and kept for the tool's life; the
server's tool list read then becomes `functions`, named `<prefix>__<tool>` with the
server's inputSchema as their parameters. Built on the official `mcp` SDK, imported only
when a server is connected (it is slow to import).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlparse

from agentica_cli.tools.base import Function, Tool
from agentica_cli.tools.mcp.connection import (
    PROBE_TIMEOUT,
    McpCallTimeout,
    McpConnection,
    McpConnectionLost,
    McpServerError,
    McpToolError,
    ServerTarget,
    Transport,
    is_connection_error,
    is_timeout_error,
)

if TYPE_CHECKING:
    from agentica_cli.sandbox import Sandbox

__all__ = ["McpServerError", "McpTool", "McpToolError"]

McpState = Literal["idle", "starting", "ready", "failed", "closed"]

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 120.0
NAME_SEPARATOR = "__"
MAX_FUNCTION_NAME = 64  # what OpenAI-compatible APIs accept
MAX_INSTRUCTIONS = 4000
_TRANSPORT_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "sse": "sse",
    "streamable-http": "streamable-http",
    "streamable_http": "streamable-http",
    "http": "streamable-http",
}


def safe_name(text: str) -> str:
    """`text` reduced to what function names may contain: letters, digits, _ and -."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "mcp"


def transport_for_url(url: str) -> Transport:
    """SSE when the URL's path ends in /sse (the SDK's default SSE endpoint), else streamable HTTP."""
    path = urlparse(url).path.rstrip("/")
    return "sse" if path.endswith("/sse") else "streamable-http"


def default_server_name(target: ServerTarget) -> str:
    """A short name for prefixes: the script, module or package the command runs (its first
    argument that is not an option, e.g. `server` for `python server.py --port 1`), or the
    URL's host."""
    if target.transport == "stdio":
        args = list(target.args)
        if "-m" in args and args.index("-m") + 1 < len(args):
            word = args[args.index("-m") + 1]
        else:
            word = next((a for a in args if not a.startswith("-")), target.command or "mcp")
        base = re.split(r"[\\/]", word.rstrip("/\\"))[-1]
        base = base.split("@")[0] or base  # npm package@version
        return safe_name(re.sub(r"\.(py|js|mjs|cjs|ts|exe)$", "", base))
    host = urlparse(target.url or "").hostname or "mcp"
    return safe_name(host)


def flags_from_annotations(annotations: Any) -> dict[str, bool]:
    """MCP tool hints -> our flags: read-only tools run in parallel without asking;
    tools that may destroy (the spec's default when no hint is given) ask first."""
    read_only = bool(annotations is not None and annotations.read_only_hint)
    if read_only:
        return {"is_read_only": True, "concurrency_safe": True, "is_destructive": False}
    destructive_hint = None if annotations is None else annotations.destructive_hint
    return {"is_read_only": False, "concurrency_safe": False, "is_destructive": destructive_hint is not False}


def parameters_from_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The server's inputSchema as our parameters; only fills in what chat APIs require."""
    params = dict(schema or {})
    params.setdefault("type", "object")
    if params.get("type") == "object":
        params.setdefault("properties", {})
    return params


CONTEXT_PARAM = "_agentica_tool_context"  # how the loop hands an MCP entrypoint its ToolContext


def _task_support(mcp_tool: Any) -> str | None:
    execution = getattr(mcp_tool, "execution", None)
    if execution is None:
        extra = getattr(mcp_tool, "model_extra", None) or {}
        execution = extra.get("execution")
    if isinstance(execution, Mapping):
        return execution.get("taskSupport") or execution.get("task_support")
    return getattr(execution, "task_support", None)


def _has(capabilities: Any, name: str) -> bool:
    return capabilities is not None and getattr(capabilities, name, None) is not None


def _progress_reporter(output: Callable[[str], None] | None) -> Any:
    """The SDK's progress callback, shown as one line on the running call."""
    if output is None:
        return None

    async def report(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        output(f"[progress {done}]{' ' + message if message else ''}\n")

    return report


def import_sdk() -> None:
    """Import the SDK's client modules (~0.6 s): call it off the event loop, e.g. in a thread."""
    import mcp.client.client
    import mcp.client.sse
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


_import_sdk = import_sdk  # the name the CLI's preloader used first


class McpTool(Tool):
    """The tools of one MCP server, exposed as Functions once connected.

    Args:
        command: the server command for stdio, e.g. "python server.py" (split like a shell
            would when `args` is not given) or just the executable with `args=[...]`.
        args, env, cwd: stdio only. `env` is added to a minimal environment (PATH, HOME,
            LANG, ...); our own variables, API keys included, are not passed on.
        url: an SSE (…/sse) or streamable HTTP (…/mcp) endpoint; `transport=` overrides the guess.
        headers: HTTP headers sent with every request (e.g. Authorization).
        name: the server's name; also the default tool name prefix (`name__tool`).
        tool_name_prefix: the prefix for function names; "" for the server's own names.
        include_tools / exclude_tools: server tool names to keep / to drop.
        connect_timeout: seconds to start, handshake and list tools.
        timeout: seconds a single tool call may take.
        log_file: where a stdio server's stderr goes (default ~/.agentica/logs/mcp/<name>.log).
        protocol: "auto" (probe for the 2026 protocol, else the 2025 handshake) or "legacy"
            (the 2025 handshake at once; servers then send elicitation, sampling and roots
            requests and list_changed notifications).
        oauth: True (or an oauth.McpOAuth) for an HTTP server behind OAuth: discovery, dynamic
            registration, PKCE login through the browser, tokens kept 0600 in ~/.agentica/mcp-auth.
        handlers: McpClientHandlers: roots, elicitation and sampling (client_features).
        resource_tools: offer the model `<prefix>__list_resources` / `__read_resource` when
            the server has resources.
    """

    def __init__(
        self,
        command: str | None = None,
        *,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str | None = None,
        transport: str | None = None,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        tool_name_prefix: str | None = None,
        include_tools: Iterable[str] | None = None,
        exclude_tools: Iterable[str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        log_file: str | os.PathLike[str] | None = None,
        protocol: str = "auto",
        oauth: Any = None,
        handlers: Any = None,
        resource_tools: bool = True,
    ):
        self.target = self._build_target(command, args, env, cwd, url, transport, headers)
        if protocol != "auto" or oauth:
            import dataclasses

            if oauth and self.target.transport == "stdio":
                raise ValueError("oauth= applies to url= servers (SSE / streamable HTTP)")
            if oauth is True:  # tokens under ~/.agentica/mcp-auth, the login URL printed / opened
                from agentica_cli.tools.mcp.oauth import McpOAuth

                oauth = McpOAuth(safe_name(name) if name else default_server_name(self.target), self.target.url or "")
            self.target = dataclasses.replace(self.target, protocol=protocol, oauth=oauth or None)
        server_name = safe_name(name) if name else default_server_name(self.target)
        super().__init__(name=server_name, description=f"Tools of the MCP server '{server_name}'")
        self.tool_name_prefix = server_name if tool_name_prefix is None else tool_name_prefix
        self.include_tools = set(include_tools) if include_tools is not None else None
        self.exclude_tools = set(exclude_tools or ())
        self.connect_timeout = float(connect_timeout)
        self.timeout = float(timeout)
        if log_file is not None:
            self.log_path = Path(log_file).expanduser()
        else:
            from agentica_cli.tools.mcp.process import default_log_dir

            self.log_path = default_log_dir() / f"{server_name}.log"
        self._state: McpState = "idle"
        self.error: str | None = None  # why the server is failed (or was, before a restart)
        # Called with this tool after every state change (the CLI's server set listens).
        self.listeners: list[Callable[[McpTool], None]] = []
        self.mcp_tools: list[Any] = []  # the server's tool list (mcp_types.Tool), filtered
        self.mcp_tools_unfiltered: list[Any] = []
        self.instructions: str | None = None
        self.sandbox: Sandbox | None = None  # a sandboxed server's (servers.py): keeps its temp folder alive
        self.handlers = handlers  # client_features.McpClientHandlers (the host may set it later)
        self.resource_tools = resource_tools
        # Server tools not offered, with why (e.g. they need task-augmented calls): /mcp shows them.
        self.left_out: dict[str, str] = {}
        self._task_tools: set[str] = set()  # server tools that require task-augmented calls
        self.task_functions: set[str] = set()  # their function names (as offered): /mcp marks them
        self.capabilities: Any = None
        self.has_resources = False
        self.resource_uris: list[str] = []  # the server's resources, for @server:uri completion
        # Resources read this session (uri -> the text last seen) and the ones the server has
        # updated since, with their new text, until the next model request takes them.
        self._watched: dict[str, str] = {}
        self._updates: dict[str, str] = {}
        self.restarts = 0  # successful automatic restarts
        self.ever_ready = False  # a later failure is then a crash or hang, not a failed start
        self.managed = False  # True when a McpServerSet starts and stops this server
        self._connection: McpConnection | None = None
        self._starting: McpConnection | None = None  # a connect in progress, for close()
        self._restart_allowed = False  # one automatic restart after a crash or hang
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    @staticmethod
    def _build_target(
        command: str | None,
        args: Sequence[str] | None,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        url: str | None,
        transport: str | None,
        headers: Mapping[str, str] | None,
    ) -> ServerTarget:
        if (command is None) == (url is None):
            raise ValueError("McpTool needs exactly one of a command (stdio) or url= (SSE / streamable HTTP)")
        kind: Transport | None = None
        if transport is not None:
            kind = _TRANSPORT_ALIASES.get(transport.lower())
            if kind is None:
                raise ValueError(f"unknown MCP transport {transport!r}: use stdio, sse or streamable-http")
        if command is not None:
            if kind not in (None, "stdio"):
                raise ValueError(f"transport {transport!r} needs url=, not a command")
            words = list(args) if args is not None else shlex.split(command)
            program = command if args is not None else (words.pop(0) if words else "")
            if not program.strip():
                raise ValueError("McpTool: empty command")
            return ServerTarget(
                "stdio",
                command=program,
                args=tuple(str(a) for a in words),
                env=dict(env or {}),
                cwd=os.fspath(cwd) if cwd is not None else None,
            )
        assert url is not None
        if kind == "stdio":
            raise ValueError("transport 'stdio' needs a command, not url=")
        if urlparse(url).scheme not in ("http", "https"):
            raise ValueError(f"MCP url must start with http:// or https://, got {url!r}")
        if args or env or cwd:
            raise ValueError("args=, env= and cwd= apply to stdio servers only")
        return ServerTarget(kind or transport_for_url(url), url=url, headers=dict(headers or {}))

    # -- properties ----------------------------------------------------------------------

    @property
    def server_name(self) -> str:
        return self.name

    @property
    def transport(self) -> Transport:
        return self.target.transport

    @property
    def state(self) -> McpState:
        """idle, starting, ready, failed or closed. A ready server whose session has died
        (it crashed, or the event loop it lived in ended, as after `Agent.run_sync`) reads
        as failed: the next connect() or call starts it again."""
        connection = self._connection
        if self._state == "ready" and connection is not None and connection.dead:
            self._set_state("failed", connection.lost_reason)
        return self._state

    @property
    def status(self) -> McpState:
        return self.state

    @property
    def restart_pending(self) -> bool:
        """The server stopped (crashed, hung, or its HTTP connection broke) after it had
        started, and its next call restarts it: its tools are still worth offering."""
        return self.status == "failed" and self._restart_allowed and bool(self.functions)

    @property
    def pid(self) -> int | None:
        """The stdio server's process id while connected (None for HTTP or when unknown)."""
        connection = self._connection
        if connection is None or self.state != "ready":
            return None
        return connection.server_pid or connection.pid

    def describe_target(self) -> str:
        return self.target.describe()

    def get_system_prompt(self) -> str | None:
        if not self.instructions or not self.functions:
            return None
        text = self.instructions.strip()[:MAX_INSTRUCTIONS]
        return f"## MCP server '{self.name}' (tools named {self.tool_name_prefix or ''}{NAME_SEPARATOR}...)\n{text}"

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> McpTool:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self, *, force: bool = False) -> McpTool:
        """Start/connect the server and read its tools; raises McpServerError on failure.

        Calling it again on a connected tool is a no-op; on a failed or closed one it retries.
        A tool owned by a McpServerSet (`managed`) is started, restarted and closed by the
        set: connect() then returns at once (the Agent calls it before every run), unless
        `force` is given.
        """
        if self.managed and not force:
            return self
        async with self._get_lock():
            if self.state == "ready" and self._connection is not None and self._connection.alive:
                return self
            await self._open()
        return self

    async def close(self) -> None:
        """End the session and stop the server (stdio); the tool can be connected again."""
        connection, self._connection = self._connection, None
        starting, self._starting = self._starting, None
        self._forget_tools()  # nothing to offer the model any more
        self._set_state("closed", self.error if self.state == "failed" else None)
        self._restart_allowed = False
        for c in (connection, starting):
            if c is not None:
                await c.close()

    async def restart(self) -> McpTool:
        """Close and connect again (e.g. from the CLI's /mcp command)."""
        await self.close()
        return await self.connect(force=True)

    async def _open(self, *, restart: bool = False) -> None:
        old, self._connection = self._connection, None
        if old is not None:
            await old.close()
        self._set_state("starting", self.error)
        from agentica_cli import __version__

        connection: McpConnection | None = None
        try:
            # The SDK takes ~0.5 s to import: do it off the event loop so a prompt stays live.
            await asyncio.to_thread(import_sdk)
            connection = McpConnection(
                self.target,
                server_name=self.name,
                log_path=self.log_path,
                connect_timeout=self.connect_timeout,
                client_version=__version__,
                handlers=self.handlers,
                on_tools_changed=self._tools_changed,
                on_resources_changed=self._resources_changed,
                on_resource_updated=self._resource_updated,
                watch=list(self._watched),
            )
            self._starting = connection
            await connection.open()
            if self._starting is not connection:
                await connection.close()
        except McpServerError as err:
            if self._starting is connection:
                self._set_state("failed", err.reason)
                raise
        except BaseException:
            self._set_state("failed", "connect was cancelled")
            raise
        finally:
            if self._starting is connection:
                self._starting = None
            else:  # close() ran while we were connecting: it set the state
                connection = None
        if connection is None:
            raise McpServerError(f"MCP server '{self.name}' was closed while it was starting")
        self._connection = connection
        self.instructions = connection.instructions
        self.capabilities = connection.capabilities
        self.has_resources = connection.has_resources
        self.resource_uris = [str(r.uri) for r in connection.resources]
        self._set_functions(connection.tools)
        self._restart_allowed = True
        self.ever_ready = True
        if restart:
            self.restarts += 1
        self._set_state("ready")

    def _set_state(self, state: McpState, error: str | None = None) -> None:
        changed = (state, error) != (self._state, self.error)
        self._state, self.error = state, error
        if changed:
            for listener in list(self.listeners):
                try:
                    listener(self)
                except Exception:  # a broken listener must not break the tool
                    pass

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    # -- functions -----------------------------------------------------------------------

    def function_name(self, tool_name: str) -> str:
        base = safe_name(tool_name)
        name = f"{safe_name(self.tool_name_prefix)}{NAME_SEPARATOR}{base}" if self.tool_name_prefix else base
        return name[:MAX_FUNCTION_NAME]

    def _keep(self, tool_name: str) -> bool:
        if self.include_tools is not None and tool_name not in self.include_tools:
            return False
        return tool_name not in self.exclude_tools

    def _set_functions(self, tools: list[Any]) -> None:
        """Rebuild `functions` from a tool list, in place (an agent may hold the dict)."""
        from agentica_cli.tools.mcp.tasks import server_runs_tool_tasks

        self.left_out = {}
        self._task_tools = set()
        kept = []
        for t in tools:
            if not self._keep(t.name):
                continue
            if _task_support(t) == "required":
                if server_runs_tool_tasks(self.capabilities):
                    self._task_tools.add(t.name)  # called as a task (tasks.py)
                else:  # a plain call would be refused (-32601), and a task call is not allowed
                    self.left_out[t.name] = ("needs task-augmented calls, but the server does not declare "
                                             "them (capabilities.tasks.requests.tools.call)")
                    continue
            kept.append(t)
        functions: dict[str, Function] = {}
        task_functions: set[str] = set()
        for mcp_tool in kept:
            name = self.function_name(mcp_tool.name)
            if name in functions:  # two server names that sanitise alike
                name = f"{name[: MAX_FUNCTION_NAME - 3]}_{len(functions)}"
            if mcp_tool.name in self._task_tools:
                task_functions.add(name)
            functions[name] = Function(
                name=name,
                entrypoint=self._entrypoint(mcp_tool.name),
                description=mcp_tool.description or mcp_tool.title or f"MCP tool {mcp_tool.name}",
                parameters=parameters_from_schema(mcp_tool.input_schema),
                **flags_from_annotations(mcp_tool.annotations),
            )
            functions[name].context_param = CONTEXT_PARAM
        if self.resource_tools and self.has_resources:
            for short, function in zip(("list_resources", "read_resource"), self._resource_functions(), strict=True):
                if self._keep(short):  # include_tools / exclude_tools name them like server tools
                    functions.setdefault(function.name, function)
        self.mcp_tools = kept
        self.mcp_tools_unfiltered = list(tools)
        self.functions.clear()
        self.functions.update(functions)
        self.task_functions = task_functions

    def _tools_changed(self, tools: list[Any]) -> None:
        """The server said its tool list changed (tools/list_changed): the next model request
        offers the new list."""
        self._set_functions(tools)
        for listener in list(self.listeners):
            try:
                listener(self)
            except Exception:
                pass

    def _resources_changed(self, resources: list[Any], templates: list[Any]) -> None:
        """resources/list_changed: the new list feeds @server:uri completion (and the resource
        tools appear or go when the server starts or stops having any)."""
        self.resource_uris = [str(r.uri) for r in resources]
        if self.has_resources != bool(resources or templates):
            self.has_resources = bool(resources or templates)
            self._set_functions(self.mcp_tools_unfiltered)
        for listener in list(self.listeners):
            try:
                listener(self)
            except Exception:
                pass

    def _resource_updated(self, uri: str, result: Any) -> None:
        """A resource read this session changed on the server: keep its new text for the
        next model request (take_resource_updates)."""
        from agentica_cli.tools.mcp.results import render_resource

        text = render_resource(result)
        if self._watched.get(uri) != text:
            self._watched[uri] = text
            self._updates[uri] = text

    def take_resource_updates(self) -> list[tuple[str, str, str]]:
        """(server, uri, new text) of every resource read this session that the server has
        updated since; each update is handed out once."""
        updates, self._updates = self._updates, {}
        return [(self.name, uri, text) for uri, text in updates.items()]

    def _forget_tools(self) -> None:
        self.functions.clear()
        self.task_functions = set()
        self.mcp_tools = []

    def _entrypoint(self, tool_name: str) -> Any:
        async def call_mcp_tool(**arguments: Any) -> Any:
            from agentica_cli.tools.context import ToolContext
            from agentica_cli.tools.mcp.results import with_images

            context = arguments.pop(CONTEXT_PARAM, None)
            output = context.output if isinstance(context, ToolContext) else None
            return with_images(*await self._call_with_result(tool_name, arguments, on_progress=output))

        call_mcp_tool.__name__ = safe_name(tool_name)
        return call_mcp_tool

    # -- resources and prompts -------------------------------------------------------------

    def _resource_functions(self) -> list[Function]:
        async def list_resources() -> str:
            return await self.describe_resources()

        async def read_resource(uri: str) -> str:
            return await self.read_resource(uri)

        flags = {"is_read_only": True, "concurrency_safe": True, "is_destructive": False}
        return [
            Function(name=self.function_name("list_resources"), entrypoint=list_resources,
                     description=f"List the resources (files, documents, data) the MCP server '{self.name}' "
                                 "offers, with their URIs and URI templates.",
                     parameters={"type": "object", "properties": {}}, **flags),
            Function(name=self.function_name("read_resource"), entrypoint=read_resource,
                     description=f"Read one resource of the MCP server '{self.name}' by its URI.",
                     parameters={"type": "object", "properties": {"uri": {"type": "string",
                                 "description": "The resource URI, from list_resources"}},
                                 "required": ["uri"]}, **flags),
        ]

    async def _request(self, kind: str, name: str = "", arguments: Mapping[str, Any] | None = None) -> Any:
        connection = await self._connection_for_call()
        try:
            return await connection.call(name, dict(arguments or {}), self.timeout, kind=kind)
        except McpConnectionLost as lost:
            raise self._lost(connection, str(lost)) from None
        except McpCallTimeout:
            raise await self._timed_out(connection, kind) from None
        except McpServerError:
            raise
        except Exception as exc:
            if is_connection_error(exc):
                raise self._lost(connection, await self._connection_error_reason(connection, exc)) from None
            raise McpToolError(getattr(exc, "message", None) or str(exc) or type(exc).__name__) from None

    async def list_resources(self) -> tuple[list[Any], list[Any]]:
        """The server's resources and resource templates (SDK objects with .uri / .uri_template)."""
        if not _has(self.capabilities, "resources"):
            return [], []
        resources, templates = await self._request("list_resources")
        return list(resources), list(templates)

    async def describe_resources(self) -> str:
        resources, templates = await self.list_resources()
        lines = [f"{r.uri}  {r.name}" + (f" ({r.mime_type})" if r.mime_type else "")
                 + (f": {r.description}" if r.description else "") for r in resources]
        lines += [f"{t.uri_template}  {t.name} (template)" + (f": {t.description}" if t.description else "")
                  for t in templates]
        return "\n".join(lines) or f"The MCP server '{self.name}' lists no resources."

    async def read_resource(self, uri: str) -> str:
        """A resource's contents as text (binary parts summarised)."""
        from agentica_cli.tools.mcp.results import render_resource

        result = await self._request("read_resource", uri)
        text = render_resource(result)
        from agentica_cli.tools.mcp.connection import MAX_WATCHED

        if uri in self._watched or len(self._watched) < MAX_WATCHED:
            self._watched[uri] = text  # an update to it is passed on to the model (if subscribed)
        self._updates.pop(uri, None)  # what was just read is the freshest
        return text

    async def list_prompts(self) -> list[Any]:
        """The server's prompts (SDK objects with .name, .description, .arguments)."""
        if not _has(self.capabilities, "prompts"):
            return []
        return list(await self._request("list_prompts"))

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
        """A prompt's messages as (role, text)."""
        from agentica_cli.tools.mcp.results import render_block

        result = await self._request("get_prompt", name, arguments)
        return [(m.role, render_block(m.content)) for m in result.messages]

    # -- calls ---------------------------------------------------------------------------

    async def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None = None, *,
                        on_progress: Callable[[str], None] | None = None) -> str:
        """Call the server's tool `tool_name` (its own name, unprefixed); returns the result text.

        Raises McpToolError when the tool reports an error, McpServerError when the server
        crashed, hung, timed out or is unavailable (the message says which).
        """
        text, _ = await self._call_with_result(tool_name, arguments, on_progress=on_progress)
        return text

    async def _call_with_result(self, tool_name: str, arguments: Mapping[str, Any] | None, *,
                                on_progress: Callable[[str], None] | None = None) -> tuple[str, Any]:
        """call_tool's text, and the CallToolResult it came from (its images go to vision models)."""
        from agentica_cli.tools.mcp.results import render_result

        connection = await self._connection_for_call()
        try:
            result = await connection.call(tool_name, dict(arguments or {}), self.timeout,
                                           progress=_progress_reporter(on_progress),
                                           task=tool_name in self._task_tools, status=on_progress)
        except McpConnectionLost as lost:
            raise self._lost(connection, str(lost)) from None
        except McpCallTimeout:
            raise await self._timed_out(connection, tool_name) from None
        except Exception as exc:
            if is_connection_error(exc):
                reason = await self._connection_error_reason(connection, exc)
                raise self._lost(connection, reason) from None
            if is_timeout_error(exc):
                raise await self._timed_out(connection, tool_name) from None
            # The server answered this call with a JSON-RPC error (unknown tool, bad params...).
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise McpToolError(message) from None
        text = render_result(result)
        if result.is_error:
            raise McpToolError(text or f"tool {tool_name} failed")
        return text, result

    async def _connection_for_call(self) -> McpConnection:
        """The live connection; restarts a crashed or hung server once, or says why not."""
        connection = self._connection
        if connection is not None and connection.alive:
            return connection
        async with self._get_lock():
            connection = self._connection
            if connection is not None and connection.alive:
                return connection
            if self.state == "closed" or (self.state == "idle" and connection is None):
                raise McpServerError(f"MCP server '{self.name}' is not connected (call `await connect()` first)")
            if not self._restart_allowed:
                raise McpServerError(f"MCP server '{self.name}' is unavailable: {self.error or 'not connected'}")
            # One automatic restart; if it fails the server stays failed until connect()/restart().
            self._restart_allowed = False
            _ = self.status  # records why the old session died, for the listeners
            try:
                await self._open(restart=True)
            except McpServerError as err:
                self._forget_tools()  # the next run does not offer tools that cannot work
                raise McpServerError(
                    f"MCP server '{self.name}' could not be restarted: {err.reason}", err.reason
                ) from None
            assert self._connection is not None
            return self._connection

    def _lost(self, connection: McpConnection, reason: str) -> McpServerError:
        connection.abandon(reason)
        self._mark_failed(connection, reason)
        return McpServerError(
            f"MCP server '{self.name}' stopped during the call: {reason}. "
            "It will be restarted on the next call."
        )

    async def _timed_out(self, connection: McpConnection, tool_name: str) -> McpServerError:
        """A call took too long: a server that still answers keeps its session; a hung one is stopped.

        The probe gets PROBE_TIMEOUT whatever the call's timeout: stopping a server loses its
        state, and a live one on a busy machine can take more than a short call timeout to
        answer tools/list (a 1 s timeout with two CPUs busy did). A server that answers costs
        only its round trip; only a hung one is waited for that long."""
        if await connection.probe(PROBE_TIMEOUT):
            return McpServerError(
                f"MCP tool '{tool_name}' on server '{self.name}' did not finish within {self.timeout:g} s "
                "and was cancelled (the server is still responding)."
            )
        reason = f"stopped responding (no answer within {self.timeout:g} s)"
        connection.abandon(reason)
        self._mark_failed(connection, reason)
        return McpServerError(
            f"MCP server '{self.name}' {reason}; it was stopped and will be restarted on the next call."
        )

    def _mark_failed(self, connection: McpConnection, reason: str) -> None:
        if self._connection is connection:
            self._set_state("failed", reason)

    @staticmethod
    async def _connection_error_reason(connection: McpConnection, exc: BaseException) -> str:
        if connection.target.transport == "stdio":
            if await connection.wait_exit() or connection.pid is None:
                return connection.exit_reason()
            return "the connection to the server closed"
        return f"the connection was lost ({str(exc).strip() or type(exc).__name__})"

    def __repr__(self) -> str:
        target = self.describe_target()
        return f"McpTool(name={self.name!r}, {target}, state={self.state}, functions={list(self.functions)})"
