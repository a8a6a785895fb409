"""The subcommands on typer: `agentica acp`, `agentica mcp list|add|remove|serve`,
`agentica sessions list|show|rm`, `agentica models`, `agentica doctor`. Each imports what it needs
when it runs."""

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from agentica_cli.app import exitcodes

MCP_HELP = """The MCP servers in your config (~/.agentica/config.toml; a project's own servers
live in its .agentica/config.toml or its .mcp.json and are listed too). Changes apply to the
next session."""

SCOPES = ("user", "project")


def _scope(value: str) -> str:
    if value not in SCOPES:
        raise typer.BadParameter(f"invalid choice: {value!r} (choose from 'user', 'project')")
    return value


def _config_error(err: Exception) -> int:
    sys.stderr.write(f"agentica: config error: {err}\n")
    return exitcodes.USAGE_ERROR


def acp(
    args: Annotated[Optional[list[str]], typer.Argument(help="passed to the ACP server")] = None,
) -> int:
    """Serve an editor (Zed, ...) over the Agent Client Protocol on stdin/stdout."""
    import importlib.util

    if importlib.util.find_spec("agentica_cli.acp") is None:
        sys.stderr.write("agentica: error: `agentica acp` is not available in this build (no agentica_cli.acp)\n")
        return exitcodes.USAGE_ERROR
    try:
        from agentica_cli.acp import run_acp_server
    except ImportError as err:  # e.g. a library the ACP server needs is not installed
        sys.stderr.write(f"agentica: error: `agentica acp` cannot start: {err}\n")
        return exitcodes.USAGE_ERROR
    return run_acp_server(list(args or ()))


def mcp_serve(
    port: Annotated[Optional[int], typer.Option(
        "--port", help="serve streamable HTTP on this port (0: any free one) instead of stdio")] = None,
    host: Annotated[str, typer.Option("--host", help="the address --port binds")] = "127.0.0.1",
    model: Annotated[Optional[str], typer.Option("-m", "--model", help="the model sessions use by default")] = None,
    provider: Annotated[Optional[str], typer.Option("--provider", help="a provider preset")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="an OpenAI-compatible endpoint")] = None,
    api_key_file: Annotated[Optional[str], typer.Option(
        "--api-key-file", metavar="PATH", help="read the API key from this file")] = None,
    permission_mode: Annotated[Optional[str], typer.Option(
        "--permission-mode", metavar="MODE", help="default, accept-edits, plan or auto: sessions' mode when the "
        "client names none; clients may ask for auto only when this is auto")] = None,
    max_turns: Annotated[Optional[int], typer.Option(
        "--max-turns", help="stop a prompt after this many model requests")] = None,
    no_session: Annotated[bool, typer.Option("--no-session", help="do not save the sessions")] = False,
) -> int:
    """Serve agentica as an MCP server (stdio, or streamable HTTP with --port): tools `agentica`
    and `agentica_reply`; approvals go to the client as elicitation requests."""
    from agentica_cli.mcp_serve import serve_command

    return serve_command(port=port, host=host, model=model, provider=provider, base_url=base_url,
                         api_key_file=api_key_file, permission_mode=permission_mode, max_turns=max_turns,
                         no_session=no_session)


def mcp_list(
    work_dir: Annotated[Optional[Path], typer.Option(
        "-C", "--work-dir", help="the project whose config is read too (default: the current folder)")] = None,
) -> int:
    """List the configured MCP servers (they are not started)."""
    from agentica_cli.app.safe_text import safe_text
    from agentica_cli.app.settings.config import ConfigError, load_settings
    from agentica_cli.app.settings.trust import is_trusted
    from agentica_cli.cli.mcp_config_edit import describe_server

    folder = (work_dir or Path.cwd()).expanduser().resolve()
    try:
        settings = load_settings(folder, {}, trusted=is_trusted(folder))
    except ConfigError as err:
        return _config_error(err)
    for problem in settings.warnings:  # a broken .mcp.json
        sys.stderr.write(f"agentica: warning: {safe_text(problem, keep_newlines=False)}\n")
    servers = settings.mcp_servers
    held = [(name, table, settings.project_file) for name, table in
            (settings.held_back.get("mcp_servers") or {}).items()]
    held += [(name, table, settings.mcp_json_file) for name, table in settings.mcp_json_held_back.items()]
    if not servers and not held:
        print("no MCP servers configured (agentica mcp add NAME -- COMMAND ARGS... adds one)")
        return exitcodes.OK
    for name, table in servers.items():
        where = settings.sources.get(f"mcp_servers.{name}", "config")
        print(safe_text(f"{name}  {describe_server(dict(table))}  [{where}]", keep_newlines=False))
    for name, table, path in held:
        print(safe_text(f"{name}  {describe_server(table)}  [{path}, not trusted: agentica --trust]",
                        keep_newlines=False))
    return exitcodes.OK


def mcp_add(
    name: Annotated[str, typer.Argument(help="the server's name (letters, digits, _ and -)")],
    command: Annotated[Optional[list[str]], typer.Argument(
        help="the program and its arguments for a stdio server (after --)", show_default=False)] = None,
    url: Annotated[Optional[str], typer.Option("--url", help="the URL of an SSE / streamable HTTP server")] = None,
    transport: Annotated[Optional[str], typer.Option(
        "--transport", help="stdio, sse, streamable-http or http (default: from the command or URL)")] = None,
    env: Annotated[Optional[list[str]], typer.Option(
        "-e", "--env", metavar="KEY=VALUE", help="an environment variable for a stdio server (repeatable)")] = None,
    header: Annotated[Optional[list[str]], typer.Option(
        "-H", "--header", metavar="KEY: VALUE", help="an HTTP header for a URL server (repeatable)")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="overwrite a server of the same name")] = False,
    scope: Annotated[str, typer.Option(
        "-s", "--scope", parser=_scope, metavar="user|project",
        help="user: ~/.agentica/config.toml (default); project: the project's .mcp.json (Claude Code's "
        "format, shared with the team; used once the project is trusted)")] = "user",
    oauth: Annotated[bool, typer.Option(
        "--oauth", help="a URL server behind OAuth: log in through the browser")] = False,
    oauth_scope: Annotated[Optional[list[str]], typer.Option(
        "--oauth-scope", metavar="SCOPE", help="an OAuth scope to ask for (repeatable; implies --oauth)")] = None,
    oauth_client_id: Annotated[Optional[str], typer.Option(
        "--oauth-client-id", help="a client registered in advance (no dynamic registration; implies --oauth)")] = None,
    oauth_client_secret: Annotated[Optional[str], typer.Option(
        "--oauth-client-secret", metavar="SECRET", help="its secret; write ${VAR} to keep it out of the file")] = None,
    oauth_callback_port: Annotated[Optional[int], typer.Option(
        "--oauth-callback-port", metavar="PORT", help="a fixed port for the login redirect "
        "(http://127.0.0.1:PORT/callback, as registered with --oauth-client-id)")] = None,
) -> int:
    """Add a server to the user config: `agentica mcp add files -- npx -y @scope/server /tmp`,
    `agentica mcp add docs --url https://host/mcp`, or behind OAuth:
    `agentica mcp add tracker --url https://host/mcp --oauth`. With `--scope project` it goes
    to the project's .mcp.json instead."""
    from agentica_cli.app.settings.config import ConfigError
    from agentica_cli.cli.mcp_config_edit import add_server, server_table

    if bool(command) == bool(url):
        sys.stderr.write("agentica: error: give either a command (after --) or --url\n")
        return exitcodes.USAGE_ERROR
    try:
        table = server_table(command=command, url=url, env=env or [], headers=header or [], transport=transport,
                             oauth=oauth, oauth_scopes=oauth_scope or [], oauth_client_id=oauth_client_id,
                             oauth_client_secret=oauth_client_secret, oauth_callback_port=oauth_callback_port)
        if scope == "project":
            from agentica_cli.app.settings import mcp_json
            from agentica_cli.app.settings.config import Settings, check_mcp_servers

            # the rules start-up applies (env only for a command, headers only for a URL, ...)
            check_mcp_servers(Settings(mcp_servers={name: table},
                                       sources={f"mcp_servers.{name}": "the new server"}))
            path = mcp_json.add_server(Path.cwd(), name, table, replace=replace)
        else:
            path = add_server(name, table, replace=replace)
    except (ConfigError, ValueError) as err:  # mcp_json.McpJsonError is a ValueError
        return _config_error(err)
    print(f"added MCP server {name} to {path}")
    if scope == "project":
        print("agentica starts it in projects you trust (agentica --trust); Claude Code reads the same file")
    if table.get("oauth"):
        print(f"it logs in with OAuth when it first starts (or: /mcp login {name}); tokens go to "
              "~/.agentica/mcp-auth/")
    return exitcodes.OK


def mcp_remove(
    name: Annotated[str, typer.Argument(help="the server's name")],
    scope: Annotated[str, typer.Option(
        "-s", "--scope", parser=_scope, metavar="user|project",
        help="user: ~/.agentica/config.toml (default); project: the project's .mcp.json")] = "user",
) -> int:
    """Remove a server from the user config (or, with --scope project, from the project's .mcp.json)."""
    from agentica_cli.app.settings.config import ConfigError
    from agentica_cli.cli.mcp_config_edit import remove_server

    try:
        if scope == "project":
            from agentica_cli.app.settings import mcp_json

            path = mcp_json.remove_server(Path.cwd(), name)
        else:
            path = remove_server(name)
    except (ConfigError, ValueError) as err:  # mcp_json.McpJsonError is a ValueError
        return _config_error(err)
    print(f"removed MCP server {name} from {path}")
    return exitcodes.OK


def sessions_list(
    all_folders: Annotated[bool, typer.Option("-a", "--all", help="sessions of every folder")] = False,
    work_dir: Annotated[Optional[Path], typer.Option(
        "-C", "--work-dir", help="the folder whose sessions are listed (default: the current folder)")] = None,
) -> int:
    """List saved sessions, newest first: this folder's (or --all)."""
    import os

    from agentica_cli.cli.session_commands import list_sessions

    folder = Path(os.path.realpath((work_dir or Path.cwd()).expanduser()))
    return list_sessions(folder, all_folders=all_folders)


def sessions_show(session_id: Annotated[str, typer.Argument(metavar="ID", help="a session id (or its start)")]) -> int:
    """Print a saved conversation: prompts, tool calls and answers."""
    from agentica_cli.cli.session_commands import show_session

    return show_session(session_id)


def sessions_rm(session_id: Annotated[str, typer.Argument(metavar="ID", help="a session id (or its start)")]) -> int:
    """Delete a saved session."""
    from agentica_cli.cli.session_commands import remove_session

    return remove_session(session_id)


def models(
    provider: Annotated[Optional[str], typer.Option(
        "--provider", metavar="NAME", help="a provider preset (default: the configured one)")] = None,
    base_url: Annotated[Optional[str], typer.Option(
        "--base-url", metavar="URL", help="an OpenAI-compatible endpoint (default: the configured one)")] = None,
    work_dir: Annotated[Optional[Path], typer.Option(
        "-C", "--work-dir", help="the project whose config is read too (default: the current folder)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON array: id, context_window, detail")] = False,
) -> int:
    """List the models the configured endpoint serves (GET /v1/models; Ollama: /api/tags); the
    configured model is marked with *. Pick one with --model ID or /model in a session."""
    from agentica_cli.tui.model_listing import run_models_command

    return run_models_command(work_dir, provider, base_url, as_json)


def doctor(
    work_dir: Annotated[Optional[Path], typer.Option(
        "-C", "--work-dir", help="the project to look at (default: the current folder)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the same as one JSON object")] = False,
) -> int:
    """List what a session here finds, loads and skips, and why: config files, instructions
    (AGENTS.md, CLAUDE.md and their imports), commands, agents, skills, hooks, MCP servers
    (not started) and trust."""
    from agentica_cli.cli.doctor import run_doctor

    return run_doctor(work_dir, as_json)


def register(app: typer.Typer) -> None:
    settings = {"help_option_names": ["-h", "--help"]}
    # --help goes to the ACP server's own parser, which lists its options
    app.command("acp", context_settings={"help_option_names": [], "ignore_unknown_options": True})(acp)
    mcp = typer.Typer(help=MCP_HELP, no_args_is_help=True, rich_markup_mode=None, context_settings=settings)
    mcp.command("list")(mcp_list)
    mcp.command("add")(mcp_add)
    mcp.command("remove")(mcp_remove)
    mcp.command("serve")(mcp_serve)
    app.add_typer(mcp, name="mcp")
    sessions = typer.Typer(help="Saved conversations (~/.agentica/sessions).", no_args_is_help=True,
                           rich_markup_mode=None, context_settings=settings)
    sessions.command("list")(sessions_list)
    sessions.command("show")(sessions_show)
    sessions.command("rm")(sessions_rm)
    app.add_typer(sessions, name="sessions")
    app.command("models", context_settings=settings)(models)
    app.command("doctor", context_settings=settings)(doctor)
    from agentica_cli.cli import batch_commands

    batch_commands.register(app)  # worktrees list|rm, batch, batch report
