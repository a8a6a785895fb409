"""Building the model and the DeepAgent from settings; shared by -p and the REPL.

This is where the heavy imports (the model client and its httpx2 transport, the builtin tools) happen, so
callers import this module only once they know they need a model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.config import ConfigError, Settings, agentica_home

# The env var each provider's key comes from, for the "no key" message (the model presets
# name their own variable in MissingApiKeyError; this is the fallback).
KEY_VARS = {
    "openai": "OPENAI_API_KEY",
    "zhipuai": "ZHIPUAI_API_KEY",
    "zhipuai-coding": "ZHIPUAI_API_KEY",
    "zai": "ZAI_API_KEY",
    "zai-coding": "ZAI_API_KEY",
    "moonshot-intl": "MOONSHOT_API_KEY",
    "qwen-intl": "DASHSCOPE_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "moonshot": "MOONSHOT_API_KEY",
    "qwen": "DASHSCOPE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "openai-like": "AGENTICA_API_KEY",
}


class MissingKey(Exception):
    """No API key is configured for the chosen provider; str() tells how to set one."""

    def __init__(self, provider: str, detail: str):
        self.provider = provider
        self.detail = detail
        super().__init__(missing_key_message(provider, detail))


def missing_key_message(provider: str, detail: str = "", *, at_prompt: bool = False) -> str:
    """How to set a key. `at_prompt`: the REPL is about to ask for one, so the closing hint
    (for -p and pipes) to run `agentica` in a terminal is left out."""
    var = KEY_VARS.get(provider, "AGENTICA_API_KEY")
    config = agentica_home() / "config.toml"
    lines = [f"no API key configured for provider '{provider}'." + (f" ({detail})" if detail else "")]
    lines += [
        "Set it in one of these ways:",
        f"  {'export ' + var + '=...':<34} (the provider's variable)",
        f"  {'export AGENTICA_API_KEY=...':<34} (any provider)",
        f"  {'agentica --api-key ...':<34} (this run only)",
        f"  or put it in {config}:",
        "      [model]",
        f'      provider = "{provider}"',
        '      api_key = "..."',
    ]
    if not at_prompt:
        lines.append("Run `agentica` in a terminal and it offers to save the key for you.")
    return "\n".join(lines)


def provider_name(settings: Settings) -> str:
    if settings.provider:
        return settings.provider
    return "openai"


MODEL_TIMEOUTS = ("request_timeout", "attempt_timeout", "stall_timeout")  # [model] keys, in seconds


def model_timeouts(settings: Settings) -> dict[str, float]:
    """The time limits the settings give (the model's defaults stand for the rest)."""
    return {key: value for key in MODEL_TIMEOUTS if (value := getattr(settings.model, key)) is not None}


def check_model_timeouts(settings: Settings) -> None:
    """A negative or endless limit is a config error naming the key and where it was set."""
    for key, value in model_timeouts(settings).items():
        if not 0 <= value < float("inf"):  # also NaN
            where = settings.sources.get(f"model.{key}", "config")
            raise ConfigError(f"{where}: 'model.{key}' must be a number of seconds >= 0 (0: no limit), got {value}")


# [model] settings passed to the model client as they are
MODEL_OPTIONS = ("max_tokens", "context_window", "reasoning_effort", "extra_body", "tool_call_format", "dialect")


def model_options(settings: Settings) -> dict[str, Any]:
    """The request settings the config gives (max_tokens, extra_body, ...); the rest stay the model's."""
    return {key: value for key in MODEL_OPTIONS if (value := getattr(settings.model, key)) is not None}


def check_model_options(settings: Settings) -> None:
    """A token count below 1 is a config error naming the key and where it was set."""
    for key, value in (("max_tokens", settings.model.max_tokens), ("context_window", settings.model.context_window)):
        if value is not None and value < 1:
            where = settings.sources.get(f"model.{key}", "config")
            raise ConfigError(f"{where}: 'model.{key}' must be a number of tokens >= 1, got {value}")


def build_model(settings: Settings) -> Any:
    """The model client for `settings`; raises MissingKey before any request is made."""
    from agentica_cli.models import MissingApiKeyError, create_model

    provider = provider_name(settings)
    try:
        model = create_model(
            provider, model_id=settings.model_name, base_url=settings.base_url, api_key=settings.api_key,
            **model_timeouts(settings), **model_options(settings),
        )
        resolve = getattr(model, "resolve_api_key", None)
        if callable(resolve):
            resolve()  # the client raises only at the first request; we want to tell the user now
    except MissingApiKeyError as err:
        env_var = getattr(err, "env_var", None)
        if env_var:
            KEY_VARS[provider] = env_var
        raise MissingKey(provider, settings.unsent_key or "") from None
    from agentica_cli.child_env import withhold

    withhold(settings.api_key)  # a key from a flag, a file or the config: not for hooks' environment
    if settings.model.vision is not None:  # not set: images.supports_vision guesses from the model's name
        model.vision = settings.model.vision
    size_context_from_server(model, settings)
    return model


_CONTEXT_TOLD: set[tuple[str, str]] = set()


def size_context_from_server(model: Any, settings: Settings) -> None:
    """For a server on this machine with no model.context_window configured: the context it
    really runs the model with (Ollama's default is 4096 tokens whatever the model could take),
    so compaction happens before the server cuts the prompt. What Ollama does is said once."""
    model.context_source = "model.context_window" if settings.model.context_window else "the preset"
    if settings.model.context_window is not None or not getattr(model, "local_server", False):
        return
    from agentica_cli.models.provider_errors import is_local

    if not is_local(getattr(model, "base_url", None)):
        return
    from agentica_cli.models.discovery import served_context

    found = served_context(model)
    if found is None:
        return
    model.context_window = found.tokens
    model.context_source = found.source
    told = (str(model.base_url), str(model.id))
    if found.notice and told not in _CONTEXT_TOLD:
        import sys

        _CONTEXT_TOLD.add(told)
        sys.stderr.write(f"agentica: note: {found.notice}\n")


def model_status_lines(model: Any) -> list[str]:
    """/status: where requests go and what they carry."""
    import json

    lines = [f"endpoint: {getattr(model, 'base_url', None) or 'the provider default'}"
             f" ({getattr(model, 'provider', '') or type(model).__name__})"]
    window = getattr(model, "context_window", None)
    if window:
        lines.append(f"context window: {window:,} tokens (from {getattr(model, 'context_source', 'the preset')})")
    for name in ("max_tokens", "reasoning_effort", "tool_call_format"):
        value = getattr(model, name, None)
        if value is not None:
            lines.append(f"{name}: {value}")
    extra = getattr(model, "extra_body", None)
    if extra:
        lines.append(f"extra_body: {json.dumps(extra, ensure_ascii=False)}")
    return lines


def model_label(model: Any) -> str:
    return str(getattr(model, "id", None) or getattr(model, "name", None) or type(model).__name__)


def tool_config(settings: Settings) -> Any:
    from agentica_cli.agent import ToolConfig

    wanted: dict[str, Any] = {  # ToolConfig's keywords, of their several types
        "tool_call_limit": settings.tools.tool_call_limit,
        "compress_tool_results": settings.tools.compress_tool_results,
        "context_overflow_threshold": settings.tools.context_overflow_threshold,
        "max_turns": settings.tools.max_turns,
        "max_result_tokens": settings.tools.max_result_tokens,
    }
    known = {f.name for f in dataclasses.fields(ToolConfig)} if dataclasses.is_dataclass(ToolConfig) else set()
    kwargs = {k: v for k, v in wanted.items() if v is not None and (not known or k in known)}
    return ToolConfig(**kwargs)


PLAN_MODE_NOTE = (
    "Plan mode is on: the user wants a plan before any change. Read and search as much as you need, but do not "
    "edit files, run commands or call any tool that is not read-only (those calls are refused; the todo list is "
    "fine). Finish by presenting your plan: the files, and the edits or commands you would make, for the user "
    "to approve."
)


class PermissionModePrompt:
    """Keeps the agent's instructions in step with the permission mode: in plan mode the
    model is told up front (not only when its first edit is refused) to present a plan."""

    def __init__(self, agent: Any):
        self.agent = agent
        self.base = agent.instructions

    def apply(self, mode: str) -> None:
        if mode != "plan":
            self.agent.instructions = self.base
        else:  # (--system-prompt "" with no AGENTS.md leaves no base)
            self.agent.instructions = f"{self.base}\n\n{PLAN_MODE_NOTE}" if self.base else PLAN_MODE_NOTE


def build_instructions(
    settings: Settings, work_dir: Path, report: Callable[[str], None] | None = None, found: Any = None
) -> str | None:
    """[instructions] from the config, then the instruction files: `found` when the caller read
    them already (and told their problems), else read now with problems to `report`."""
    if found is None:
        found = read_instruction_files(work_dir, report)
    parts = [settings.instructions or "", found.text]
    text = "\n\n".join(p for p in parts if p.strip())
    return text or None


def read_instruction_files(work_dir: Path, report: Callable[[str], None] | None = None) -> Any:
    """AGENTS.md, CLAUDE.md and their imports (cli/instructions.py), problems to `report`."""
    from agentica_cli.app.instructions import read_instructions

    found = read_instructions(work_dir)
    if report is not None:
        for problem in found.problems:
            report(problem)
    return found


def build_agent(
    settings: Settings,
    work_dir: Path,
    *,
    model: Any,
    allowed_dirs: list[Path],
    approve: Any,
    messages: list[dict[str, Any]] | None,
    on_message: Callable[[dict[str, Any]], None] | None,
    on_history_replaced: Callable[[list[dict[str, Any]]], None] | None = None,
    extra_tools: list[Any] | None = None,
    report: Callable[[str], None] | None = None,
    result_dir: Path | None = None,
    base_prompt: str | None = None,
    appended_prompt: str | None = None,
    instructions: Any = None,
    extensions: Any = None,
) -> Any:
    """The session's DeepAgent. `base_prompt` / `appended_prompt`: --system-prompt and
    --append-system-prompt (cli/system_prompt_flags.py). `instructions` / `extensions`: the
    instruction files and extensions the caller read already and whose problems it told (the
    REPL does at start); else they are read here and their problems go to `report`."""
    from agentica_cli.app.hooks import ConfigHooks
    from agentica_cli.app.sandbox_settings import sandbox_for
    from agentica_cli.app.toolkit_setup import build_enabled_toolkits
    from agentica_cli.deep import DeepAgent

    sandbox = sandbox_for(settings, work_dir, allowed_dirs)
    extra_tools = [*(extra_tools or []), *build_enabled_toolkits(settings, report, work_dir=work_dir,
                                                                 allowed_dirs=allowed_dirs, sandbox=sandbox,
                                                                 model=model)]
    config = tool_config(settings)
    if instructions is None:
        instructions = read_instruction_files(work_dir, report)
    if result_dir is not None:  # oversized tool results go beside the session
        config.result_dir = str(result_dir)

    kwargs: dict[str, Any] = {
        "work_dir": str(work_dir),
        "allowed_dirs": tuple(str(p) for p in allowed_dirs),
        "tools": extra_tools or None,
        "instructions": build_instructions(settings, work_dir, report, instructions),
        "tool_config": config,
        "approve": approve,
        "messages": messages,
        "on_message": on_message,
        "on_history_replaced": on_history_replaced,
        "base_prompt": base_prompt,
        "appended_prompt": appended_prompt,
    }
    hooks = ConfigHooks.from_settings(dict(settings.hooks), work_dir, report)
    if hooks:
        kwargs["hooks"] = hooks
    exclude = settings.tools.exclude
    if exclude:
        kwargs["exclude_tools"] = tuple(exclude)

    kwargs["builtin_options"] = {
        "sandbox": sandbox,
        "keep_env": settings.sandbox.env_allow,
        # networks fetch_url may reach besides public addresses (an intranet docs server)
        "allow_private_urls": settings.tools.fetch_allow_private,
    }
    agent: Any = DeepAgent(model, **kwargs)  # with what the front ends read: instruction files, extensions
    agent.instruction_texts = list(instructions.texts)
    agent.instruction_files = [str(f.path) for f in instructions.files]  # for -p's stream-json session line
    from agentica_cli.app.extension_setup import attach_extensions, load_extensions

    if extensions is None:
        extensions = load_extensions(settings, work_dir)
        attach_extensions(agent, extensions, work_dir, report)
    else:
        attach_extensions(agent, extensions, work_dir, None)
    agent.extensions = extensions  # found once per session: its custom commands are looked up here
    return agent
