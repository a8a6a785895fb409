"""The command line the Claude Agent SDK builds, read into agentica's flags.

The SDK runs `CLI --output-format stream-json --verbose --system-prompt "" ... --input-format
stream-json` (claude_agent_sdk/_internal/transport/subprocess_cli.py), never with -p. Each of
its flags is accepted here and mapped to ours, or refused with a message naming it: a flag that
changed nothing would leave a program believing something holds that does not (a budget, a
beta). agentica's own model flags (--base-url, --provider, --api-key-file, ...) are accepted
too, for `ClaudeAgentOptions(extra_args={...})`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.headless.claude_protocol.tool_names import BUILTIN_CLAUDE_TOOLS, ours

# Claude's permission modes -> ours (dontAsk: ours "default" with nobody asked: see permissions.py)
PERMISSION_MODES = {"default": "default", "acceptEdits": "accept-edits", "bypassPermissions": "auto",
                    "plan": "plan", "dontAsk": "default"}
EFFORTS = ("low", "medium", "high", "xhigh", "max")

# Flags refused, with why: what the SDK would rely on and agentica cannot give.
UNSUPPORTED = {
    "--max-budget-usd": "agentica does not know what an OpenAI-compatible model's requests cost, so it cannot "
                        "stop at a budget (use max_turns)",
    "--fallback-model": "agentica has no fallback model; configure retries in [model] instead",
    "--betas": "Anthropic API betas do not apply to an OpenAI-compatible model",
    "--task-budget": "agentica has no task budget",
    "--resume-session-at": "agentica resumes a session at its end only",
    "--resume-drops-turn": "agentica resumes a session at its end only",
    "--session-mirror": "agentica keeps sessions in ~/.agentica/sessions; a SessionStore is not supported",
    "--plugin-dir": "Claude Code plugins are not loaded; put commands, agents and skills in .claude/ or .agentica/",
    "--include-hook-events": "hook events are not reported as system messages",
    "--thinking-display": "agentica passes the model's reasoning on as it comes",
    "--fork-subagent": "not supported",
}
SETTING_SOURCES = ("user", "project", "local")


class ClaudeFlagError(ValueError):
    """A flag of the Claude command line that agentica cannot honour; the message names it."""


@dataclass
class ClaudeOptions:
    """What the Claude protocol run needs beyond agentica's own flags."""

    include_partial_messages: bool = False
    permission_prompt: bool = False  # --permission-prompt-tool stdio: ask the SDK (can_use_tool)
    dont_ask: bool = False  # --permission-mode dontAsk: refuse what is not allowed up front
    claude_mode: str = "default"  # the permission mode as the SDK names it
    base_tools: list[str] | None = None  # --tools: our builtin names the model gets; None: all of them
    session_id: str | None = None  # --session-id
    fork_session: bool = False
    sdk_mcp_servers: list[str] = field(default_factory=list)  # "type": "sdk" servers of --mcp-config
    json_schema: dict[str, Any] | None = None
    agents: dict[str, Any] = field(default_factory=dict)  # --agents, then initialize's
    model_alias: str | None = None  # --model as given, when it was a Claude name mapped to the configured one
    started: bool = False  # the session's run began (before it, a failed start is told in a result line)


def _rules(value: str, flag: str) -> list[str]:
    from agentica_cli.app.permissions.permission_rules import PermissionRule, RuleError, split_rule_list

    try:
        rules = split_rule_list(value)
        for rule in rules:
            PermissionRule.parse("allow", rule)
    except RuleError as err:
        raise ClaudeFlagError(f"{flag}: {err}") from None
    return rules


def _number(value: str, flag: str, kind: type = int) -> Any:
    try:
        number = kind(value)
    except ValueError:
        raise ClaudeFlagError(f"{flag}: expected a number, got {value!r}") from None
    if number < (1 if kind is int else 0):
        raise ClaudeFlagError(f"{flag}: must be at least {1 if kind is int else 0}, got {value!r}")
    return number


def _json_value(value: str, flag: str, cwd: Path) -> Any:
    """A JSON text, or a file holding one (relative to the work folder, as Claude Code reads it)."""
    text = value.strip()
    if not text.startswith(("{", "[")):
        try:
            text = (cwd / Path(value).expanduser()).read_text(encoding="utf-8-sig")
        except OSError as err:
            raise ClaudeFlagError(f"{flag} {value}: cannot read: {err.strerror or err}") from None
    try:
        return json.loads(text)
    except ValueError as err:
        raise ClaudeFlagError(f"{flag}: not valid JSON ({err})") from None


class _Reader:
    """argv with `--flag value` and `--flag=value` forms."""

    def __init__(self, argv: list[str]):
        self.argv = list(argv)
        self.index = 0

    def next_flag(self) -> tuple[str, str | None] | None:
        if self.index >= len(self.argv):
            return None
        word = self.argv[self.index]
        self.index += 1
        if word.startswith("--") and "=" in word:
            flag, value = word.split("=", 1)
            return flag, value
        return word, None

    def value(self, flag: str, inline: str | None) -> str:
        if inline is not None:
            return inline
        if self.index >= len(self.argv):
            raise ClaudeFlagError(f"{flag} needs a value")
        self.index += 1
        return self.argv[self.index - 1]


def parse_claude_command_line(argv: list[str], defaults: argparse.Namespace,
                              cwd: Path | None = None) -> argparse.Namespace:
    """agentica's flags for a Claude command line: `defaults` (the namespace of a bare `agentica`,
    which launch.start reads) changed by them, with the rest in `.claude` (ClaudeOptions).
    Raises ClaudeFlagError naming the first flag it cannot honour."""
    cwd = cwd or Path.cwd()
    args = argparse.Namespace(**vars(defaults))
    args.print_mode = True  # a headless run: nobody at a terminal answers questions
    opts = ClaudeOptions()
    args.claude = opts
    formats: dict[str, str] = {}
    mcp_values: list[str] = []
    reader = _Reader(argv)

    def setter(attr: str, convert: Callable[[str, str], Any] = lambda v, _f: v) -> Callable[[str, str], None]:
        return lambda value, flag: setattr(args, attr, convert(value, flag))

    valued: dict[str, Callable[[str, str], None]] = {
        "--system-prompt": setter("system_prompt"),
        "--system-prompt-file": setter("system_prompt_file", lambda v, _f: Path(v)),
        "--append-system-prompt": setter("append_system_prompt"),
        "--append-system-prompt-file": setter("append_system_prompt_file", lambda v, _f: Path(v)),
        "--max-turns": setter("max_turns", _number),
        "--resume": setter("resume"), "-r": setter("resume"),
        "--add-dir": lambda v, _f: args.add_dir.append(Path(v)),
        "--mcp-config": lambda v, _f: mcp_values.append(v),
        # agentica's own flags, for extra_args
        "--provider": setter("provider"),
        "--base-url": setter("base_url"),
        "--api-key": setter("api_key"),
        "--api-key-file": setter("api_key_file", lambda v, _f: Path(v)),
        "--request-timeout": setter("request_timeout", lambda v, f: _number(v, f, float)),
        "--max-tokens": setter("max_tokens", _number),
        "--reasoning-effort": setter("reasoning_effort"),
        "--sandbox": setter("sandbox"),
        "--work-dir": setter("work_dir", lambda v, _f: Path(v)), "-C": setter("work_dir", lambda v, _f: Path(v)),
    }
    switches: dict[str, Callable[[], None]] = {
        "--verbose": lambda: None,  # Claude Code needs it for stream-json; agentica's stream is always whole
        "--print": lambda: None, "-p": lambda: None,
        "--include-partial-messages": lambda: setattr(opts, "include_partial_messages", True),
        "--strict-mcp-config": lambda: setattr(args, "strict_mcp_config", True),
        "--fork-session": lambda: setattr(opts, "fork_session", True),
        "--continue": lambda: setattr(args, "continue_", True), "-c": lambda: setattr(args, "continue_", True),
        "--trust": lambda: setattr(args, "trust", True),
        "--no-session": lambda: setattr(args, "no_session", True),
    }
    while (item := reader.next_flag()) is not None:
        flag, inline = item
        if flag in UNSUPPORTED:
            raise ClaudeFlagError(f"{flag} is not supported: {UNSUPPORTED[flag]} (see docs/sdk.md)")
        if flag in switches:
            if inline is not None:
                raise ClaudeFlagError(f"{flag} takes no value")
            switches[flag]()
        elif flag in valued:
            valued[flag](reader.value(flag, inline), flag)
        elif flag in ("--output-format", "--input-format", "--protocol"):
            formats[flag] = reader.value(flag, inline)
        elif flag in ("--allowedTools", "--allowed-tools"):
            args.allowed_tools += _rules(reader.value(flag, inline), flag)
        elif flag in ("--disallowedTools", "--disallowed-tools"):
            args.disallowed_tools += _rules(reader.value(flag, inline), flag)
        elif flag == "--tools":
            opts.base_tools = _base_tools(reader.value(flag, inline))
        elif flag == "--model":
            _model(args, opts, reader.value(flag, inline))
        elif flag == "--permission-mode":
            _permission_mode(args, opts, reader.value(flag, inline))
        elif flag == "--permission-prompt-tool":
            tool = reader.value(flag, inline)
            if tool != "stdio":
                raise ClaudeFlagError(f"--permission-prompt-tool {tool}: only 'stdio' (the SDK's can_use_tool) "
                                      "is supported")
            opts.permission_prompt = True
        elif flag == "--session-id":
            opts.session_id = _uuid(reader.value(flag, inline))
        elif flag == "--setting-sources":
            _setting_sources(reader.value(flag, inline))
        elif flag == "--settings":
            _settings(args, opts, _json_value(reader.value(flag, inline), flag, cwd))
        elif flag == "--json-schema":
            schema = _json_value(reader.value(flag, inline), flag, cwd)
            if not isinstance(schema, dict):
                raise ClaudeFlagError("--json-schema: expected a JSON Schema object")
            opts.json_schema = schema
        elif flag == "--agents":
            agents = _json_value(reader.value(flag, inline), flag, cwd)
            if not isinstance(agents, dict):
                raise ClaudeFlagError('--agents: expected an object {"name": {"description": ..., "prompt": ...}}')
            opts.agents.update(agents)
        elif flag in ("--max-thinking-tokens", "--thinking", "--effort"):
            args.reasoning_effort = _effort(flag, reader.value(flag, inline))
        elif flag.startswith("-"):
            raise ClaudeFlagError(f"{flag}: unknown flag (see docs/sdk.md for the flags agentica reads in the "
                                  "Claude protocol)")
        else:
            raise ClaudeFlagError(f"{flag!r}: the Claude protocol takes no PROMPT argument; the SDK sends the "
                                  "prompt on stdin")
    for flag in ("--output-format", "--input-format"):
        if formats.get(flag, "stream-json") != "stream-json":
            raise ClaudeFlagError(f"{flag} {formats[flag]}: the Claude protocol speaks stream-json only")
    if formats.get("--protocol", "claude") != "claude":
        raise ClaudeFlagError(f"--protocol {formats['--protocol']}: expected 'claude'")
    args.output_format = args.input_format = "stream-json"
    if mcp_values:
        args.mcp_config = [_without_sdk_servers(value, opts, cwd) for value in mcp_values]
        args.mcp_config = [value for value in args.mcp_config if value is not None]
    if opts.fork_session and not (args.resume or args.continue_):
        raise ClaudeFlagError("--fork-session goes with --resume or --continue")
    if opts.session_id and (args.resume or args.continue_):
        raise ClaudeFlagError("--session-id names a new session: it does not go with --resume or --continue")
    if args.api_key == "-":
        raise ClaudeFlagError("--api-key -: stdin carries the SDK's messages; use --api-key-file or AGENTICA_API_KEY")
    return args


def _base_tools(value: str) -> list[str] | None:
    """--tools in the SDK's meaning: the builtin tools the model gets ("" none, "default" all)."""
    if value.strip() == "default":
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in BUILTIN_CLAUDE_TOOLS]
    if unknown:
        raise ClaudeFlagError(f"--tools: unknown tool {unknown[0]!r} (agentica has: {', '.join(BUILTIN_CLAUDE_TOOLS)})")
    return [ours(name) for name in names]


def _model(args: argparse.Namespace, opts: ClaudeOptions, value: str) -> None:
    """A Claude alias or id means the configured model ([models.aliases] may name one); any
    other id is the model to use."""
    from agentica_cli.extensions.model_names import is_claude_model

    if is_claude_model(value):
        opts.model_alias = value  # resolved against the config's [models.aliases] once it is loaded
    else:
        args.model = value


def _permission_mode(args: argparse.Namespace, opts: ClaudeOptions, value: str) -> None:
    if value not in PERMISSION_MODES:
        known = ", ".join(PERMISSION_MODES)
        raise ClaudeFlagError(f"--permission-mode {value}: not supported (agentica has: {known})")
    opts.claude_mode = value
    opts.dont_ask = value == "dontAsk"
    args.permission_mode = PERMISSION_MODES[value]
    args.yes = value == "bypassPermissions"  # chosen by the program, like --yes


def _uuid(value: str) -> str:
    import uuid

    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ClaudeFlagError(f"--session-id {value!r}: not a UUID") from None


def _setting_sources(value: str) -> None:
    sources = [s.strip() for s in value.split(",") if s.strip()]
    unknown = [s for s in sources if s not in SETTING_SOURCES]
    if unknown:
        raise ClaudeFlagError(f"--setting-sources: unknown source {unknown[0]!r} (user, project, local)")


def _effort(flag: str, value: str) -> str:
    """The thinking flags as our reasoning_effort (what OpenAI-compatible APIs take)."""
    if flag == "--effort":
        if value not in EFFORTS:
            raise ClaudeFlagError(f"--effort {value}: expected one of {', '.join(EFFORTS)}")
        return value
    if flag == "--thinking":
        if value == "disabled":
            return "none"
        if value == "adaptive":
            return "medium"
        raise ClaudeFlagError(f"--thinking {value}: expected adaptive or disabled")
    tokens = _number(value, flag) if value != "0" else 0
    return "none" if tokens == 0 else "low" if tokens <= 4096 else "medium" if tokens <= 16384 else "high"


def _settings(args: argparse.Namespace, opts: ClaudeOptions, data: Any) -> None:
    """--settings: the permission rules and mode, and the model; any other key is refused."""
    if not isinstance(data, dict):
        raise ClaudeFlagError("--settings: expected a JSON object")
    for key, value in data.items():
        if key == "permissions" and isinstance(value, dict):
            for kind, rules in value.items():
                if kind in ("allow", "deny", "ask") and isinstance(rules, list):
                    text = ",".join(str(rule) for rule in rules)
                    target = {"allow": args.allowed_tools, "deny": args.disallowed_tools}.get(kind)
                    if target is None:
                        raise ClaudeFlagError("--settings: permissions.ask is not supported (agentica asks "
                                              "through can_use_tool for what is not allowed)")
                    target += _rules(text, f"--settings permissions.{kind}")
                elif kind == "defaultMode" and isinstance(rules, str):
                    _permission_mode(args, opts, rules)
                elif kind == "additionalDirectories" and isinstance(rules, list):
                    args.add_dir += [Path(str(d)) for d in rules]
                else:
                    raise ClaudeFlagError(f"--settings: permissions.{kind} is not supported")
        elif key == "model" and isinstance(value, str):
            _model(args, opts, value)
        elif key == "$schema":
            continue
        else:
            raise ClaudeFlagError(f"--settings: the key {key!r} is not supported (permissions and model are)")


def _without_sdk_servers(value: str, opts: ClaudeOptions, cwd: Path) -> str | None:
    """An --mcp-config value with its SDK servers ("type": "sdk", served by the program over the
    control channel) taken out into `opts`; None when nothing else is left."""
    data = _json_value(value, "--mcp-config", cwd)
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return value  # mcp_json reports what is wrong with it
    sdk = [name for name, entry in servers.items() if isinstance(entry, dict) and entry.get("type") == "sdk"]
    if not sdk:
        return value
    opts.sdk_mcp_servers += sdk
    rest = {name: entry for name, entry in servers.items() if name not in sdk}
    return json.dumps({"mcpServers": rest}) if rest else None
