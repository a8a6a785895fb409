"""Lifecycle hooks' configuration: Claude Code's `hooks` in settings JSON, or config.toml tables.

    {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/check.sh", "timeout": 10}]}]}}

(~/.agentica/settings.json; in a trusted project .agentica/settings.json, .claude/settings.json,
.claude/settings.local.json), or in config.toml as `[[hooks.PreToolUse]]` tables with
`matcher`, `command`, `timeout`. A matcher is a regular expression matched against the whole
tool name, ours or Claude Code's (`Bash` and `execute` both match execute); empty or `*`
matches every tool. For SessionStart it matches the source, for PreCompact the trigger.
Besides commands: `"type": "prompt"` (extensions/prompt_hooks.py), `"type": "agent"` (the same
fields; a read-only sub-agent decides: extensions/agent_hooks.py) and `"type": "http"`, a URL
the event is POSTed to (extensions/http_hooks.py; `url`, `headers`, `allowedEnvVars`, or
`allowed_env_vars` in config.toml). Running them: extensions/hooks.py.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentica_cli.extensions.places import Places, UnreadableFile, read_text

DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code
PROMPT_TIMEOUT = 30.0  # a "prompt" hook's, as Claude Code
AGENT_TIMEOUT = 60.0  # an "agent" hook's (its whole multi-turn run), as Claude Code
# Where a "prompt" or "agent" hook (the model answers {"ok": ..., "reason": ...}) has a decision to make
PROMPT_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop")
# The same as agentica_cli.agent.hooks.HOOK_EVENTS (not imported: loading the configuration
# must not load the agent loop, which the REPL imports only after its first paint)
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
               "PermissionRequest", "Notification", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionEnd")
SETTINGS_FILES = (".claude/settings.json", ".claude/settings.local.json", ".agentica/settings.json")
# Tool events: where an entry's `if` (a permission-rule pattern such as `Bash(git commit:*)`) applies
TOOL_CALL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")


class HookConfigError(ValueError):
    """A hooks table that cannot be used; str() names the file and the entry."""


@dataclass
class HookSpec:
    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""  # the file it came from
    kind: str = "command"  # "prompt": the session's model decides; "agent": a read-only sub-agent; "http": a URL
    prompt: str = ""  # a prompt or agent hook's instructions; $ARGUMENTS is the event's JSON
    model: str = ""  # a prompt or agent hook's model id (same provider); empty: the session's model
    url: str = ""  # an http hook's: the event's JSON is POSTed there
    headers: dict[str, str] = field(default_factory=dict)  # an http hook's; values may use $VAR / ${VAR}
    allowed_env_vars: tuple[str, ...] = ()  # the variables those headers may use (others: "")
    condition: str = ""  # `if`: a permission-rule pattern the tool call must match (tool events)
    background: bool = False  # `async`: runs without the call waiting; what it says is not read

    @property
    def shown(self) -> str:
        """How the user is told which hook it was."""
        text = {"command": self.command, "http": self.url}.get(self.kind, f"{self.kind}: {self.prompt[:60]}")
        return f"{self.event} hook `{text}`"

    def matches(self, target: str | None, *aliases: str) -> bool:
        if not self.matcher or self.matcher == "*" or target is None:
            return True
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in (target, *aliases)
        return any(pattern.fullmatch(name) for name in (target, *aliases) if name)


def specs_from_claude_json(data: Any, source: str, notices: list[str] | None = None) -> list[HookSpec]:
    """The `hooks` object of a Claude Code settings file. An event agentica does not fire is
    ignored, as Claude Code ignores events it does not know; with `notices` a list, that is
    said there once per event, and a broken entry is left out with its reason there instead of
    failing the file (HookConfigError), so one bad hook never drops the others."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        raise HookConfigError(f"{source}: 'hooks' must be an object of events")
    specs = []
    for event, groups in hooks.items():
        where = f"{source}: hooks.{event}"
        if event not in HOOK_EVENTS:
            if notices is not None:
                notices.append(f"{where}: ignored: agentica does not fire {event} hooks "
                               f"(it fires {', '.join(HOOK_EVENTS)})")
            continue
        try:
            specs += _event_specs(event, groups, where, notices)
        except HookConfigError as err:
            if notices is None:
                raise
            notices.append(f"{err}; that entry is left out")
    return specs


def _event_specs(event: str, groups: Any, where: str, notices: list[str] | None) -> list[HookSpec]:
    if not isinstance(groups, list):
        raise HookConfigError(f"{where} must be a list of {{matcher, hooks}} objects")
    specs = []
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list):
            raise HookConfigError(f"{where}: each entry needs a 'hooks' list")
        for entry in entries:
            kind = entry.get("type", "command") if isinstance(entry, dict) else None
            if kind not in ("command", "prompt", "agent", "http"):
                continue  # a kind of hook a newer Claude Code may add: not ours to guess at
            try:
                specs.append(_spec(event, entry, str(group.get("matcher") or ""), where, notices))
            except HookConfigError as err:
                if notices is None:
                    raise
                notices.append(f"{err}; that hook is left out")
    return specs


def specs_from_toml(tables: dict[str, Any], source: str) -> list[HookSpec]:
    """`[[hooks.PreToolUse]]` tables of config.toml (already checked by the config schema)."""
    return [_spec(event, entry, str(entry.get("matcher") or ""), f"{source}: hooks.{event}")
            for event, entries in tables.items() if event in HOOK_EVENTS for entry in entries]


def _spec(event: str, entry: dict[str, Any], matcher: str, where: str,
          notices: list[str] | None = None) -> HookSpec:
    spec = _kind_spec(event, entry, matcher, where)
    condition = entry.get("if")
    if condition is not None:
        if not isinstance(condition, str):
            raise HookConfigError(f"{where}: 'if' must be a permission rule such as \"Bash(git commit:*)\"")
        if condition.strip() and event not in TOOL_CALL_EVENTS and notices is not None:
            notices.append(f"{where}: 'if' applies to tool events only ({', '.join(TOOL_CALL_EVENTS)}); ignored")
        elif event in TOOL_CALL_EVENTS:
            spec.condition = condition.strip()
    background = entry.get("async", False) or entry.get("asyncRewake", False)
    if not isinstance(background, bool):
        raise HookConfigError(f"{where}: 'async' must be true or false")
    if entry.get("asyncRewake") and notices is not None:
        notices.append(f"{where}: 'asyncRewake' is run as 'async' here: the hook runs in the background "
                       "and its exit code 2 does not wake the agent")
    spec.background = background and spec.kind == "command"
    return spec


def _kind_spec(event: str, entry: dict[str, Any], matcher: str, where: str) -> HookSpec:
    if entry.get("type") == "agent":
        return _prompt_spec(event, entry, matcher, where, "agent")
    if entry.get("type") == "prompt" or ("prompt" in entry and "command" not in entry):
        return _prompt_spec(event, entry, matcher, where)
    if entry.get("type") == "http" or ("url" in entry and "command" not in entry):
        return _http_spec(event, entry, matcher, where)
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookConfigError(f"{where}: a hook needs a 'command' string")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise HookConfigError(f"{where}: 'timeout' must be a number of seconds > 0")
    return HookSpec(event, command, matcher, float(timeout), where.split(":")[0])


def load_hook_specs(places: Places, problems: list[str]) -> list[HookSpec]:
    """Hooks from the settings JSON files (the user's, then a trusted project's)."""
    files: list[tuple[Path, Path | None]] = [(places.user_home / "settings.json", None)]
    if places.project is not None:
        root = Path(os.path.realpath(places.project))
        files += [(root / name, root) for name in SETTINGS_FILES]
    specs: list[HookSpec] = []
    for path, within in files:
        if not path.is_file():
            continue
        try:
            specs += specs_from_claude_json(json.loads(read_text(path, within)), str(path), problems)
        except (UnreadableFile, ValueError) as why:  # HookConfigError and JSON errors are ValueErrors
            problems.append(f"{path}: hooks skipped: {why}")
    return specs


def _prompt_spec(event: str, entry: dict[str, Any], matcher: str, where: str, kind: str = "prompt") -> HookSpec:
    """A "prompt" hook, or an "agent" one (the same fields, a longer default timeout)."""
    named = f"an \"{kind}\"" if kind == "agent" else f"a \"{kind}\""
    if event not in PROMPT_EVENTS:
        raise HookConfigError(f"{where}: {named} hook has nothing to decide here (it works on "
                              f"{', '.join(PROMPT_EVENTS)}); use a \"command\" hook")
    prompt = entry.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise HookConfigError(f"{where}: {named} hook needs a 'prompt' string")
    model = entry.get("model") or ""
    if not isinstance(model, str):
        raise HookConfigError(f"{where}: 'model' must be a model id")
    default = AGENT_TIMEOUT if kind == "agent" else PROMPT_TIMEOUT
    spec = _kind_spec(event, {"command": "-", "timeout": entry.get("timeout", default)}, matcher, where)
    spec.command, spec.kind, spec.prompt, spec.model = "", kind, prompt, model
    return spec


def _http_spec(event: str, entry: dict[str, Any], matcher: str, where: str) -> HookSpec:
    url = entry.get("url")
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise HookConfigError(f"{where}: an \"http\" hook needs a 'url' (http:// or https://)")
    headers = entry.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in headers.items()):
        raise HookConfigError(f"{where}: 'headers' must be an object of strings")
    allowed = entry.get("allowedEnvVars", entry.get("allowed_env_vars")) or []
    if not isinstance(allowed, list) or not all(isinstance(name, str) for name in allowed):
        raise HookConfigError(f"{where}: 'allowedEnvVars' must be a list of variable names")
    spec = _kind_spec(event, {"command": "-", "timeout": entry.get("timeout", DEFAULT_TIMEOUT)}, matcher, where)
    spec.command, spec.kind, spec.url = "", "http", url
    spec.headers, spec.allowed_env_vars = dict(headers), tuple(allowed)
    return spec
