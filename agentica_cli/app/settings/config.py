"""Settings for the `agentica` command, from four layers in rising precedence:

    ~/.agentica/config.toml  <  <project>/.agentica/config.toml  <  AGENTICA_* env vars  <  flags

Every layer is checked against `SCHEMA` (derived from the typed tables of settings/schema.py);
an unknown key or a wrong type is a `ConfigError` naming the key and the file (the command exits
2). The merged layers become the typed `Settings` once, at the end of `load_settings`.
Project-level keys that start programs or loosen safety (`UNTRUSTED_PROJECT_KEYS`) are held
back until the project is trusted.
MCP servers may also come from Claude Code's files (cli/mcp_json.py): a project's
`.mcp.json` (held back like the project's own `[mcp_servers]`) and `--mcp-config`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.app.settings.project_paths import project_folders
from agentica_cli.app.settings.schema import (  # noqa: F401  (the names stay importable from here)
    HOOK_SCHEMA,
    LIFECYCLE_HOOK_EVENTS,
    LIFECYCLE_HOOK_SCHEMA,
    MCP_SERVER_SCHEMA,
    PERMISSION_MODES,
    PROVIDERS,
    REASONING_EFFORTS,
    SCHEMA,
    TOOL_CALL_FORMATS,
    TOOLKIT_OPTIONS,
    CheckpointSettings,
    Config,
    ModelSettings,
    ModelsSettings,
    PermissionSettings,
    SandboxSettings,
    ToolkitSettings,
    ToolSettings,
    UiSettings,
    build,
    schema_of,
)
from agentica_cli.private_files import agentica_home, open_private

if TYPE_CHECKING:
    from agentica_cli.app.settings.mcp_json import CommandLineMcp

class ConfigError(Exception):
    """A bad setting; the message names the key and where it came from."""


# Keys a project config may only set once the user trusts the project (docs/security.md lists
# them with these reasons): they start programs, decide where the user's key or data goes,
# stop agentica asking, or let a run hang or spend without bound. A key added to SCHEMA
# must be put here or in PROJECT_KEYS_WITHOUT_TRUST (a test checks that every key is in
# one of them; a key in neither is held back too).
UNTRUSTED_PROJECT_KEYS = (
    "mcp_servers",  # starts programs
    "hooks",  # runs commands
    "model.provider",  # where the key goes (any header or proxy key added to [model] too)
    "model.base_url",
    "model.api_key",  # a key of the project's own, sent with your prompts
    "model.request_timeout",  # 0 or days: a dead server holds the run forever
    "model.attempt_timeout",
    "model.stall_timeout",
    "model.max_tokens",  # how much one answer may cost
    "model.reasoning_effort",
    "model.extra_body",  # anything in the request body (and what it costs)
    "model.context_window",  # when the context is compacted (or overflows)
    "model.tool_call_format",  # the model's text would run as tool calls
    "model.dialect",  # which reasoning, signatures and details go back to the provider
    "permissions.mode",  # stops agentica asking
    "permissions.allow",
    "permissions.deny",
    "permissions.ask",
    "tools.max_turns",  # how many requests one prompt may spend
    "tools.tool_call_limit",
    "tools.max_result_tokens",  # how much of each tool result is sent (and paid for)
    "tools.context_overflow_threshold",  # when the context is compacted (or overflows)
    "tools.compress_tool_results",
    "tools.enable",  # toolkits: run programs (shell, code), send data to web services
    "tools.fetch_allow_private",  # lets fetch_url reach this machine's and the LAN's services
    "toolkits",  # base_url decides where a toolkit's key goes
    "instructions",  # uncapped text sent with every request (AGENTS.md is the capped way)
    "prices",  # what --max-cost counts: a project's low prices would lift the spending limit
    "ui.statusline",  # runs a program
    "ui.history",  # whether your prompts are written to disk
    "checkpoints",  # pruning deletes other projects' snapshots; size decides what is copied
    "sandbox.mode",  # loosens the command sandbox
    "sandbox.backend",
    "sandbox.network",
    "sandbox.unix_sockets",  # lets commands reach local services' sockets (docker, ssh-agent, databases)
    "sandbox.env_allow",  # passes secrets to commands
)

# What a project may set before it is trusted: none of these starts a program, sends the
# key or data anywhere new, asks less, or raises a limit.
PROJECT_KEYS_WITHOUT_TRUST = (
    "model.name",  # a model of the same provider, with the same key; shown in the banner
    "model.choices",  # only offered in an editor's model picker; you pick
    "model.vision",  # whether images you attach are sent to the same model
    "models.aliases",  # which model of the same provider a command's Claude model name means
    "tools.exclude",  # fewer tools
    "ui.markdown",
    "ui.show_reasoning",
    "ui.notify",
    "ui.notify_after",
    "ui.editing_mode",
    "sandbox.hide",  # more paths commands cannot read
)


def _held_back(layer: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Pop from an untrusted project's `layer` every key not in PROJECT_KEYS_WITHOUT_TRUST;
    returns them by dotted name (a listed table whole, e.g. 'hooks')."""
    held: dict[str, Any] = {}
    for key in list(layer):
        dotted = prefix + key
        if dotted in PROJECT_KEYS_WITHOUT_TRUST:
            continue
        if isinstance(layer[key], dict) and dotted not in UNTRUSTED_PROJECT_KEYS:
            held.update(_held_back(layer[key], dotted + "."))
            if not layer[key]:
                del layer[key]
        else:
            held[dotted] = layer.pop(key)
    return held


ENV_VARS: dict[str, str] = {
    "AGENTICA_PROVIDER": "model.provider",
    "AGENTICA_MODEL": "model.name",
    "AGENTICA_BASE_URL": "model.base_url",
    "AGENTICA_API_KEY": "model.api_key",
    "AGENTICA_PERMISSION_MODE": "permissions.mode",
}


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )


def _check_leaf(kind: Any, value: Any, key: str, where: str) -> Any:
    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{where}: '{key}' must be {expected}, got {_type_name(value)} {value!r}")

    if kind == "provider":  # a name or alias the model presets know (zhipuai, glm, kimi, vllm, ...)
        if not isinstance(value, str):
            raise bad("a string")
        from agentica_cli.models.presets import provider_class

        try:
            provider_class(value)
        except ValueError:
            raise bad(f"one of {', '.join(PROVIDERS)}") from None
        return value
    if isinstance(kind, tuple):
        if not isinstance(value, str) or value not in kind:
            return_msg = f"one of {', '.join(kind)}"
            raise bad(return_msg)
        return value
    if kind == "str":
        if not isinstance(value, str):
            raise bad("a string")
    elif kind == "bool":
        if not isinstance(value, bool):
            raise bad("a boolean (true/false)")
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        value = float(value)
    elif kind == "list[str]":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("an array of strings")
    elif kind == "prices":
        from agentica_cli.app.prices import PriceError, parse_prices

        if not isinstance(value, dict):
            raise bad('a table ([prices] "model" = { input = 0.28, output = 0.42 })')
        try:
            parse_prices(value)
        except PriceError as err:
            raise ConfigError(f"{where}: {err}") from None
    elif kind == "table":
        if not isinstance(value, dict):
            raise bad("a table (e.g. extra_body = {thinking = {type = \"disabled\"}})")
    elif kind == "dict[str,str]" and (
        not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values())
    ):
        raise bad("a table of strings")
    return value


def validate(data: dict[str, Any], where: str, schema: dict[str, Any] = SCHEMA, prefix: str = "") -> dict[str, Any]:
    """Check `data` against `schema`; return it with numbers normalised. Raises ConfigError."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        kind = schema.get(key, schema.get("*"))
        if kind is None:
            known = ", ".join(f"{prefix}{k}" for k in schema)
            raise ConfigError(f"{where}: unknown key '{dotted}' (known keys here: {known})")
        if isinstance(kind, list):  # an array of tables, each checked against kind[0]
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise ConfigError(f"{where}: '{dotted}' must be an array of tables ([[{dotted}]])")
            out[key] = [validate(item, where, kind[0], f"{dotted}[{i}].") for i, item in enumerate(value)]
            for i, item in enumerate(out[key]):
                if not {"command", "prompt", "url"} & set(item):  # a prompt hook has its prompt, http its url
                    raise ConfigError(f"{where}: '{dotted}[{i}]' needs a 'command'")
        elif isinstance(kind, dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: '{dotted}' must be a table ([{dotted}]), got {_type_name(value)}")
            out[key] = validate(value, where, kind, dotted + ".")
        else:
            out[key] = _check_leaf(kind, value, dotted, where)
    return out


def load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - 3.10
        import tomli as tomllib
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    except UnicodeDecodeError as err:  # TOML is UTF-8; a file saved as Latin-1/GBK/UTF-16 lands here
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset {err.start}); save it as UTF-8"
        ) from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror or err}") from None
    return validate(data, str(path))


# -- merging ----------------------------------------------------------------------------


def get_key(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def set_key(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def pop_key(data: dict[str, Any], dotted: str) -> Any:
    *parents, last = dotted.split(".")
    node: Any = data
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return None
    return node.pop(last, None) if isinstance(node, dict) else None


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; anything else in `top` replaces `base`."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "mcp_servers":
            out[key] = merge(out[key], value)
        elif key == "mcp_servers" and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}  # a server is defined whole by one layer
        else:
            out[key] = value
    return out


# -- locating files --------------------------------------------------------------------


def project_config_path(work_dir: Path) -> Path | None:
    """The nearest `.agentica/config.toml` from the work dir up to the git root (or just
    the work dir outside git), never the user's own ~/.agentica."""
    home = agentica_home().resolve()
    for folder in project_folders(work_dir):
        candidate = folder / ".agentica" / "config.toml"
        if candidate.parent.resolve() == home:
            continue
        if candidate.is_file():
            return candidate
    return None


# -- the resolved settings ---------------------------------------------------------------


@dataclass
class Settings(Config):
    """The settings in force: the typed tables of `Config` (checked and built once, at load) and
    where each key came from. Code reads the tables (`settings.model.request_timeout`); a change
    for this run replaces a table whole (`settings.model = replace(settings.model, name=...)`)."""

    sources: dict[str, str] = field(default_factory=dict)  # dotted key -> where it came from
    user_file: Path | None = None
    project_file: Path | None = None
    held_back: dict[str, Any] = field(default_factory=dict)  # untrusted project keys not applied
    mcp_json_file: Path | None = None  # the project's .mcp.json (Claude Code's format), if any
    mcp_json_held_back: dict[str, Any] = field(default_factory=dict)  # its servers, while untrusted
    # Problems that do not stop agentica (a broken project .mcp.json): shown as warnings.
    warnings: list[str] = field(default_factory=list)
    unsent_key: str | None = None  # why a configured api_key is not sent (set for another provider)
    # [permissions] allow/deny/ask of every layer (they add up; a later layer does not replace
    # an earlier one's rules): (kind, rule, where it came from)
    permission_rules: list[tuple[str, str, str]] = field(default_factory=list)
    # The run's command sandbox (agentica_cli.sandbox.Sandbox), built once from these settings by
    # app/sandbox_settings.sandbox_for; the policy, the execute tool and the banner share it.
    command_sandbox: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def from_data(cls, data: dict[str, Any], where: str = "settings", **loaded: Any) -> Settings:
        """Settings from one TOML-shaped table (checked here, the error naming `where`); `loaded`:
        the other fields (sources, ...)."""
        config = build(Config, validate(data, where))
        return cls(**{f: getattr(config, f) for f in SCHEMA}, **loaded)

    def get(self, dotted: str, default: Any = None) -> Any:
        """The value of a dotted key (`model.request_timeout`), or `default` when it is None: for
        names that arrive as text (tests, a command line). Code reads the typed attributes."""
        node: Any = self
        for part in dotted.split("."):
            if isinstance(node, Mapping):
                node = node.get(part)
            elif part in getattr(node, "__dataclass_fields__", ()):
                node = getattr(node, part)
            else:
                raise KeyError(f"no setting {dotted!r}")
            if node is None:
                return default
        return node

    @property
    def provider(self) -> str | None:
        return self.model.provider

    @property
    def model_name(self) -> str | None:
        return self.model.name

    @property
    def base_url(self) -> str | None:
        return self.model.base_url or None

    @property
    def api_key(self) -> str | None:
        return self.model.api_key or None

    @property
    def permission_mode(self) -> str:
        return self.permissions.mode

    @property
    def explicit_auto(self) -> bool:
        """auto mode chosen by the person running the command (--yes, the flag, or the
        environment), not by a config file: only then do sensitive writes run unasked."""
        return self.permission_mode == "auto" and self.sources.get("permissions.mode") in (
            "command line",
            "environment",
        )


def _record_sources(data: dict[str, Any], where: str, sources: dict[str, str], prefix: str = "") -> None:
    for key, value in data.items():
        dotted = prefix + key
        if key == "mcp_servers" and not prefix and isinstance(value, dict):
            for name in value:
                sources[f"mcp_servers.{name}"] = where  # a server is defined whole by one file
        elif isinstance(value, dict):
            _record_sources(value, where, sources, dotted + ".")
        else:
            sources[dotted] = where


# The command line's rules are shown (/permissions) and reported with the flag that gave them.
RULE_FLAGS = {"allow": "--allowed-tools", "deny": "--disallowed-tools"}


def _collect_rules(layer: dict[str, Any], where: str, rules: list[tuple[str, str, str]],
                   *, from_flags: bool = False) -> None:
    table = layer.get("permissions")
    if not isinstance(table, dict):
        return
    from agentica_cli.app.permissions.permission_rules import PermissionRule, RuleError

    for kind in ("deny", "ask", "allow"):
        source = RULE_FLAGS.get(kind, where) if from_flags else where
        for text in table.get(kind) or []:
            try:
                PermissionRule.parse(kind, text, source)
            except RuleError as err:
                raise ConfigError(f"{source}: 'permissions.{kind}': {err}") from None
            rules.append((kind, text, source))


def env_layer(environ: dict[str, str] | os._Environ[str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for var, dotted in ENV_VARS.items():
        value = environ.get(var)
        if value:
            single: dict[str, Any] = {}
            set_key(single, dotted, value)
            layer = merge(layer, validate(single, f"environment variable {var}"))  # the error names the variable
    return layer


def load_settings(
    work_dir: Path,
    flags: dict[str, Any],
    *,
    trusted: bool,
    environ: dict[str, str] | os._Environ[str] | None = None,
    mcp_flags: CommandLineMcp | None = None,
) -> Settings:
    """Merge the four layers. `flags` maps dotted keys to values given on the command line;
    `mcp_flags` the servers of `--mcp-config` (the top layer; `strict`: the only ones).

    MCP servers, lowest to highest precedence (a server is defined whole by one layer):
    user config < project .mcp.json < project .agentica/config.toml < --mcp-config."""
    environ = os.environ if environ is None else environ
    strict_mcp = mcp_flags is not None and mcp_flags.strict
    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    user_file = agentica_home() / "config.toml"
    settings = Settings()
    key_for: str | None = None  # the provider a config file's api_key was set for
    if user_file.is_file():
        layer = load_toml(user_file)
        if strict_mcp:
            layer.pop("mcp_servers", None)
        settings.user_file = user_file
        _record_sources(layer, str(user_file), sources)
        _collect_rules(layer, str(user_file), settings.permission_rules)
        data = merge(data, layer)
        key_for = _key_provider(layer, data, key_for)
    if not strict_mcp:
        data = _merge_project_mcp_json(settings, work_dir, data, sources, trusted=trusted)
    project_file = project_config_path(work_dir)
    if project_file is not None:
        layer = load_toml(project_file)
        if strict_mcp:
            layer.pop("mcp_servers", None)
        settings.project_file = project_file
        if not trusted:
            settings.held_back = _held_back(layer)
        _record_sources(layer, str(project_file), sources)
        _collect_rules(layer, str(project_file), settings.permission_rules)
        data = merge(data, layer)
        key_for = _key_provider(layer, data, key_for)
    layer = env_layer(environ)
    _record_sources(layer, "environment", sources)
    data = merge(data, layer)
    key_for = None if get_key(layer, "model.api_key") else key_for
    flag_layer: dict[str, Any] = {}
    for dotted, value in flags.items():
        if value is not None:
            set_key(flag_layer, dotted, value)
    flag_layer = validate(flag_layer, "command line")
    _record_sources(flag_layer, "command line", sources)
    _collect_rules(flag_layer, "command line", settings.permission_rules, from_flags=True)
    data = merge(data, flag_layer)
    key_for = None if get_key(flag_layer, "model.api_key") else key_for
    if mcp_flags is not None and mcp_flags.servers:
        data = merge(data, {"mcp_servers": validate({"mcp_servers": mcp_flags.servers}, "--mcp-config")["mcp_servers"]})
        sources.update({f"mcp_servers.{name}": where for name, where in mcp_flags.sources.items()})
    settings.sources = sources
    settings.unsent_key = _keep_key_with_its_provider(data, sources, key_for)
    config = build(Config, data)  # every layer was checked as it was read
    for table in SCHEMA:
        setattr(settings, table, getattr(config, table))
    return settings


def _merge_project_mcp_json(settings: Settings, work_dir: Path, data: dict[str, Any], sources: dict[str, str],
                            *, trusted: bool) -> dict[str, Any]:
    """The project's `.mcp.json` servers over `data`, or held back until the project is trusted.
    A broken file or server is a warning, never an error: a cloned repository must not stop
    agentica from starting."""
    from agentica_cli.app.settings.mcp_json import project_file, read_project

    path = project_file(work_dir)
    if path is None:
        return data
    settings.mcp_json_file = path
    found = read_project(path)
    settings.warnings += [f"{problem}; going on without it" for problem in found.problems]
    settings.warnings += found.notices
    if not trusted:
        settings.mcp_json_held_back = found.servers
        return data
    for name in found.servers:
        sources[f"mcp_servers.{name}"] = str(path)
    return merge(data, {"mcp_servers": found.servers})


# -- which provider a key is for ----------------------------------------------------------
# A key in a config file goes only to the provider in force in that file (its own
# `provider`, else the user config's, else openai): a layer above that switches provider
# (a project, AGENTICA_PROVIDER, --provider) does not take the user's OpenAI key along to
# another company or a local server. A key from the environment or the command line
# (AGENTICA_API_KEY, --api-key) is for the provider this run uses: the user chose both.


def _key_provider(layer: dict[str, Any], merged: dict[str, Any], key_for: str | None) -> str | None:
    """After a config file's layer is merged: the provider its api_key (if it sets one) is for."""
    if get_key(layer, "model.api_key") is None:
        return key_for
    return get_key(merged, "model.provider") or "openai"


def _same_provider(a: str, b: str) -> bool:
    from agentica_cli.models.presets import provider_class  # validation imported it already

    return provider_class(a) is provider_class(b)


def _keep_key_with_its_provider(data: dict[str, Any], sources: dict[str, str], key_for: str | None) -> str | None:
    """Drop the api_key from `data` when it was set for another provider; say why."""
    if key_for is None or get_key(data, "model.api_key") is None:
        return None
    provider = get_key(data, "model.provider") or "openai"
    if _same_provider(key_for, provider):
        return None
    pop_key(data, "model.api_key")
    where = sources.pop("model.api_key", "config")
    by = sources.get("model.provider", "config")
    by = f"the {by}" if by in ("command line", "environment") else by
    return f"the api_key in {where} is for '{key_for}'; it is not sent to '{provider}', chosen by {by}"


# -- writing the key the REPL asked for ---------------------------------------------------


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def save_user_setting(table: str, key: str, value: str) -> Path:
    """Set `[table] key = "value"` in the user config, keeping the rest of the file as is."""
    path = agentica_home() / "config.toml"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    line = f"{key} = {_toml_string(value)}"
    header = f"[{table}]"
    start = next((i for i, text in enumerate(lines) if text.strip() == header), None)
    if start is None:
        if lines and lines[-1].strip():
            lines.append("")
        lines += [header, line]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].strip().startswith("[")), len(lines))
        existing = next(
            (i for i in range(start + 1, end) if lines[i].split("=")[0].strip() == key and "=" in lines[i]), None
        )
        if existing is None:
            lines.insert(start + 1, line)
        else:
            lines[existing] = line
    with open_private(path, "w", encoding="utf-8") as fh:  # it may hold an API key
        fh.write("\n".join(lines) + "\n")
    load_toml(path)  # never leave a file we cannot read back
    return path


def check_mcp_servers(settings: Settings) -> None:
    """The MCP tables' own rules (command xor url, ...), checked before anything starts."""
    if not settings.mcp_servers:
        return
    from agentica_cli.tools.mcp.servers import McpConfigError, McpServerConfig

    for name, table in settings.mcp_servers.items():
        try:
            McpServerConfig.from_dict(name, table)
        except McpConfigError as err:
            where = settings.sources.get(f"mcp_servers.{name}", "config")
            raise ConfigError(f"{where}: {err}") from None
