"""First run in the REPL without a key: pick a provider, paste a key, check it, save it.

    no API key configured for provider 'openai'. ...
    Which provider?
       1. openai        key from OPENAI_API_KEY
       ...
    Provider [1]:
    Paste your openai API key (Enter to quit):
    Checking the key... accepted.
    Save it to your user config (~/.agentica/config.toml)? [Y/n]

The key is checked with one cheap request (the provider's model list) before it is saved:
a refused key (401/403) is asked again; when the check cannot be made (network, a provider
without that route) the user decides whether to save it anyway. Enter at the key prompt, or
Ctrl-C anywhere, leaves with a sentence saying that no key was saved (the REPL exits 2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.settings.config import Settings, agentica_home, save_user_setting
from agentica_cli.tui.terminal import home_relative, plain

if TYPE_CHECKING:
    from agentica_cli.tui.repl_host import ReplHost

CHECK_TIMEOUT = 15.0  # seconds for the key check, connection included
GAVE_UP = "No key saved; run agentica again when you have one."

AskLine = Callable[..., Awaitable[str]]


class Abandoned(Exception):
    """The user left onboarding (Enter at the key prompt, Ctrl-C, Ctrl-D)."""


@dataclass
class KeyCheck:
    verdict: str  # "accepted", "refused", "unchecked"
    detail: str = ""


# The list offered by number; every other preset (zai, moonshot-intl, lmstudio, ...) is taken by name.
LISTED_PROVIDERS = ("openai", "zhipuai", "deepseek", "moonshot", "qwen", "openrouter", "ollama", "openai-like")


def provider_choices() -> list[tuple[str, str]]:
    """(provider name, where its key comes from) for the main presets, openai first."""
    from agentica_cli.models.presets import PROVIDERS

    out = []
    for name, cls in PROVIDERS.items():
        if name not in LISTED_PROVIDERS:
            continue
        if getattr(cls, "requires_api_key", True):
            out.append((name, f"key from {cls.api_key_env}" if cls.api_key_env else ""))
        else:
            out.append((name, "local server, no key needed"))
    return out


async def check_key(model: Any, timeout: float = CHECK_TIMEOUT) -> KeyCheck:
    """One GET {base_url}/models with the model's key: is the key accepted?"""
    from agentica_cli.models.openai_import import import_openai

    openai = import_openai()

    try:
        client = model.client().with_options(timeout=timeout, max_retries=0)
        await asyncio.wait_for(client.models.list(), timeout)
    except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
        return KeyCheck("refused", f"HTTP {err.status_code}")
    except openai.APIStatusError as err:
        return KeyCheck("unchecked", f"the provider answered HTTP {err.status_code}")
    except (openai.APIConnectionError, asyncio.TimeoutError) as err:
        return KeyCheck("unchecked", f"could not reach {model.base_url or 'the provider'}: {type(err).__name__}")
    return KeyCheck("accepted")


class Onboarding:
    """The dialogue; `ask` reads a line (prompt_toolkit), `on_interrupt` is where the REPL's
    Ctrl-C handler looks for what to cancel while no prompt runs (the key check)."""

    def __init__(self, settings: Settings, ask: AskLine, repl: ReplHost):
        self.settings = settings
        self.ask = ask
        self.repl = repl

    async def run(self, provider: str, detail: str) -> Any:
        """The model to use, or None when the user left (already told why)."""
        from agentica_cli.app.runtime import missing_key_message

        plain(missing_key_message(provider, detail, at_prompt=True), "33")
        try:
            return await self._dialogue()
        except (Abandoned, KeyboardInterrupt, EOFError):
            self.settings.model = replace(self.settings.model, api_key=None)
            plain(GAVE_UP, "33")
            return None

    async def _dialogue(self) -> Any:
        from agentica_cli.app.runtime import MissingKey, build_model, provider_name

        chosen_here = self.settings.provider is None
        if chosen_here:
            self.settings.model = replace(self.settings.model, provider=await self.choose_provider())
            try:
                model = build_model(self.settings)  # a local server, or a key already in the environment
            except MissingKey:
                pass
            else:
                if getattr(model, "local_server", False):  # no key asked: say where requests will go
                    plain(f"It connects to {safe_text(str(model.base_url))} (another address: base_url in the config, "
                          "or --base-url).", "2")
                if await self.yes(f"Save provider = \"{provider_name(self.settings)}\" to your user config? [Y/n] "):
                    path = save_user_setting("model", "provider", provider_name(self.settings))
                    plain(f"Saved to {home_relative(path)}.", "32")
                return model
        provider = provider_name(self.settings)
        while True:
            key = (await self.ask(f"Paste your {provider} API key (Enter to quit): ", password=True)).strip()
            if not key:
                raise Abandoned
            self.settings.model = replace(self.settings.model, api_key=key)
            model = build_model(self.settings)
            plain("Checking the key…", "2")
            result = await self.checked(model)
            if result.verdict == "refused":
                plain(f"The provider refused this key ({result.detail}). Check it and paste it again.", "31")
                await _close(model)
                continue
            if result.verdict == "accepted":
                plain("Key accepted.", "32")
                where = home_relative(agentica_home() / "config.toml")
                save = await self.yes(f"Save it to your user config ({where})? [Y/n] ")
            else:
                plain(f"Could not check the key: {safe_text(result.detail, keep_newlines=False)}.", "33")
                save = await self.yes("Save it anyway? [y/N] ", default=False)
            if save:
                path = save_user_setting("model", "api_key", key)
                # Always beside it: a key in a config file goes only to the provider named there.
                save_user_setting("model", "provider", provider)
                plain(f"Saved to {path} (readable only by you).", "32")
            else:
                plain("Not saved: the key is used for this session only.", "2")
            return model

    async def choose_provider(self) -> str:
        choices = provider_choices()
        plain("Which provider?")
        for number, (name, note) in enumerate(choices, 1):
            plain(f"  {number:>2}. {name:<13} {note}")
        while True:
            reply = (await self.ask(f"Provider [1-{len(choices)}, Enter = {choices[0][0]}]: ")).strip().lower()
            if not reply:
                return choices[0][0]
            if reply.isdigit() and 1 <= int(reply) <= len(choices):
                return choices[int(reply) - 1][0]
            from agentica_cli.models.presets import provider_class

            try:
                provider_class(reply)
                return reply
            except ValueError:
                plain(f"Type a number from 1 to {len(choices)}, or a provider's name.", "33")

    async def yes(self, question: str, *, default: bool = True) -> bool:
        """One key (y, n, Enter for the default), as an approval is answered."""
        return await self.repl.ask_yes_no(question, default=default)

    async def checked(self, model: Any) -> KeyCheck:
        """The key check, which Ctrl-C cancels (no prompt is running to take the key)."""
        task = asyncio.ensure_future(check_key(model))
        self.repl.on_interrupt = task.cancel
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and not _current_task_cancelling():
                raise KeyboardInterrupt from None
            raise
        finally:
            self.repl.on_interrupt = None


def _current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())


async def _close(model: Any) -> None:
    aclose = getattr(model, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:
            pass
