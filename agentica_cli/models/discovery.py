"""What an endpoint serves: its models (`agentica models`, `/model`) and, for a server on this
machine, the context it really runs a model with.

Plain HTTP GETs with the standard library (short timeouts, no event loop, so the CLI can ask
before a session starts):

- `GET {base_url}/models`: the OpenAI list (`{"data": [{"id": ...}]}`); vLLM adds
  `max_model_len`, OpenRouter `context_length`, LM Studio `max_context_length`.
- Ollama: `GET /api/tags` (its own list, when /v1/models is missing), `POST /api/show` (the
  model's `num_ctx` parameter and trained `context_length`), `GET /api/ps` (the context a
  loaded model runs with). Its OpenAI endpoint ignores `num_ctx` in requests and runs at the
  server's default (4096 tokens unless OLLAMA_CONTEXT_LENGTH is set where the server starts).
- llama.cpp: `GET /props` (`default_generation_settings.n_ctx`, the `-c` it was started with).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

OLLAMA_DEFAULT_CONTEXT = 4096
TIMEOUT = 3.0


class DiscoveryError(Exception):
    """The endpoint could not be asked, or does not list its models; the message says which."""


@dataclass
class ServedModel:
    id: str
    context_window: int | None = None
    detail: str = ""  # e.g. Ollama's parameter size and quantisation


def root_url(base_url: str) -> str:
    """The server's root: the base URL without its OpenAI `/v1` path."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _request(url: str, key: str | None, *, body: dict[str, Any] | None = None, timeout: float = TIMEOUT) -> Any:
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if key and key != "not-needed":
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read(8_000_000)
    except urllib.error.HTTPError as err:
        from agentica_cli.models.provider_errors import read_error

        report = read_error(err.read(100_000))
        reason = report.message or (f'a web page "{report.page_title}"' if report.page_title else err.reason)
        raise DiscoveryError(f"{url} answered HTTP {err.code}: {reason}") from None
    except (urllib.error.URLError, OSError) as err:
        from agentica_cli.models.provider_errors import refused_hint

        cause = getattr(err, "reason", err)
        text = f"could not connect to {url}: {cause}"
        if "refused" in str(cause).lower():
            text += f"; {refused_hint(url)}"
        raise DiscoveryError(text) from None
    try:
        return json.loads(raw)
    except ValueError:
        raise DiscoveryError(f"{url} did not answer with JSON (is it an OpenAI-compatible API?)") from None


def _key(model: Any) -> str | None:
    try:
        return model.resolve_api_key()
    except Exception:  # a missing key: the listing may still work (local servers)
        return None


def _base_url(model: Any) -> str:
    return (getattr(model, "base_url", None) or "https://api.openai.com/v1").rstrip("/")


def _context_of(entry: dict[str, Any]) -> int | None:
    for key in ("max_model_len", "context_length", "max_context_length", "loaded_context_length",
                "context_window"):
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    top = entry.get("top_provider")  # OpenRouter
    if isinstance(top, dict) and isinstance(top.get("context_length"), int):
        return top["context_length"]
    return None


def list_models(model: Any) -> list[ServedModel]:
    """The models the model's endpoint serves, sorted by id. Raises DiscoveryError."""
    base = _base_url(model)
    key = _key(model)
    try:
        listing = _request(f"{base}/models", key)
    except DiscoveryError as err:
        if not _is_ollama(model):
            raise
        try:
            return _ollama_tags(base, key)
        except DiscoveryError:
            raise err from None
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        if isinstance(listing, dict) and isinstance(listing.get("models"), list):  # an Ollama root as base_url
            return _ollama_entries(listing["models"])
        raise DiscoveryError(f"{base}/models did not answer with a model list ({{\"data\": [...]}})")
    served = [ServedModel(str(e["id"]), _context_of(e)) for e in data if isinstance(e, dict) and e.get("id")]
    return sorted(served, key=lambda m: m.id)


def _is_ollama(model: Any) -> bool:
    return type(model).__name__ == "Ollama" or ":11434" in _base_url(model)


def _ollama_tags(base: str, key: str | None) -> list[ServedModel]:
    listing = _request(f"{root_url(base)}/api/tags", key)
    models = listing.get("models") if isinstance(listing, dict) else None
    if not isinstance(models, list):
        raise DiscoveryError(f"{root_url(base)}/api/tags did not answer with Ollama's model list")
    return _ollama_entries(models)


def _ollama_entries(models: list[Any]) -> list[ServedModel]:
    out = []
    for entry in models:
        if not isinstance(entry, dict) or not (entry.get("model") or entry.get("name")):
            continue
        details = entry.get("details") or {}
        detail = " ".join(str(details[k]) for k in ("parameter_size", "quantization_level") if details.get(k))
        out.append(ServedModel(str(entry.get("model") or entry.get("name")), None, detail))
    return sorted(out, key=lambda m: m.id)


@dataclass
class ServedContext:
    tokens: int
    source: str  # where the figure came from, for /status
    notice: str = ""  # what the user should know (Ollama's silent truncation)


def served_context(model: Any) -> ServedContext | None:
    """The context the local server runs `model.id` with, or None when it does not say."""
    base = _base_url(model)
    key = _key(model)
    if _is_ollama(model):
        return _ollama_context(model, base, key)
    try:
        props = _request(f"{root_url(base)}/props", key, timeout=1.5)
        n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx") if isinstance(props, dict) else None
        if isinstance(n_ctx, int) and n_ctx > 0:
            return ServedContext(n_ctx, "the llama.cpp server's /props (n_ctx)")
    except DiscoveryError:
        pass
    try:
        served = list_models(model)
    except DiscoveryError:
        return None
    match = [m for m in served if m.id == model.id] or (served if len(served) == 1 else [])
    if match and match[0].context_window:
        return ServedContext(match[0].context_window, "the server's /v1/models")
    return None


def _ollama_context(model: Any, base: str, key: str | None) -> ServedContext | None:
    root = root_url(base)
    trained = num_ctx = running = None
    try:
        shown = _request(f"{root}/api/show", key, body={"model": model.id}, timeout=1.5)
    except DiscoveryError:
        shown = None
    if isinstance(shown, dict):
        for line in str(shown.get("parameters") or "").splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                num_ctx = int(value.strip())
        info = shown.get("model_info") or {}
        trained = next((v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)), None)
    try:
        loaded = _request(f"{root}/api/ps", key, timeout=1.5)
        for entry in (loaded.get("models") or []) if isinstance(loaded, dict) else []:
            if entry.get("model") == model.id or entry.get("name") == model.id:
                running = entry.get("context_length") if isinstance(entry.get("context_length"), int) else None
    except DiscoveryError:
        pass
    if shown is None and running is None:
        return None  # not an Ollama server after all, or not running: the preset's figure stands
    env = os.environ.get("OLLAMA_CONTEXT_LENGTH", "").strip()
    if running:
        tokens, source = running, "Ollama's /api/ps (the loaded model's context)"
    elif num_ctx:
        tokens, source = num_ctx, "the model's num_ctx parameter (Ollama's /api/show)"
    elif env.isdigit():
        tokens, source = int(env), "OLLAMA_CONTEXT_LENGTH"
    else:
        tokens, source = OLLAMA_DEFAULT_CONTEXT, "Ollama's default context"
    if trained:
        tokens = min(tokens, trained)
    notice = ""
    if not num_ctx and (not trained or tokens < trained):
        notice = (f"Ollama runs {model.id} with a {tokens:,}-token context ({source}); its OpenAI endpoint ignores "
                  "num_ctx and cuts longer prompts from the front without a word. For more, start the server with "
                  "OLLAMA_CONTEXT_LENGTH=32768 (or set PARAMETER num_ctx in a Modelfile). agentica compacts the "
                  f"conversation to fit {tokens:,} tokens.")
    return ServedContext(tokens, source, notice)
