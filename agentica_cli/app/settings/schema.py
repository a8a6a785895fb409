"""The config schema: one frozen dataclass per table of config.toml, each key's type and default
written once, here.

The loader (config.py) checks every layer (a file, the environment, the flags) against `SCHEMA`,
which is derived from these classes, so an error names the key and the layer; it then builds one
`Config` from the merged layers (`build`), and the code reads typed attributes
(`settings.model.request_timeout: float | None`). A default of None means "not set": the layer
below decides (the model class, the provider preset, the agent's ToolConfig), as the comment says.

Stdlib only (dataclasses, typing): importing this stays cheap.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from agentica_cli.tools.mcp.keys import CONFIG_KEYS as MCP_CONFIG_KEYS
from agentica_cli.tools.mcp.keys import TRANSPORTS as MCP_TRANSPORTS

PermissionMode = Literal["default", "accept-edits", "auto", "plan"]
# reasoning_effort values some provider accepts (OpenAI: minimal..high, xhigh; DeepSeek V4: high, max)
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
ToolCallFormat = Literal["native", "hermes", "qwen3-coder", "mistral", "text"]  # models/text_tool_calls.FORMATS
SandboxMode = Literal["workspace-write", "read-only", "off"]  # agentica_cli.sandbox.MODES
SandboxBackend = Literal["auto", "bubblewrap", "landlock", "seatbelt"]

PERMISSION_MODES: tuple[str, ...] = get_args(PermissionMode)
REASONING_EFFORTS: tuple[str, ...] = get_args(ReasoningEffort)
TOOL_CALL_FORMATS: tuple[str, ...] = get_args(ToolCallFormat)

PROVIDERS = (  # agentica_cli.models.presets.PROVIDERS (not imported: this module stays light)
    "openai",
    "zhipuai",
    "deepseek",
    "moonshot",
    "qwen",
    "openrouter",
    "ollama",
    "openai-like",
    # the same platforms' other endpoints, and local servers by name (their default ports)
    "zai",
    "zhipuai-coding",
    "zai-coding",
    "moonshot-intl",
    "qwen-intl",
    "lmstudio",
    "llamacpp",
    "vllm",
)

# A key whose check is not its Python type alone: field(metadata={"kind": ...}).
PROVIDER: dict[str, object] = {"kind": "provider"}  # a name or alias the model presets know (glm, kimi, ...)


# -- the tables ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelSettings:
    """[model]: which model, where its requests go, and what they carry."""

    provider: str | None = field(default=None, metadata=PROVIDER)  # not set: openai
    name: str | None = None  # not set: the provider's default model
    choices: tuple[str, ...] = ()  # other model ids an editor offers in its model picker (agentica acp)
    base_url: str | None = None  # not set: the provider's endpoint
    api_key: str | None = None  # not set: the provider's key variable
    # seconds (0: no limit); not set: the model's 900 / 600 / 300 (models/openai_chat.py);
    # the sign is checked by runtime.check_model_timeouts
    request_timeout: float | None = None
    attempt_timeout: float | None = None
    stall_timeout: float | None = None
    vision: bool | None = None  # the model takes images; not set: guessed from its name
    max_tokens: int | None = None  # the answer's length limit, sent as max_tokens; not set: the provider's
    context_window: int | None = None  # tokens; not set: the preset's, or what a local server reports
    reasoning_effort: ReasoningEffort | None = None  # sent as reasoning_effort; not set: not sent
    extra_body: Mapping[str, object] | None = None  # merged into every request body: {thinking = {...}}
    tool_call_format: ToolCallFormat | None = None  # tool calls written as text (local servers); not set: native
    dialect: str | None = None  # what the provider wants sent back (models/dialects.py); not set: from provider/URL


@dataclass(frozen=True)
class PermissionSettings:
    """[permissions]: the mode, and rules (each layer's rules add up: Settings.permission_rules)."""

    mode: PermissionMode = "default"
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolSettings:
    """[tools]: the agent's limits (not set: agent/config.ToolConfig's) and which tools it has."""

    tool_call_limit: int | None = None
    max_turns: int | None = None
    compress_tool_results: bool | None = None
    context_overflow_threshold: float | None = None
    max_result_tokens: int | None = None  # one tool result's budget; larger ones are saved to a file
    exclude: tuple[str, ...] = ()  # builtin tools left out
    enable: tuple[str, ...] = ()  # toolkits by name (agentica_cli.toolkits.catalog): arxiv, weather, sql, ...
    fetch_allow_private: tuple[str, ...] = ()  # networks fetch_url may reach besides public ones: ["10.0.0.0/8"]


@dataclass(frozen=True)
class ToolkitSettings:
    """[toolkits.<name>]: a toolkit's arguments; each toolkit takes the keys its class has
    (app/toolkit_setup.check_options). Not set: the toolkit's own default."""

    url: str | None = None
    read_only: bool | None = None
    max_rows: int | None = None
    timeout: int | None = None
    memory_mb: int | None = None
    network: bool | None = None
    model: str | None = None
    size: str | None = None
    quality: str | None = None
    output_dir: str | None = None
    base_url: str | None = None
    max_results: int | None = None
    min_score: float | None = None
    threads: int | None = None

    def given(self) -> dict[str, object]:
        """The keys the config set, as the toolkit's keyword arguments."""
        return {f.name: value for f in dataclasses.fields(self) if (value := getattr(self, f.name)) is not None}


@dataclass(frozen=True)
class UiSettings:
    """[ui]: the interactive session's display."""

    markdown: bool = True
    show_reasoning: bool = True
    history: bool = True  # input history kept in ~/.agentica/history
    statusline: str = ""  # a shell command whose first line of output is the status line ("": the built-in one)
    notify: bool = True  # bell + OSC 9 when a long turn ends or a question waits
    notify_after: float = 30.0  # seconds a turn must take before its end notifies (tui/notify.DEFAULT_NOTIFY_AFTER)
    editing_mode: Literal["emacs", "vi"] = "emacs"  # the input line's keys


@dataclass(frozen=True)
class CheckpointSettings:
    """[checkpoints]: snapshots for /diff, /undo, /rewind, agentica --undo (app/checkpoint_setup.py
    checks the numbers' sign)."""

    enabled: bool = True
    max_file_size: int = 10_000_000  # bytes; larger files are left out of snapshots
    keep_sessions: int = 50  # sessions whose snapshots are kept per project
    keep_days: float = 30.0  # snapshots older than this are dropped


@dataclass(frozen=True)
class ModelsSettings:
    """[models]: Claude's model names in commands and agents -> model ids here (extensions/model_names.py)."""

    aliases: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SandboxSettings:
    """[sandbox]: the OS sandbox `execute` runs commands in (app/sandbox_settings.sandbox_for)."""

    mode: SandboxMode = "workspace-write"  # agentica_cli.sandbox.DEFAULT_MODE
    backend: SandboxBackend = "auto"
    network: bool = False  # commands may open connections
    unix_sockets: bool = False  # commands may create Unix sockets (local services: docker, agents, databases)
    hide: tuple[str, ...] = ()  # more paths commands may not read (besides ~/.ssh, ~/.aws, ...)
    env_allow: tuple[str, ...] = ()  # variables commands keep even if their names look secret


# -- the tables whose entries stay tables ------------------------------------------------------
# Hooks and MCP servers are read by their own layers into their own types (extensions/hook_config,
# app/hooks.ConfigHooks; tools/mcp McpServerConfig), which also read them from JSON files (Claude
# Code's settings.json and .mcp.json); here each entry is checked key by key and kept as a table.

HOOK_SCHEMA: dict[str, Any] = {
    "command": "str",
    "tools": "list[str]",
    "timeout": "float",
}

# agentica_cli.agent.hooks.HOOK_EVENTS (not imported: this module stays light)
LIFECYCLE_HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                         "PermissionRequest", "Notification", "Stop", "SubagentStart", "SubagentStop", "PreCompact",
                         "SessionEnd")
LIFECYCLE_HOOK_SCHEMA: dict[str, Any] = {"matcher": "str", "command": "str", "timeout": "float",
                                         "type": "str", "prompt": "str", "model": "str",  # a prompt hook
                                         "url": "str", "headers": "dict[str,str]",  # an http hook
                                         "allowed_env_vars": "list[str]",
                                         "if": "str", "async": "bool"}  # a permission-rule condition; run in background
HOOKS_SCHEMA: dict[str, Any] = {
    # arrays of tables: [[hooks.before_tool_call]] ...
    "before_tool_call": [HOOK_SCHEMA],
    "after_tool_call": [HOOK_SCHEMA],
    # Claude Code's lifecycle events: [[hooks.PreToolUse]] matcher, command, timeout
    **{event: [LIFECYCLE_HOOK_SCHEMA] for event in LIFECYCLE_HOOK_EVENTS},
}


# The transport is checked here as one of its values; the rest as the MCP layer types them.
MCP_SERVER_SCHEMA: dict[str, Any] = {**MCP_CONFIG_KEYS, "transport": MCP_TRANSPORTS}

HookTable = Mapping[str, object]  # one [[hooks.EVENT]] entry, checked against HOOK_SCHEMA / LIFECYCLE_HOOK_SCHEMA
McpServerTable = Mapping[str, Any]  # one [mcp_servers.NAME]: typed by McpServerConfig.from_dict


@dataclass
class Config:
    """The whole of config.toml: a field per table (and the top-level `instructions`). Settings
    (config.py) is this plus where each key came from; a table is replaced whole
    (`settings.model = dataclasses.replace(settings.model, name=...)`), never edited in place."""

    model: ModelSettings = field(default_factory=ModelSettings)
    permissions: PermissionSettings = field(default_factory=PermissionSettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    toolkits: Mapping[str, ToolkitSettings] = field(default_factory=dict)  # [toolkits.<name>]
    ui: UiSettings = field(default_factory=UiSettings)
    instructions: str | None = None  # extra text for the system prompt (AGENTS.md files are read as well)
    # model -> {input, output}: US dollars per million tokens (app/prices.py checks and reads it)
    prices: Mapping[str, object] = field(default_factory=dict, metadata={"kind": "prices"})
    checkpoints: CheckpointSettings = field(default_factory=CheckpointSettings)
    hooks: Mapping[str, tuple[HookTable, ...]] = field(default_factory=dict, metadata={"kind": HOOKS_SCHEMA})
    mcp_servers: Mapping[str, McpServerTable] = field(default_factory=dict,
                                                      metadata={"kind": {"*": MCP_SERVER_SCHEMA}})
    models: ModelsSettings = field(default_factory=ModelsSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)

    def toolkit_options(self, name: str) -> dict[str, object]:
        """[toolkits.NAME]'s keys as the toolkit's keyword arguments ({} without the table)."""
        table = self.toolkits.get(name)
        return table.given() if table is not None else {}


# -- the schema as the validator reads it ----------------------------------------------------------
# A leaf is a type description: "str", "int", "float", "bool", "list[str]", "dict[str,str]",
# "table" (any table), "provider", or a tuple of allowed strings. A nested dict is a table; "*"
# means "any table name"; a one-element list [schema] is an array of tables.


def _without_none(hint: Any) -> Any:
    if get_origin(hint) in (Union, types.UnionType):
        rest = [arg for arg in get_args(hint) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return hint


def _kind(hint: Any, metadata: Mapping[str, object]) -> Any:
    """The validator's description of a key annotated `hint`."""
    if "kind" in metadata:
        return metadata["kind"]
    hint = _without_none(hint)
    origin, args = get_origin(hint), get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return schema_of(hint)
    if origin is Literal:
        return args
    if hint in (str, bool, int, float):
        return hint.__name__
    if origin is tuple and args == (str, Ellipsis):
        return "list[str]"
    if origin is Mapping and args == (str, str):
        return "dict[str,str]"
    if origin is Mapping and args == (str, object):
        return "table"
    if origin is Mapping and args[0] is str and isinstance(args[1], type) and dataclasses.is_dataclass(args[1]):
        return {"*": schema_of(args[1])}
    raise TypeError(f"no config check for {hint!r}")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The fields' annotations, evaluated (once per class: the schema at import, `build` at load)."""
    return get_type_hints(cls)


def schema_of(cls: type) -> dict[str, Any]:
    """The validator's schema of table class `cls`, one entry per field."""
    hints = _hints(cls)
    return {f.name: _kind(hints[f.name], f.metadata) for f in dataclasses.fields(cls)}


SCHEMA: dict[str, Any] = schema_of(Config)
TOOLKIT_OPTIONS: dict[str, Any] = SCHEMA["toolkits"]["*"]  # [toolkits.<name>] keys (app/toolkit_setup.py)

# -- building the typed tables from checked data ---------------------------------------------------

T = TypeVar("T")


def _value(hint: Any, value: object) -> object:
    """A checked TOML value as the field annotated `hint` holds it (arrays become tuples)."""
    hint = _without_none(hint)
    origin, args = get_origin(hint), get_args(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return build(hint, value)
    if origin is tuple and isinstance(value, (list, tuple)):
        return tuple(_value(args[0], item) for item in value)
    if origin is Mapping and isinstance(value, Mapping):
        return {key: _value(args[1], item) for key, item in value.items()}
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def build(cls: type[T], data: Mapping[str, object]) -> T:
    """A `cls` from `data` already checked against `schema_of(cls)`: keys it lacks keep their defaults."""
    table: type = cls  # (T is a dataclass: a bound cannot say so)
    hints = _hints(table)
    keys = dataclasses.fields(table)
    given = {f.name: _value(hints[f.name], data[f.name]) for f in keys if data.get(f.name) is not None}
    return cls(**given)


def key_names(schema: Mapping[str, Any] = SCHEMA, prefix: str = "") -> list[str]:
    """Every dotted key of `schema` down to a leaf, a '*' table or an array of tables."""
    names: list[str] = []
    for key, kind in schema.items():
        if isinstance(kind, dict) and "*" not in kind:
            names += key_names(kind, f"{prefix}{key}.")
        else:
            names.append(prefix + key)
    return names


def default_of(dotted: str) -> object:
    """The default of a dotted key of a table (`model.request_timeout`), or of a top-level key."""
    cls: Any = Config
    *tables, last = dotted.split(".")
    for table in tables:
        cls = _hints(cls)[table]
    found = {f.name: f for f in dataclasses.fields(cls)}[last]
    if found.default_factory is not dataclasses.MISSING:
        return found.default_factory()
    return found.default
