"""OpenAI-compatible providers: base URL, API key variable and a sensible default model."""

from __future__ import annotations

from typing import Any

from agentica_cli.models.base import MissingApiKeyError
from agentica_cli.models.openai_chat import OpenAIChat


class ZhipuAI(OpenAIChat):
    provider = "ZhipuAI"
    default_id = "glm-4-flash"
    default_base_url = "https://open.bigmodel.cn/api/paas/v4"
    api_key_env = "ZHIPUAI_API_KEY"
    base_url_env = "ZHIPUAI_BASE_URL"
    preset_dialect = "zhipu"


class DeepSeek(OpenAIChat):
    provider = "DeepSeek"
    default_id = "deepseek-chat"
    default_base_url = "https://api.deepseek.com/v1"
    api_key_env = "DEEPSEEK_API_KEY"
    base_url_env = "DEEPSEEK_BASE_URL"
    preset_dialect = "deepseek"


class Moonshot(OpenAIChat):
    provider = "Moonshot"
    default_id = "kimi-k2-0711-preview"
    default_base_url = "https://api.moonshot.cn/v1"
    api_key_env = "MOONSHOT_API_KEY"
    base_url_env = "MOONSHOT_BASE_URL"
    preset_dialect = "kimi"


class Qwen(OpenAIChat):
    provider = "Qwen"
    default_id = "qwen-plus"
    default_base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
    api_key_env = "DASHSCOPE_API_KEY"
    base_url_env = "DASHSCOPE_BASE_URL"
    preset_dialect = "qwen"


class OpenRouter(OpenAIChat):
    provider = "OpenRouter"
    default_id = "openai/gpt-4o"
    default_base_url = "https://openrouter.ai/api/v1"
    api_key_env = "OPENROUTER_API_KEY"
    base_url_env = "OPENROUTER_BASE_URL"
    preset_dialect = "openrouter"


class Ollama(OpenAIChat):
    """A local Ollama server; no key needed."""

    provider = "Ollama"
    default_id = "qwen2.5-coder:7b"
    default_base_url = "http://localhost:11434/v1"
    api_key_env = "OLLAMA_API_KEY"
    base_url_env = "OLLAMA_BASE_URL"
    preset_dialect = "ollama"
    requires_api_key = False
    default_context_window = 32_768


class OpenAILike(OpenAIChat):
    """Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, a gateway); key optional."""

    provider = "OpenAILike"
    default_id = "default"
    default_base_url = "http://localhost:8000/v1"
    api_key_env = "OPENAI_LIKE_API_KEY"
    base_url_env = "OPENAI_LIKE_BASE_URL"
    requires_api_key = False
    default_context_window = 32_768


PROVIDERS: dict[str, type[OpenAIChat]] = {
    "openai": OpenAIChat,
    "zhipuai": ZhipuAI,
    "deepseek": DeepSeek,
    "moonshot": Moonshot,
    "qwen": Qwen,
    "openrouter": OpenRouter,
    "ollama": Ollama,
    "openai-like": OpenAILike,
}

ALIASES = {
    "zhipu": "zhipuai", "glm": "zhipuai", "kimi": "moonshot", "dashscope": "qwen",
    "openailike": "openai-like", "openai_like": "openai-like", "vllm": "openai-like",
    "lmstudio": "openai-like", "lm-studio": "openai-like",
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
    "DeepSeek",
    "MissingApiKeyError",
    "Moonshot",
    "Ollama",
    "OpenAILike",
    "OpenRouter",
    "Qwen",
    "ZhipuAI",
    "create_model",
    "provider_class",
]
