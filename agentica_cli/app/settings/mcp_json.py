"""Claude Code's MCP config format: a project's `.mcp.json` and `--mcp-config FILE|JSON`.

    {"mcpServers": {"files": {"command": "npx", "args": ["-y", "server"], "env": {"K": "${K}"}},
                    "tracker": {"type": "http", "url": "https://host/mcp", "headers": {...}}}}

Each server becomes a `[mcp_servers.NAME]` table, so everything after loading (trust, /mcp,
starting, `${VAR}` expansion) is the TOML path's. A project's `.mcp.json` is somebody else's
config: config.load_settings holds its servers back until the project is trusted, and a
broken file or server is a warning (agentica starts without it). `--mcp-config` is the user's
own command line: trusted, and any problem is an error (exit 2).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.project_paths import project_folders, project_root
from agentica_cli.tools.mcp.env_refs import UnsetReference, check_table
from agentica_cli.tools.mcp.keys import TRANSPORTS

FILE_NAME = ".mcp.json"
SERVER_NAME_CHARS = "letters, digits, _ and -"
READ_NAME_CHARS = "letters, digits, _, -, . and spaces"  # what a name read from a file may use
KEYS = ("type", "command", "args", "env", "url", "headers", "headersHelper", "cwd")
# Claude Code's `type` -> our transport ("http" is streamable HTTP in both).
TYPES = {"stdio": "stdio", "http": "streamable-http", "streamable-http": "streamable-http", "sse": "sse"}


class McpJsonError(ValueError):
    """Bad `--mcp-config` input, or a `.mcp.json` that cannot be edited; names the file and server."""


@dataclass
class McpJson:
    """The servers of one file (or JSON string), as config tables, and what was wrong with it."""

    where: str  # the file, or "--mcp-config (JSON text)": for messages and `agentica mcp list`
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # each names `where` (and the server)
    notices: list[str] = field(default_factory=list)  # keys ignored (Claude Code ignores them too)


@dataclass
class CommandLineMcp:
    """`--mcp-config` (any number) and `--strict-mcp-config`: the top layer of MCP servers."""

    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # server name -> where it came from
    strict: bool = False  # only these servers: every config file's are ignored


def _valid_name(name: str) -> bool:
    return bool(name) and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)


def _readable_name(name: str) -> bool:
    """A name in someone's .mcp.json (`docs.site`, `GSD-2 Code`): tool names use a safe form of it."""
    return bool(name.strip()) and name[0] not in ". " and all(c.isascii() and (c.isalnum() or c in "_-. ")
                                                              for c in name)


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{what}' must be a list of strings, got {json.dumps(value)[:80]}")
    return value


def _string_map(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"'{what}' must be an object of strings, got {json.dumps(value)[:80]}")
    return value


def server_table(entry: Any, *, cwd: Path | None = None, ignored: list[str] | None = None) -> dict[str, Any]:
    """One `mcpServers` entry as a `[mcp_servers.NAME]` table; ValueError says what is wrong.
    `cwd`: where a stdio server starts (a project's folder, so `./server.js` works). Keys not
    in KEYS (`description`, `alwaysAllow`, `disabled`, ...) are left out, as Claude Code leaves
    them, and named in `ignored`; with `ignored` None they are an error."""
    if not isinstance(entry, dict):
        raise ValueError(f"must be an object, got {json.dumps(entry)[:80]}")
    unknown = [key for key in entry if key not in KEYS]
    if unknown and ignored is None:
        raise ValueError(f"unknown key '{unknown[0]}' (known keys: {', '.join(KEYS)})")
    if unknown:
        ignored += unknown
        entry = {key: value for key, value in entry.items() if key in KEYS}
    kind = entry.get("type")
    if kind is not None and kind not in TYPES:
        raise ValueError(f"'type' must be one of stdio, http, sse, got {json.dumps(kind)[:40]}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ValueError("needs either 'command' (a stdio server) or 'url' (type http or sse)"
                         if not has_command else "has both 'command' and 'url': give one")
    table: dict[str, Any] = {}
    if has_command:
        if kind not in (None, "stdio"):
            raise ValueError(f"type '{kind}' needs 'url', not 'command'")
        for key in ("url", "headers", "headersHelper"):
            if key in entry:
                raise ValueError(f"'{key}' is for a url server, not a 'command' one")
        if not isinstance(entry["command"], str) or not entry["command"].strip():
            raise ValueError("'command' must be a non-empty string")
        table["command"] = entry["command"]
        if "args" in entry:
            table["args"] = _strings(entry["args"], "args")
        if "env" in entry:
            table["env"] = _string_map(entry["env"], "env")
        if "cwd" in entry:  # relative to the file's folder
            if not isinstance(entry["cwd"], str) or not entry["cwd"].strip():
                raise ValueError("'cwd' must be a folder")
            given = Path(entry["cwd"]).expanduser()
            table["cwd"] = str(given if given.is_absolute() or cwd is None else cwd / given)
        elif cwd is not None:
            table["cwd"] = str(cwd)
        return table
    if kind == "stdio":
        raise ValueError("type 'stdio' needs 'command', not 'url'")
    for key in ("args", "env", "cwd"):
        if key in entry:
            raise ValueError(f"'{key}' is for a 'command' server, not a url one")
    if not isinstance(entry["url"], str) or not entry["url"].strip():
        raise ValueError("'url' must be a non-empty string")
    table["url"] = entry["url"]
    if kind is not None:
        table["transport"] = TYPES[kind]
    if "headers" in entry:
        table["headers"] = _string_map(entry["headers"], "headers")
    if "headersHelper" in entry:  # run when the server is started, in a trusted project only
        if not isinstance(entry["headersHelper"], str) or not entry["headersHelper"].strip():
            raise ValueError("'headersHelper' must be a shell command")
        table["headers_helper"] = entry["headersHelper"]
    return table


def parse(text: str, where: str, *, cwd: Path | None = None, lenient: bool = False) -> McpJson:
    """The servers in `text`; a bad file gives no servers, a bad server is left out (both go
    to `problems`, each naming `where` and the server). `lenient` (a project's file, as
    Claude Code reads it): unknown keys are ignored (`notices` names them) and names may have
    dots and spaces."""
    out = McpJson(where)
    try:
        data = json.loads(text)
    except ValueError as err:
        out.problems.append(f"{where}: not valid JSON: {err}")
        return out
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        out.problems.append(f'{where}: expected an object {{"mcpServers": {{"NAME": {{...}}}}}}, '
                            f"found no \"mcpServers\" object")
        return out
    for name, entry in servers.items():
        if not (_readable_name(name) if lenient else _valid_name(name)):
            allowed = READ_NAME_CHARS if lenient else SERVER_NAME_CHARS
            out.problems.append(f"{where}: server {json.dumps(name)}: a name may use only {allowed}")
            continue
        ignored: list[str] | None = [] if lenient else None
        try:
            out.servers[name] = server_table(entry, cwd=cwd, ignored=ignored)
        except ValueError as err:
            out.problems.append(f"{where}: server '{name}': {err}")
            continue
        if ignored:
            out.notices.append(f"{where}: server '{name}': ignored {', '.join(repr(k) for k in ignored)} "
                               f"(not part of the format agentica reads: {', '.join(KEYS)})")
    return out


# -- a project's .mcp.json -------------------------------------------------------------------


def project_file(work_dir: Path) -> Path | None:
    """The nearest `.mcp.json` from the work dir up to the git root (or the work dir alone)."""
    for folder in project_folders(work_dir):
        candidate = folder / FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def read_project(path: Path) -> McpJson:
    """A project's `.mcp.json`: its stdio servers start in its folder. Never raises."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return McpJson(str(path), problems=[f"{path}: cannot read: {getattr(err, 'strerror', None) or err}"])
    return parse(text, str(path), cwd=path.parent.resolve(), lenient=True)


# -- --mcp-config -----------------------------------------------------------------------------


def command_line(values: list[str], *, strict: bool) -> CommandLineMcp:
    """`--mcp-config` values (files, or JSON text starting with `{`), later ones winning a
    name. Raises McpJsonError at the first problem: the user gave these, so nothing is skipped."""
    out = CommandLineMcp(strict=strict)
    for value in values:
        if value.lstrip().startswith("{"):
            found = parse(value, "--mcp-config (JSON text)")
        else:
            path = Path(value).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                reason = "no such file" if isinstance(err, FileNotFoundError) else (
                    getattr(err, "strerror", None) or str(err))
                raise McpJsonError(f"--mcp-config {value}: {reason}") from None
            found = parse(text, f"--mcp-config {value}")
        if found.problems:
            raise McpJsonError(found.problems[0])
        for name, table in found.servers.items():
            try:  # a variable the user forgot to export: say so now, not when the server fails
                check_table(table, f"{found.where}: server '{name}': ")
            except UnsetReference as err:
                raise McpJsonError(f"{err} (or write ${{{err.var}:-default}})") from None
            out.servers[name] = table
            out.sources[name] = found.where
    return out


# -- `agentica mcp add --scope project` ----------------------------------------------------------


def entry_for(table: dict[str, Any]) -> dict[str, Any]:
    """A `[mcp_servers.NAME]` table (from `agentica mcp add`) as a `.mcp.json` entry."""
    beyond = sorted(set(table) - {"command", "args", "env", "url", "headers", "transport", "headers_helper"})
    if beyond:
        raise McpJsonError(f"{', '.join(beyond)}: not part of the .mcp.json format; "
                          "add this server to your user config instead (--scope user)")
    if "command" in table:
        entry: dict[str, Any] = {"type": "stdio", "command": table["command"]}
        entry.update({key: table[key] for key in ("args", "env") if key in table})
        return entry
    transport = table.get("transport")
    if transport not in (None, *TRANSPORTS) or transport == "stdio":
        raise McpJsonError(f"--transport {transport}: a url server is http or sse")
    url = table["url"]
    guessed_sse = url.split("?")[0].rstrip("/").endswith("/sse")
    kind = "sse" if transport == "sse" or (transport is None and guessed_sse) else "http"
    entry = {"type": kind, "url": url}
    if "headers" in table:
        entry["headers"] = table["headers"]
    if "headers_helper" in table:
        entry["headersHelper"] = table["headers_helper"]
    return entry


def _read_for_edit(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"mcpServers": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise McpJsonError(f"{path}: cannot read it as JSON ({err}); fix it by hand first") from None
    if not isinstance(data, dict) or not isinstance(data.setdefault("mcpServers", {}), dict):
        raise McpJsonError(f'{path}: expected an object {{"mcpServers": {{...}}}}; fix it by hand first')
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    # A shared project file: ordinary permissions, written whole through a rename (a crash
    # never leaves half a file the team's other tools would choke on).
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def edit_target(work_dir: Path) -> Path:
    """The `.mcp.json` that `--scope project` edits: the one start-up reads, else a new one at
    the project root (the git root, or the folder itself)."""
    return project_file(work_dir) or project_root(work_dir) / FILE_NAME


def add_server(work_dir: Path, name: str, table: dict[str, Any], *, replace: bool = False) -> Path:
    if not _valid_name(name):
        raise McpJsonError(f"server name {name!r}: use only {SERVER_NAME_CHARS}")
    entry = entry_for(table)
    server_table(entry)  # what we write, start-up must read back
    path = edit_target(work_dir)
    data = _read_for_edit(path)
    if name in data["mcpServers"] and not replace:
        raise McpJsonError(f"{path}: an MCP server named {name!r} is already there (--replace to overwrite it)")
    data["mcpServers"][name] = entry
    _write(path, data)
    return path


def remove_server(work_dir: Path, name: str) -> Path:
    path = project_file(work_dir)
    if path is None:
        raise McpJsonError(f"no {FILE_NAME} in this project ({work_dir})")
    data = _read_for_edit(path)
    if name not in data["mcpServers"]:
        raise McpJsonError(f"{path}: no MCP server named {name!r}")
    del data["mcpServers"][name]
    _write(path, data)
    return path
