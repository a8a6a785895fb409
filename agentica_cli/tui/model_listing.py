"""`agentica models` and `/model` without an argument: the models the endpoint serves.

The list comes from the endpoint itself (models/discovery.py: `GET /v1/models`, Ollama's
`/api/tags`), so a local server's models, a gateway's aliases or a provider's new releases
show up without agentica knowing them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.app.safe_text import safe_text

if TYPE_CHECKING:
    from agentica_cli.app.settings.config import Settings
    from agentica_cli.models.discovery import ServedModel
    from agentica_cli.tui.repl_host import ReplHost


def describe(served: ServedModel, current: str | None) -> str:
    """One line: `* qwen2.5-coder:7b  (7.6B Q4_K_M)`, the current model marked with `*`."""
    extras = [served.detail] if served.detail else []
    if served.context_window:
        extras.append(f"{served.context_window:,} tokens")
    mark = "*" if served.id == current else " "
    tail = f"  ({', '.join(extras)})" if extras else ""
    return safe_text(f"{mark} {served.id}{tail}", keep_newlines=False)  # names come from the server


def run_models_command(work_dir: Path | None, provider: str | None, base_url: str | None, as_json: bool) -> int:
    """`agentica models`: print the ids the configured endpoint serves, one a line."""
    from agentica_cli.app import exitcodes
    from agentica_cli.app.settings.config import ConfigError, load_settings
    from agentica_cli.app.settings.trust import is_trusted

    folder = (work_dir or Path.cwd()).expanduser().resolve()
    try:
        settings = load_settings(folder, {"model.provider": provider, "model.base_url": base_url},
                                 trusted=is_trusted(folder))
        model = _model_for_listing(settings)
    except ConfigError as err:
        sys.stderr.write(f"agentica: config error: {err}\n")
        return exitcodes.USAGE_ERROR
    from agentica_cli.models import MissingApiKeyError
    from agentica_cli.models.discovery import DiscoveryError, list_models

    try:
        model.resolve_api_key()
    except MissingApiKeyError:
        from agentica_cli.app.runtime import missing_key_message, provider_name

        sys.stderr.write(f"agentica: {missing_key_message(provider_name(settings))}\n")
        return exitcodes.USAGE_ERROR
    try:
        served = list_models(model)
    except DiscoveryError as err:
        sys.stderr.write(f"agentica: cannot list the models: {safe_text(str(err), keep_newlines=False)}\n")
        return exitcodes.MODEL_ERROR
    if as_json:
        import json

        print(json.dumps([{"id": m.id, "context_window": m.context_window, "detail": m.detail or None}
                          for m in served], ensure_ascii=False))
        return exitcodes.OK
    if not served:
        print(f"{model.base_url or 'the endpoint'} lists no models")
        return exitcodes.OK
    for entry in served:
        print(describe(entry, model.id))
    return exitcodes.OK


def _model_for_listing(settings: Settings) -> Any:
    """The configured model client, without the key check a session makes: a listing of a
    local server needs no key, and a provider that wants one says so itself."""
    from agentica_cli.app.runtime import model_timeouts, provider_name
    from agentica_cli.models.presets import provider_class

    cls = provider_class(provider_name(settings))
    timeouts: dict[str, Any] = model_timeouts(settings)
    return cls(id=settings.model_name, base_url=settings.base_url, api_key=settings.api_key,
               **timeouts)


async def pick_model(repl: ReplHost) -> str | None:
    """/model: list what the endpoint serves, ask for a number or an id; the id chosen, or None."""
    import asyncio

    from agentica_cli.app.runtime import model_label
    from agentica_cli.models.discovery import DiscoveryError, list_models
    from agentica_cli.tui.terminal import plain

    current = model_label(repl.session().model)
    plain(f"model: {safe_text(current)} (provider {repl.settings.provider or 'openai'})")
    try:
        served = await asyncio.to_thread(list_models, repl.session().model)
    except DiscoveryError as err:
        plain(f"Cannot list the endpoint's models: {safe_text(str(err), keep_newlines=False)}. "
              "Switch with /model NAME.", "33")
        return None
    if not served:
        plain("The endpoint lists no models. Switch with /model NAME.", "33")
        return None
    for number, entry in enumerate(served, 1):
        plain(f"  {number:>2}. {describe(entry, current)}")
    reply = (await repl.ask_line(f"Switch to [1-{len(served)} or a name; Enter: keep {current}]: ")).strip()
    if not reply:
        return None
    if reply.isdigit():
        if 1 <= int(reply) <= len(served):
            return served[int(reply) - 1].id
        plain(f"No model {reply}: the list has {len(served)}.", "33")
        return None
    return reply
