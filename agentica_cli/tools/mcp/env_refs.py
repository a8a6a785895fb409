"""`${VAR}` and `${VAR:-default}` in MCP server settings, filled in from our environment.

The same rules for `[mcp_servers.NAME]` tables and for Claude Code's `.mcp.json` files: a
shared config names the variable, each user's environment holds the value (a token stays
out of the file). Light on purpose: the CLI checks references while loading its config,
before the MCP SDK is imported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

# A shell-style name, then an optional `:-default` (anything up to the closing brace).
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

# The table keys whose strings are expanded (Claude Code's list: command, args, env, url,
# headers; plus the OAuth secret, which has always been read this way).
EXPANDED_KEYS = ("command", "args", "env", "url", "headers", "oauth_client_secret")


class UnsetReference(ValueError):
    """A `${VAR}` without a default whose variable is not set (or empty)."""

    def __init__(self, where: str, var: str):
        self.where = where
        self.var = var
        super().__init__(f"{where} refers to ${{{var}}}, which is not set in the environment")


def expand(value: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`value` with every reference replaced. Like the shell's `${VAR:-default}`, an empty
    variable takes the default too; `${VAR}` of an unset variable raises UnsetReference."""
    env = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        if env.get(var):
            return env[var]
        if default is not None:
            return default
        if var in env:  # set but empty: an empty value is what the user gave
            return ""
        raise UnsetReference(where, var)

    return _REFERENCE.sub(replace, value)


def table_strings(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(key, text) of every expanded string in a server table, in key order; `prefix` goes
    before each key (`mcp_servers.NAME.`) so a message can name it."""
    for key in EXPANDED_KEYS:
        value = table.get(key)
        where = prefix + key
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, list):
            yield from ((f"{where}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str))
        elif isinstance(value, dict):
            yield from ((f"{where}.{k}", v) for k, v in value.items() if isinstance(v, str))


def check_table(table: Mapping[str, Any], prefix: str = "", environ: Mapping[str, str] | None = None) -> None:
    """Raise UnsetReference for the first reference in `table` that cannot be filled in."""
    for where, text in table_strings(table, prefix):
        expand(text, where, environ)
