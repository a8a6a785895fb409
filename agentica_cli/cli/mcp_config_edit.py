"""`agentica mcp list|add|remove`: the MCP servers of the config files, edited as text.

`add` and `remove` change only the user config (~/.agentica/config.toml, AGENTICA_HOME moves
it): a `[mcp_servers.NAME]` table is appended or cut out, and every other line is kept as the
user wrote it (comments included). The new table is checked by the same rules as at start-up
before the file is touched, and the file is read back after: a write that would leave it
unreadable is undone. A project's servers are edited in its own .agentica/config.toml.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.config import ConfigError, Settings, check_mcp_servers, load_toml
from agentica_cli.private_files import agentica_home, open_private

NAME = re.compile(r"[A-Za-z0-9_-]+")
_HEADER = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(?:\"([^\"]+)\"|'([^']+)'|([A-Za-z0-9_-]+))\s*(\.|\])")


def user_config() -> Path:
    return agentica_home() / "config.toml"


def toml_string(value: str) -> str:
    # JSON's string escapes are TOML's, apart from DEL, which TOML wants escaped too.
    return json.dumps(value).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def server_table(
    *,
    command: list[str] | None = None,
    url: str | None = None,
    env: list[str] = (),  # type: ignore[assignment]
    headers: list[str] = (),  # type: ignore[assignment]
    transport: str | None = None,
    oauth: bool = False,
    oauth_scopes: list[str] = (),  # type: ignore[assignment]
    oauth_client_id: str | None = None,
    oauth_client_secret: str | None = None,
    oauth_callback_port: int | None = None,
) -> dict[str, Any]:
    """The config table for a stdio server (`command`: program and its arguments) or a URL one
    (with OAuth settings when given: any of them means oauth = true)."""
    table: dict[str, Any] = {}
    if command:
        table["command"] = command[0]
        if command[1:]:
            table["args"] = list(command[1:])
    if url:
        table["url"] = url
    if transport:
        table["transport"] = transport
    if env:
        table["env"] = _pairs(env, "--env", "=")
    if headers:
        table["headers"] = _pairs(headers, "--header", ":")
    extra = {"oauth_scopes": list(oauth_scopes), "oauth_client_id": oauth_client_id,
             "oauth_client_secret": oauth_client_secret, "oauth_callback_port": oauth_callback_port}
    extra = {key: value for key, value in extra.items() if value}
    if oauth or extra:
        table["oauth"] = True
        table.update(extra)
    return table


def _pairs(items: list[str], flag: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep) if sep in item else item.partition("=")
        if not found or not key.strip():
            raise ConfigError(f"{flag} {item!r}: expected KEY{sep}VALUE")
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _write_checked(path: Path, text: str, before: str) -> None:
    """Write `text`, then read the file back as config; put `before` back if that fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_private(path, "w", encoding="utf-8") as fh:  # the file may hold an API key
        fh.write(text)
    try:
        load_toml(path)
    except ConfigError:
        with open_private(path, "w", encoding="utf-8") as fh:
            fh.write(before)
        raise


def add_server(name: str, table: dict[str, Any], *, replace: bool = False) -> Path:
    if not NAME.fullmatch(name):
        raise ConfigError(f"server name {name!r}: use only letters, digits, _ and -")
    check_mcp_servers(Settings(mcp_servers={name: table}, sources={f"mcp_servers.{name}": "the new server"}))
    path = user_config()
    before = _read(path)
    existing = load_toml(path).get("mcp_servers", {}) if path.exists() else {}
    text = before
    if name in existing:
        if not replace:
            raise ConfigError(f"{path}: an MCP server named {name!r} is already there (--replace to overwrite it)")
        text = _cut_table(before, name, path)
    lines = [f"[mcp_servers.{name}]"] + [f"{key} = {toml_value(value)}" for key, value in table.items()]
    if text and not text.endswith("\n"):
        text += "\n"
    if text.strip():
        text += "\n"
    _write_checked(path, text + "\n".join(lines) + "\n", before)
    return path


def remove_server(name: str) -> Path:
    path = user_config()
    before = _read(path)
    if name not in (load_toml(path).get("mcp_servers", {}) if path.exists() else {}):
        raise ConfigError(f"{path}: no MCP server named {name!r}")
    _write_checked(path, _cut_table(before, name, path), before)
    if name in load_toml(path).get("mcp_servers", {}):
        _write_checked(path, before, before)
        raise ConfigError(f"{path}: {name!r} is not written as a [mcp_servers.{name}] table; remove it by hand")
    return path


def _cut_table(text: str, name: str, path: Path) -> str:
    """`text` without the `[mcp_servers.NAME]` table and its sub-tables (`[mcp_servers.NAME.env]`)."""
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            match = _HEADER.match(line)
            inside = match is not None and name in match.groups()[:3]
        if not inside:
            out.append(line)
    return "".join(out).rstrip("\n") + "\n" if "".join(out).strip() else ""


def describe_server(table: Mapping[str, Any]) -> str:
    if "url" in table:
        where = f"{table.get('transport', 'http')} {table['url']}"
    else:
        where = "stdio " + " ".join([str(table.get("command", "?")), *map(str, table.get("args", []))])
    if table.get("oauth") or any(key.startswith("oauth_") for key in table):
        scopes = " ".join(table.get("oauth_scopes") or ())
        where += f"  (OAuth{', scopes: ' + scopes if scopes else ''})"
    return where + ("" if table.get("enabled", True) else "  (disabled)")
