"""A set of configured MCP servers, started together in the background (the CLI's
`[mcp_servers.NAME]` tables and its `/mcp` command sit on this).

    servers = McpServerSet.from_tables(settings.mcp_servers, base_dir=work_dir)
    servers.start()                      # returns at once; each server connects in parallel
    agent = DeepAgent(model, tools=servers.tools)   # functions appear as servers get ready
    ...
    for status in servers.new_failures(): print(status.error)   # each failure once
    await servers.close()

A server that fails to start is reported and left failed; the others work.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentica_cli.tools.mcp.connection import McpServerError
from agentica_cli.tools.mcp.keys import CONFIG_KEYS, OAUTH_KEYS, PROTOCOLS, SANDBOX_MODES, TRANSPORTS
from agentica_cli.tools.mcp.tool import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, McpTool

ServerState = Literal["disabled", "idle", "starting", "ready", "failed", "closed"]

class McpConfigError(ValueError):
    """A bad `[mcp_servers.NAME]` table; the message names the key."""


def _check(name: str, key: str, kind: str, value: Any) -> Any:
    where = f"mcp_servers.{name}.{key}"
    ok = {
        "str": lambda v: isinstance(v, str),
        "bool": lambda v: isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0,
        "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "dict[str,str]": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v < 65536,
    }[kind](value)
    if not ok:
        expected = {
            "str": "a string",
            "bool": "true or false",
            "float": "a positive number of seconds",
            "list[str]": "a list of strings",
            "dict[str,str]": "a table of strings",
            "int": "a port number (1-65535)",
        }[kind]
        raise McpConfigError(f"{where} must be {expected}, got {value!r}")
    return value


def expand_env_references(value: str, where: str) -> str:
    """`${VAR}` / `${VAR:-default}` -> our environment's VAR (secrets stay out of config files)."""
    from agentica_cli.tools.mcp.env_refs import UnsetReference, expand

    try:
        return expand(value, where)
    except UnsetReference as err:
        raise McpConfigError(str(err)) from None


HEADERS_HELPER_TIMEOUT = 10.0  # seconds for a headers helper command


@dataclass
class McpServerConfig:
    """One `[mcp_servers.NAME]` table: a stdio command or an HTTP url, and its options."""

    name: str
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    headers_helper: str | None = None  # Claude Code's `headersHelper`: run when the tool is built
    transport: str | None = None
    enabled: bool = True
    timeout: float = DEFAULT_CALL_TIMEOUT  # seconds per tool call
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT  # seconds to start and list tools
    include_tools: list[str] | None = None
    exclude_tools: list[str] = field(default_factory=list)
    sandbox: str = "off"  # the OS sandbox of a stdio server (agentica_cli.sandbox), writable: its work folder
    sandbox_network: bool = False
    sandbox_unix_sockets: bool = False
    protocol: str = "auto"
    oauth: bool = False
    oauth_scopes: list[str] | None = None
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = None
    oauth_callback_port: int | None = None

    @classmethod
    def from_dict(cls, name: str, table: Mapping[str, Any]) -> McpServerConfig:
        """Validate a config table; raises McpConfigError naming the bad key."""
        if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_. -]*", name):  # tool names use safe_name(name)
            raise McpConfigError(f"mcp_servers.{name}: a server name may use only letters, digits, _, -, . "
                                 "and spaces")
        values: dict[str, Any] = {}
        for key, value in table.items():
            kind = CONFIG_KEYS.get(key)
            if kind is None:
                known = ", ".join(CONFIG_KEYS)
                raise McpConfigError(f"mcp_servers.{name}: unknown key '{key}' (known keys: {known})")
            values[key] = _check(name, key, kind, value)
        if ("command" in values) == ("url" in values):
            raise McpConfigError(f"mcp_servers.{name}: set either 'command' (stdio) or 'url' (SSE / HTTP)")
        transport = values.get("transport")
        if transport is not None and transport not in TRANSPORTS:
            raise McpConfigError(f"mcp_servers.{name}.transport must be one of {', '.join(TRANSPORTS)}")
        if "url" in values:
            for key in ("args", "env", "cwd"):
                if key in values:
                    raise McpConfigError(f"mcp_servers.{name}.{key} applies to a 'command' server, not a 'url' one")
            if transport == "stdio":
                raise McpConfigError(f"mcp_servers.{name}.transport 'stdio' needs 'command', not 'url'")
        elif "headers" in values or "headers_helper" in values or transport not in (None, "stdio"):
            raise McpConfigError(f"mcp_servers.{name}: 'headers' and HTTP transports need 'url'")
        if any(key in values for key in OAUTH_KEYS):
            if values.get("oauth") is False:
                given = ", ".join(k for k in OAUTH_KEYS if k in values)
                raise McpConfigError(f"mcp_servers.{name}: oauth = false, but {given} set: "
                                     "remove them or set oauth = true")
            values["oauth"] = True  # client id, scopes, ... only make sense with OAuth
        if "oauth_client_secret" in values and "oauth_client_id" not in values:
            raise McpConfigError(f"mcp_servers.{name}.oauth_client_secret needs oauth_client_id")
        if values.get("oauth") and "url" not in values:
            raise McpConfigError(f"mcp_servers.{name}.oauth applies to a 'url' server")
        if values.get("protocol", "auto") not in PROTOCOLS:
            raise McpConfigError(f"mcp_servers.{name}.protocol must be one of {', '.join(PROTOCOLS)}")
        if values.get("sandbox", "off") not in SANDBOX_MODES:
            raise McpConfigError(f"mcp_servers.{name}.sandbox must be one of {', '.join(SANDBOX_MODES)}")
        if "url" in values and values.get("sandbox", "off") != "off":
            raise McpConfigError(f"mcp_servers.{name}.sandbox applies to a 'command' server, not a 'url' one")
        for key in ("timeout", "connect_timeout"):
            if key in values:
                values[key] = float(values[key])
        return cls(name=name, **values)

    def _helper_headers(self, base_dir: Path | None) -> dict[str, str]:
        """Run `headers_helper` (a shell command, in `base_dir`, HEADERS_HELPER_TIMEOUT s at most):
        its stdout must be a JSON object of strings, the headers it adds (Claude Code's
        `headersHelper`). A project's helper runs only once the project is trusted: its
        servers are not built before (cli/config.py holds them back)."""
        import json
        import subprocess

        where = f"mcp_servers.{self.name}.headers_helper"
        env = {**os.environ, "CLAUDE_CODE_MCP_SERVER_NAME": self.name, "CLAUDE_CODE_MCP_SERVER_URL": self.url or ""}
        try:
            done = subprocess.run(["/bin/sh", "-c", self.headers_helper or ""], cwd=base_dir, env=env,
                                  capture_output=True, text=True, timeout=HEADERS_HELPER_TIMEOUT,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise McpConfigError(f"{where}: the command did not finish: {err}") from None
        if done.returncode != 0:
            raise McpConfigError(f"{where}: the command failed (exit code {done.returncode}): "
                                 f"{done.stderr.strip()[:200]}")
        try:
            headers = json.loads(done.stdout)
        except ValueError:
            headers = None
        if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in headers.items()):
            raise McpConfigError(f"{where}: the command must print a JSON object of strings "
                                 f"(got {done.stdout.strip()[:80]!r})")
        return headers

    def build_tool(self, *, base_dir: Path | None = None, log_dir: Path | None = None) -> McpTool:
        """The McpTool for this server (not connected). `cwd` is relative to `base_dir`."""
        where = f"mcp_servers.{self.name}"
        env = {k: expand_env_references(v, f"{where}.env.{k}") for k, v in self.env.items()}
        headers = {k: expand_env_references(v, f"{where}.headers.{k}") for k, v in self.headers.items()}
        if self.headers_helper:
            headers.update(self._helper_headers(base_dir))
        command = expand_env_references(self.command, f"{where}.command") if self.command is not None else None
        args = [expand_env_references(a, f"{where}.args[{i}]") for i, a in enumerate(self.args)] \
            if self.args is not None else None
        url = expand_env_references(self.url, f"{where}.url") if self.url is not None else None
        cwd = None
        if self.cwd is not None:
            path = Path(self.cwd).expanduser()
            cwd = str(path if path.is_absolute() or base_dir is None else base_dir / path)
        sandbox = None
        if command is not None and self.sandbox != "off":
            command, args, env, sandbox = self._sandboxed(Path(cwd) if cwd else base_dir or Path.cwd(),
                                                          [command, *(args or [])], env)
        tool = McpTool(
            command,
            args=args,
            env=env or None,
            cwd=cwd,
            url=url,
            transport=self.transport,
            headers=headers or None,
            name=self.name,
            include_tools=self.include_tools or None,  # an empty list in a config file: no filter
            exclude_tools=self.exclude_tools,
            connect_timeout=self.connect_timeout,
            timeout=self.timeout,
            log_file=(log_dir / f"{self.name}.log") if log_dir is not None else None,
            protocol=self.protocol,
            oauth=self._oauth(url),
        )
        tool.sandbox = sandbox  # keeps its private temp folder alive as long as the tool
        return tool

    def _oauth(self, url: str | None) -> Any:
        """True (the defaults), an McpOAuth with this table's client and scopes, or False."""
        if not self.oauth:
            return False
        if not any(getattr(self, key) for key in OAUTH_KEYS):
            return True
        from agentica_cli.tools.mcp.oauth import McpOAuth

        secret = self.oauth_client_secret
        if secret is not None:
            secret = expand_env_references(secret, f"mcp_servers.{self.name}.oauth_client_secret")
        return McpOAuth(self.name, url or "", scope=" ".join(self.oauth_scopes) if self.oauth_scopes else None,
                        client_id=self.oauth_client_id, client_secret=secret, callback_port=self.oauth_callback_port)

    def _sandboxed(self, work_dir: Path, argv: list[str],
                   env: dict[str, str]) -> tuple[str, list[str], dict[str, str], Any]:
        """The server's command line inside its sandbox; no backend here is an error (fail closed)."""
        from agentica_cli.sandbox import Sandbox, SandboxPolicy

        sandbox = Sandbox(SandboxPolicy.build(self.sandbox, work_dir, network=self.sandbox_network,
                                              unix_sockets=self.sandbox_unix_sockets))
        if not sandbox.confines:
            raise McpConfigError(f"mcp_servers.{self.name}.sandbox: no sandbox backend on this machine "
                                 "(install bubblewrap); set sandbox = \"off\" to run it unconfined")
        # die_with_parent: a server has no group watcher; it dies with the agent's event-loop thread
        argv = sandbox.wrap(argv, work_dir, die_with_parent=True)
        return argv[0], argv[1:], sandbox.environment(env), sandbox


@dataclass(frozen=True)
class McpServerStatus:
    """What `/mcp` shows for one server."""

    name: str
    state: ServerState
    target: str  # the command line or the URL (with its transport)
    transport: str
    tools: tuple[str, ...] = ()  # function names the model sees
    task_tools: tuple[str, ...] = ()  # those of `tools` that run as tasks (tasks.py)
    error: str | None = None
    pid: int | None = None
    log_path: Path | None = None
    restarts: int = 0
    ever_ready: bool = False  # so a "failed" server crashed or hung after it had started
    restart_pending: bool = False  # it stopped after starting; its next call restarts it
    left_out: tuple[str, ...] = ()  # server tools not offered, with why
    auth: str | None = None  # OAuth servers: "logged in" / "not logged in"

    def failure_message(self) -> str:
        """One line for the user about a failed server: a failed start, or a stop later on."""
        if not self.ever_ready:
            return f"MCP server '{self.name}' failed to start: {self.error}"
        if self.restart_pending:
            return f"MCP server '{self.name}' stopped: {self.error}; its next call restarts it"
        return f"MCP server '{self.name}' stopped and could not be restarted: {self.error}"


class _Entry:
    def __init__(self, config: McpServerConfig, tool: McpTool | None, error: str | None):
        self.config = config
        self.tool = tool
        self.config_error = error  # a table that cannot even build a tool (e.g. a missing ${VAR})
        self.task: asyncio.Task[None] | None = None
        self.reported: tuple[str, str | None] | None = None  # the failure already handed out
        self.prompts: list[Any] = []  # the server's prompts, read when it became ready
        # True from the start of a connection until its prompts are listed: the server counts as
        # starting until then, so that "ready" (in /mcp, to on_change) comes with its prompts'
        # slash commands, not a moment before them
        self.connecting = False


def _listing_prompts(entry: _Entry) -> bool:
    """Connected, its prompts not listed yet: still starting to the set's callers."""
    return entry.connecting and entry.tool is not None and entry.tool.status == "ready"


class McpServerSet:
    """Configured MCP servers: start all in parallel, watch their state, close them all."""

    def __init__(
        self,
        configs: Iterable[McpServerConfig],
        *,
        base_dir: str | os.PathLike[str] | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        on_change: Callable[[McpServerStatus], None] | None = None,
        handlers: Any = None,
    ):
        self.on_change = on_change
        # client_features.McpClientHandlers for every server (roots, elicitation, sampling).
        self.handlers = handlers
        self._entries: dict[str, _Entry] = {}
        base = Path(base_dir) if base_dir is not None else None
        logs = Path(log_dir) if log_dir is not None else None
        for config in configs:
            if config.name in self._entries:
                raise McpConfigError(f"mcp_servers.{config.name}: defined twice")
            tool, error = None, None
            if config.enabled:
                try:
                    tool = config.build_tool(base_dir=base, log_dir=logs)
                except (McpConfigError, ValueError) as err:
                    error = str(err)
            entry = _Entry(config, tool, error)
            if tool is not None:
                tool.handlers = handlers
                tool.managed = True  # started, restarted and closed here, never by the Agent

                def listener(_tool: McpTool, name: str = config.name) -> None:  # bound now, not at the loop's end
                    self._changed(name)

                tool.listeners.append(listener)
            self._entries[config.name] = entry

    @classmethod
    def from_tables(cls, tables: Mapping[str, Mapping[str, Any]], **kwargs: Any) -> McpServerSet:
        """From the `mcp_servers` part of a parsed config (NAME -> table)."""
        return cls([McpServerConfig.from_dict(name, table) for name, table in tables.items()], **kwargs)

    # -- what there is -------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return list(self._entries)

    @property
    def tools(self) -> list[McpTool]:
        """Every enabled server's McpTool, connected or not: pass them to the Agent once;
        each one's `functions` fill in when its server is ready (and empty if it fails)."""
        return [e.tool for e in self._entries.values() if e.tool is not None]

    def ready_tools(self) -> list[McpTool]:
        return [e.tool for e in self._entries.values() if e.tool is not None and e.tool.status == "ready"]

    def usable_tools(self) -> list[McpTool]:
        """The tools to offer the model: ready servers, and servers that crashed or hung after
        starting, which their next call restarts once (dropping those from a turn would mean
        they are never called, so never restarted). A failed start or a failed restart is out."""
        return [
            e.tool
            for e in self._entries.values()
            if e.tool is not None and (e.tool.status == "ready" or e.tool.restart_pending)
        ]

    def status(self, name: str) -> McpServerStatus:
        entry = self._entries[name]
        config, tool = entry.config, entry.tool
        if tool is None:
            state: ServerState = "disabled" if not config.enabled else "failed"
            target = config.url or " ".join([config.command or "", *(config.args or [])])
            transport = config.transport or ("stdio" if config.command else "")
            return McpServerStatus(name, state, target, transport, error=entry.config_error)
        state = "starting" if _listing_prompts(entry) else tool.status
        return McpServerStatus(
            name=name,
            state=state,
            target=tool.describe_target(),
            transport=tool.transport,
            tools=tuple(tool.functions) if state == "ready" else (),
            task_tools=tuple(sorted(tool.task_functions)) if state == "ready" else (),
            error=tool.error,
            pid=tool.pid,
            log_path=tool.log_path if tool.transport == "stdio" else None,
            restarts=tool.restarts,
            ever_ready=tool.ever_ready,
            restart_pending=tool.restart_pending,
            left_out=tuple(f"{name} ({why})" for name, why in tool.left_out.items()),
            auth=tool.target.oauth.state if tool.target.oauth is not None else None,
        )

    def statuses(self) -> list[McpServerStatus]:
        return [self.status(name) for name in self._entries]

    def new_failures(self) -> list[McpServerStatus]:
        """Failed servers not reported yet (each failure is handed out once)."""
        out = []
        for name, entry in self._entries.items():
            status = self.status(name)
            if status.state != "failed":
                continue
            key = (status.state, status.error)
            if entry.reported != key:
                entry.reported = key
                out.append(status)
        return out

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Start every enabled server in the background; returns at once (needs a running loop)."""
        loop = asyncio.get_running_loop()
        for name, entry in self._entries.items():
            if entry.tool is not None and (entry.task is None or entry.task.done()):
                if entry.tool.state in ("idle", "closed"):
                    entry.task = loop.create_task(self._connect(entry), name=f"mcp-start:{name}")
            elif entry.config_error is not None:
                self._changed(name)

    async def _connect(self, entry: _Entry) -> None:
        assert entry.tool is not None
        entry.connecting = True
        try:
            try:
                await entry.tool.connect(force=True)
            except McpServerError:
                return  # recorded in the tool's state and error; reported through new_failures/on_change
            try:
                entry.prompts = await entry.tool.list_prompts()
            except Exception:
                entry.prompts = []  # a server whose prompts cannot be listed still serves its tools
        finally:
            entry.connecting = False
        self._changed(entry.config.name)  # now "ready", with its prompts

    def resource_uris(self) -> dict[str, list[str]]:
        """server name -> the URIs of its resources (ready servers that list any)."""
        # The tool's list is read at connect and again on resources/list_changed.
        return {name: list(entry.tool.resource_uris) for name, entry in self._entries.items()
                if entry.tool is not None and entry.tool.status == "ready" and entry.tool.resource_uris}

    def ready_tool(self, name: str) -> McpTool | None:
        entry = self._entries.get(name)
        return entry.tool if entry is not None and entry.tool is not None and entry.tool.status == "ready" else None

    def prompt_commands(self) -> dict[str, tuple[McpTool, Any]]:
        """Slash commands for the prompts of ready servers: `mcp__<server>__<prompt>` ->
        (the server's tool, the prompt)."""
        commands: dict[str, tuple[McpTool, Any]] = {}
        for name, entry in self._entries.items():
            if entry.tool is not None and entry.tool.status == "ready":
                for prompt in entry.prompts:
                    commands[f"mcp__{name}__{re.sub(r'[^A-Za-z0-9_-]+', '_', prompt.name)}"] = (entry.tool, prompt)
        return commands

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until no server is still starting; True if all finished within `timeout`."""
        tasks = [e.task for e in self._entries.values() if e.task is not None and not e.task.done()]
        if not tasks:
            return True
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        return not pending

    async def restart(self, name: str) -> McpServerStatus:
        """Stop and start one server again (e.g. `/mcp restart NAME`)."""
        entry = self._entries[name]
        if entry.tool is None:
            return self.status(name)
        if entry.task is not None and not entry.task.done():
            entry.task.cancel()
            await asyncio.gather(entry.task, return_exceptions=True)
        await entry.tool.close()
        entry.reported = None
        await self._connect(entry)
        return self.status(name)

    async def logout(self, name: str) -> bool:
        """Forget an OAuth server's tokens and stop it (`/mcp logout NAME`)."""
        entry = self._entries[name]
        if entry.tool is None or entry.tool.target.oauth is None:
            return False
        await entry.tool.close()
        return entry.tool.target.oauth.logout()

    async def login(self, name: str) -> McpServerStatus:
        """Log in again from scratch and start the server (`/mcp login NAME`)."""
        entry = self._entries[name]
        if entry.tool is not None and entry.tool.target.oauth is not None:
            await entry.tool.close()
            entry.tool.target.oauth.logout()
        return await self.restart(name)

    async def close(self) -> None:
        """Stop every server (in parallel); safe to call more than once."""
        starting = [e.task for e in self._entries.values() if e.task is not None and not e.task.done()]
        for task in starting:
            task.cancel()
        await asyncio.gather(*starting, return_exceptions=True)
        tools = [e.tool for e in self._entries.values() if e.tool is not None]
        await asyncio.gather(*(tool.close() for tool in tools), return_exceptions=True)

    async def __aenter__(self) -> McpServerSet:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _changed(self, name: str) -> None:
        entry = self._entries.get(name)
        if entry is not None and _listing_prompts(entry):
            return  # told once its prompts are listed (the end of _connect)
        if self.on_change is not None:
            try:
                self.on_change(self.status(name))
            except Exception:
                pass
