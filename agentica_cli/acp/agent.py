"""The ACP agent: what agentica answers to each request an editor sends.

initialize -> (authenticate) -> session/new or session/load -> session/prompt ... with
session/cancel, session/set_mode and session/set_config_option (the model) between them.
Sessions are agentica's saved sessions: the ACP session id is the id `agentica --resume`
takes, and session/load replays one into the editor.
"""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    AuthMethodAgent,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from agentica_cli.acp.session import AcpSession, log

if TYPE_CHECKING:
    from agentica_cli.app.settings.config import Settings

AUTH_METHOD = "api-key"  # the editor sets AGENTICA_API_KEY and restarts us
CONFIG_AUTH_METHOD = "config"  # the user saved a key in the config file: read it again


def _error(make: Any, message: str) -> RequestError:
    return make({"message": message})


def mcp_tables(servers: list[Any] | None) -> dict[str, dict[str, Any]]:
    """The editor's MCP servers as [mcp_servers.NAME] tables (the config's own format)."""
    import re

    tables: dict[str, dict[str, Any]] = {}
    for server in servers or []:
        name = re.sub(r"[^A-Za-z0-9_-]", "_", server.name) or "server"
        while name in tables:
            name += "_"
        kind = getattr(server, "type", None)
        if kind in ("http", "sse"):
            tables[name] = {"url": server.url, "headers": {h.name: h.value for h in server.headers},
                            "transport": "http" if kind == "http" else "sse"}
        elif getattr(server, "command", None):
            tables[name] = {"command": server.command, "args": list(server.args),
                            "env": {e.name: e.value for e in server.env}}
    return tables


class AgenticaAcpAgent:
    def __init__(self, flags: dict[str, object], *, add_dirs: list[Path] | None = None, save_sessions: bool = True):
        self.flags = flags
        self.add_dirs = list(add_dirs or [])
        self.save_sessions = save_sessions
        self.conn: Any = None
        self.client_caps: Any = None
        self.sessions: dict[str, AcpSession] = {}
        self.background: set[asyncio.Task[Any]] = set()
        self.warming: asyncio.Future[None] | None = None  # the heavy imports, in a thread

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- set-up ---------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        from agentica_cli import __version__

        self.client_caps = client_capabilities
        self.warming = asyncio.get_running_loop().run_in_executor(None, _warm_imports)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            auth_methods=[EnvVarAuthMethod(
                id=AUTH_METHOD, name="API key", type="env_var",
                description="The key of your model provider (or set it in ~/.agentica/config.toml)",
                vars=[AuthEnvVar(name="AGENTICA_API_KEY", label="API key", secret=True)],
            ), AuthMethodAgent(
                id=CONFIG_AUTH_METHOD, name="Key from the config file",
                description="Set api_key under [model] in ~/.agentica/config.toml (or run `agentica` once in a "
                            "terminal, which offers to save it), then choose this",
            )],
            agent_info=Implementation(name="agentica", title="agentica", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        self.model_for(self.settings_for(Path(os.getcwd())))  # raises auth_required while no key is set
        return AuthenticateResponse()

    def session_dirs(self, extra_dirs: list[str] | None) -> list[Path]:
        """--add-dir folders and the editor's additional directories that exist."""
        return [*self.add_dirs, *(Path(os.path.realpath(d)) for d in extra_dirs or [] if os.path.isdir(d))]

    def settings_for(self, work_dir: Path) -> Any:
        """The session's settings; one that cannot be read is an invalid-params error with the
        message (never an internal error with a traceback). AppSession.open checks the rest."""
        from agentica_cli.app.settings.config import ConfigError, load_settings
        from agentica_cli.app.settings.trust import is_trusted

        try:
            settings = load_settings(work_dir, self.flags, trusted=is_trusted(work_dir))
        except ConfigError as err:
            raise _error(RequestError.invalid_params, f"config error: {err}") from None
        for problem in settings.warnings:
            log(f"warning: {problem}")
        return settings

    def model_for(self, settings: Settings) -> Any:
        from agentica_cli.app.runtime import MissingKey, build_model

        try:
            return build_model(settings)
        except MissingKey as err:
            raise _error(RequestError.auth_required, str(err)) from None

    @staticmethod
    def work_dir(cwd: str) -> Path:
        path = Path(os.path.realpath(os.path.expanduser(cwd)))
        if not path.is_dir():
            raise _error(RequestError.invalid_params, f"cwd {cwd}: no such folder")
        return path

    async def open_session(self, cwd: str, *, resume: str | None, mcp_servers: list[Any] | None,
                           extra_dirs: list[str] | None) -> AcpSession:
        """An AppSession for the editor (new, or the saved one `resume` names) and its adapter.
        A start-up problem answers the request as the error it is (app/session.StartupProblem)."""
        from agentica_cli.app.session import AppSession, SessionOptions, StartupError
        from agentica_cli.app.sessions import new_session_id

        work_dir = self.work_dir(cwd)
        settings = self.settings_for(work_dir)
        adapter = AcpSession(self.conn, work_dir, client_caps=self.client_caps)
        options = SessionOptions(
            work_dir, settings, add_dirs=self.session_dirs(extra_dirs), resume=resume, save=self.save_sessions,
            lazy_file=False, session_id=resume or new_session_id(), client_mcp_servers=mcp_tables(mcp_servers),
            mcp_wait="first_turn", mcp_wait_timeout=30,  # the first prompt waits for the servers
            # edits through the editor are journaled for /undo (acp/checkpoints.py); else file backups
            checkpoints="none" if adapter.uses_editor_files else "file-backups",
            how_to_trust="run `agentica --trust` there",
        )
        try:
            app = AppSession.open(options, adapter)
        except StartupError as err:
            problem = err.problem
            if problem.kind == "missing_key":
                raise _error(RequestError.auth_required, problem.message) from None
            if problem.kind == "no_session":
                raise RequestError.resource_not_found(resume) from None
            raise _error(RequestError.invalid_params, problem.message) from None
        try:
            await adapter.attach(app)  # the agent, SessionStart hooks (begun), the editor's files and terminals
        except BaseException:
            await app.close()  # its file and MCP servers are not left behind
            raise
        self.sessions[adapter.id] = adapter
        return adapter

    def announce_commands(self, session: AcpSession) -> None:
        """The slash commands, sent once the session's id is the editor's (after this response);
        then the model client is made ready, so the first prompt does not wait for it."""
        from acp.helpers import update_available_commands

        from agentica_cli.acp.commands import available_commands

        async def send() -> None:
            await asyncio.sleep(0)
            await session.send(update_available_commands(available_commands(session.app.extensions.commands)))
            if self.warming is not None:
                await asyncio.shield(self.warming)
            agent = session.app.agent
            # Tool schemas and the system prompt are built (and kept) on first use: ~0.1 s.
            await asyncio.to_thread(lambda: ([f.to_openai() for f in agent.functions.values()], agent.system_prompt()))
            make_client = getattr(agent.model, "client", None)
            if callable(make_client):
                try:
                    make_client()  # the SDK's client: ~0.1 s of set-up otherwise paid by the first prompt
                except Exception:
                    pass  # the first request reports it properly

        task = asyncio.create_task(send())
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    # -- sessions -------------------------------------------------------------------------

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        session = await self.open_session(cwd, resume=None, mcp_servers=mcp_servers,
                                          extra_dirs=additional_directories)
        self.announce_commands(session)
        from agentica_cli.acp.modes import mode_state

        return NewSessionResponse(session_id=session.id, modes=mode_state(session.app.policy.mode),
                                  config_options=session.config_options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        from agentica_cli.acp.modes import mode_state
        from agentica_cli.acp.replay import replay_updates

        self.work_dir(cwd)
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()  # its file is free for the new one
        session = await self.open_session(cwd, resume=session_id, mcp_servers=mcp_servers,
                                          extra_dirs=additional_directories)
        for update in replay_updates(session.app.messages or [], session.work_dir):
            await session.send(update)
        self.announce_commands(session)
        return LoadSessionResponse(modes=mode_state(session.app.policy.mode), config_options=session.config_options())

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        from agentica_cli.app.sessions import SessionStore

        where = Path(os.path.realpath(cwd)) if cwd else None
        return ListSessionsResponse(sessions=[
            SessionInfo(session_id=info.id, cwd=info.cwd, title=info.title or None,
                        updated_at=datetime.fromtimestamp(info.updated, timezone.utc).isoformat())
            for info in SessionStore().list(where)[:200]
        ])

    def session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        return session

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        from agentica_cli.acp.modes import MODE_IDS

        if mode_id not in MODE_IDS:
            raise _error(RequestError.invalid_params, f"unknown mode {mode_id!r}; one of {', '.join(MODE_IDS)}")
        await self.session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        session = self.session(session_id)
        if config_id != "model" or not isinstance(value, str):
            raise _error(RequestError.invalid_params, f"unknown option {config_id!r}")
        problem = session.switch_model(value)
        if problem:
            raise _error(RequestError.invalid_params, problem)
        return SetSessionConfigOptionResponse(config_options=session.config_options())

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        from agentica_cli.acp.prompt_blocks import prompt_content

        stop = await self.session(session_id).prompt(prompt_content(prompt))
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def shutdown(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()
        from agentica_cli.app.session import stop_background_processes

        await asyncio.to_thread(stop_background_processes)


def _warm_imports() -> None:
    """The agent loop, the builtin tools and the model transport: imported in a thread while the editor sets up."""
    try:
        # What the first request would import: httpx2's first connection pulls in anyio's
        # streams (~50 ms on a busy machine); the transport loads the CA certificates.
        import anyio._core._sockets
        import anyio._core._streams  # noqa: F401

        from agentica_cli.models import chat_http

        chat_http.tls_context()

        import agentica_cli.agent  # noqa: F401
        import builtin_tools  # noqa: F401
    except Exception:
        pass
