"""OpenAI-compatible providers: base URL, API key variable and a sensible default model."""

from __future__ import annotations

import os
from typing import Any

from agentica_cli.models.base import MissingApiKeyError
from agentica_cli.models.openai_chat import OpenAIChat


class ZhipuAI(OpenAIChat):
    """Zhipu's BigModel platform (China). GLM Coding Plan keys: `ZhipuAICoding` (or base_url
    https://open.bigmodel.cn/api/coding/paas/v4); international z.ai accounts: `ZAI`."""

    provider = "ZhipuAI"
    default_id = "glm-5.1"
    default_base_url = "https://open.bigmodel.cn/api/paas/v4"
    api_key_env = "ZHIPUAI_API_KEY"
    api_key_env_aliases = ("ZAI_API_KEY",)
    base_url_env = "ZHIPUAI_BASE_URL"
    preset_dialect = "zhipu"
    default_context_window = 200_000


class ZhipuAICoding(ZhipuAI):
    """A GLM Coding Plan key on BigModel: its own endpoint (the pay-as-you-go one answers 1113)."""

    provider = "ZhipuAI (GLM Coding Plan)"
    default_base_url = "https://open.bigmodel.cn/api/coding/paas/v4"


class ZAI(ZhipuAI):
    """z.ai, Zhipu's international platform (separate keys from BigModel)."""

    provider = "Z.ai"
    default_base_url = "https://api.z.ai/api/paas/v4"
    api_key_env = "ZAI_API_KEY"
    api_key_env_aliases = ("ZHIPUAI_API_KEY",)
    base_url_env = "ZAI_BASE_URL"


class ZAICoding(ZAI):
    provider = "Z.ai (GLM Coding Plan)"
    default_base_url = "https://api.z.ai/api/coding/paas/v4"


class DeepSeek(OpenAIChat):
    """DeepSeek V4 (`deepseek-v4-flash`, `deepseek-v4-pro`): thinking on by default, 1M context.
    Turn thinking off with extra_body = {thinking = {type = "disabled"}}."""

    provider = "DeepSeek"
    default_id = "deepseek-v4-flash"
    default_base_url = "https://api.deepseek.com"
    api_key_env = "DEEPSEEK_API_KEY"
    base_url_env = "DEEPSEEK_BASE_URL"
    preset_dialect = "deepseek"
    default_context_window = 1_000_000


class Moonshot(OpenAIChat):
    """Moonshot's China platform (platform.moonshot.cn); international keys: `MoonshotInternational`."""

    provider = "Moonshot"
    default_id = "kimi-k2.6"
    default_base_url = "https://api.moonshot.cn/v1"
    api_key_env = "MOONSHOT_API_KEY"
    base_url_env = "MOONSHOT_BASE_URL"
    preset_dialect = "kimi"
    default_context_window = 262_144


class MoonshotInternational(Moonshot):
    provider = "Moonshot (international)"
    default_base_url = "https://api.moonshot.ai/v1"


class Qwen(OpenAIChat):
    """Alibaba Cloud Bailian / DashScope (China); international accounts: `QwenInternational`."""

    provider = "Qwen"
    default_id = "qwen-plus"
    default_base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
    api_key_env = "DASHSCOPE_API_KEY"
    base_url_env = "DASHSCOPE_BASE_URL"
    preset_dialect = "qwen"
    default_context_window = 131_072


class QwenInternational(Qwen):
    provider = "Qwen (international)"
    default_base_url = "https://dashscope-intl.aliyuncs.com/compatible-mode/v1"


class OpenRouter(OpenAIChat):
    provider = "OpenRouter"
    default_id = "openai/gpt-4o"
    default_base_url = "https://openrouter.ai/api/v1"
    api_key_env = "OPENROUTER_API_KEY"
    base_url_env = "OPENROUTER_BASE_URL"
    preset_dialect = "openrouter"


class Ollama(OpenAIChat):
    """A local Ollama server; no key needed. The address comes from OLLAMA_BASE_URL, else
    OLLAMA_HOST (what the server itself reads), else localhost:11434. Its OpenAI endpoint runs
    a model at the server's default context (4096 tokens unless the server was started with
    OLLAMA_CONTEXT_LENGTH, or the model's Modelfile sets num_ctx) and ignores num_ctx in requests."""

    provider = "Ollama"
    default_id = "qwen2.5-coder:7b"
    default_base_url = "http://localhost:11434/v1"
    api_key_env = "OLLAMA_API_KEY"
    base_url_env = "OLLAMA_BASE_URL"
    preset_dialect = "ollama"
    requires_api_key = False
    default_context_window = 4096  # the server's default; agentica asks the server (models/discovery.py)
    local_server = True

    def __init__(self, id: str | None = None, api_key: str | None = None, base_url: str | None = None, **options: Any):
        if base_url is None and not os.environ.get(self.base_url_env or ""):
            base_url = ollama_host_url(os.environ.get("OLLAMA_HOST"))
        super().__init__(id, api_key, base_url, **options)


def ollama_host_url(host: str | None) -> str | None:
    """OLLAMA_HOST as the server reads it ("0.0.0.0", "host:port", "http://host:port") made the
    client's /v1 base URL; None when it is not set."""
    from urllib.parse import urlsplit

    host = (host or "").strip().rstrip("/")
    if not host:
        return None
    parts = urlsplit(host if "://" in host else f"http://{host}")
    try:
        port = parts.port or 11434
    except ValueError:
        return None
    hostname = parts.hostname or ""
    if hostname in ("", "0.0.0.0", "::"):  # the server listens everywhere: connect to this machine
        hostname = "127.0.0.1"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    return f"{parts.scheme}://{hostname}:{port}/v1"


class OpenAILike(OpenAIChat):
    """Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, a gateway); key optional."""

    provider = "OpenAILike"
    default_id = "default"
    default_base_url = "http://localhost:8000/v1"
    api_key_env = "OPENAI_LIKE_API_KEY"
    base_url_env = "OPENAI_LIKE_BASE_URL"
    requires_api_key = False
    default_context_window = 32_768
    local_server = True


class VLLM(OpenAILike):
    provider = "vLLM"
    default_base_url = "http://localhost:8000/v1"
    base_url_env = "VLLM_BASE_URL"


class LMStudio(OpenAILike):
    provider = "LM Studio"
    default_base_url = "http://localhost:1234/v1"
    base_url_env = "LMSTUDIO_BASE_URL"


class LlamaCpp(OpenAILike):
    provider = "llama.cpp"
    default_base_url = "http://localhost:8080/v1"
    base_url_env = "LLAMACPP_BASE_URL"


PROVIDERS: dict[str, type[OpenAIChat]] = {
    "openai": OpenAIChat,
    "zhipuai": ZhipuAI,
    "zhipuai-coding": ZhipuAICoding,
    "zai": ZAI,
    "zai-coding": ZAICoding,
    "deepseek": DeepSeek,
    "moonshot": Moonshot,
    "moonshot-intl": MoonshotInternational,
    "qwen": Qwen,
    "qwen-intl": QwenInternational,
    "openrouter": OpenRouter,
    "ollama": Ollama,
    "lmstudio": LMStudio,
    "llamacpp": LlamaCpp,
    "vllm": VLLM,
    "openai-like": OpenAILike,
}

ALIASES = {
    "zhipu": "zhipuai", "glm": "zhipuai", "bigmodel": "zhipuai", "glm-coding": "zhipuai-coding",
    "z.ai": "zai", "z-ai": "zai", "zai-intl": "zai",
    "kimi": "moonshot", "kimi-intl": "moonshot-intl", "moonshot-ai": "moonshot-intl",
    "dashscope": "qwen", "dashscope-intl": "qwen-intl",
    "openailike": "openai-like", "openai_like": "openai-like",
    "lm-studio": "lmstudio", "lm_studio": "lmstudio", "llama.cpp": "llamacpp", "llama-cpp": "llamacpp",
    "llama-server": "llamacpp",
}


def provider_class(provider: str) -> type[OpenAIChat]:
    key = provider.strip().lower()
    key = ALIASES.get(key, key)
    if key not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; choose one of: {', '.join(PROVIDERS)}")
    return PROVIDERS[key]


def create_model(
    provider: str = "openai",
    model_id: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    **options: Any,
) -> OpenAIChat:
    """A model client for `provider`; raises MissingApiKeyError now if it needs a key and has none."""
    model = provider_class(provider)(id=model_id, api_key=api_key, base_url=base_url, **options)
    model.resolve_api_key()
    return model


__all__ = [
    "PROVIDERS",
    "VLLM",
    "ZAI",
    "DeepSeek",
    "LMStudio",
    "LlamaCpp",
    "MissingApiKeyError",
    "Moonshot",
    "MoonshotInternational",
    "Ollama",
    "OpenAILike",
    "OpenRouter",
    "Qwen",
    "QwenInternational",
    "ZAICoding",
    "ZhipuAI",
    "ZhipuAICoding",
    "create_model",
    "provider_class",
]
