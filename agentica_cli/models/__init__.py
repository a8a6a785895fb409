"""LLM clients: OpenAIChat and OpenAI-compatible presets. `openai` is imported on first request.

What each provider sends back and wants back (reasoning, thought signatures, finish
reasons) is its dialect: agentica_cli/models/dialects.py, chosen per class, base URL and id.

| class        | key variable        | default base URL (override variable)                      | default model |
|--------------|---------------------|-----------------------------------------------------------|---------------|
| OpenAIChat   | OPENAI_API_KEY      | SDK default (OPENAI_BASE_URL)                             | gpt-4o        |
| ZhipuAI      | ZHIPUAI_API_KEY     | open.bigmodel.cn/api/paas/v4 (ZHIPUAI_BASE_URL)           | glm-4-flash   |
| DeepSeek     | DEEPSEEK_API_KEY    | api.deepseek.com/v1 (DEEPSEEK_BASE_URL)                   | deepseek-chat |
| Moonshot     | MOONSHOT_API_KEY    | api.moonshot.cn/v1 (MOONSHOT_BASE_URL)                    | kimi-k2-0711-preview|
| Qwen         | DASHSCOPE_API_KEY   | dashscope.aliyuncs.com/compatible-mode/v1 (DASHSCOPE_BASE_URL) | qwen-plus |
| OpenRouter   | OPENROUTER_API_KEY  | openrouter.ai/api/v1 (OPENROUTER_BASE_URL)                | openai/gpt-4o |
| Ollama       | none                | localhost:11434/v1 (OLLAMA_BASE_URL)                      | qwen2.5-coder:7b |
| OpenAILike   | OPENAI_LIKE_API_KEY (optional) | localhost:8000/v1 (OPENAI_LIKE_BASE_URL)       | default       |
"""

from agentica_cli.models.base import (
    MissingApiKeyError,
    Model,
    ModelError,
    ModelReasoningDelta,
    ModelResponse,
    ModelRetry,
    ModelTextDelta,
    TokenUsage,
    ToolCallRequest,
)
from agentica_cli.models.openai_chat import OpenAIChat
from agentica_cli.models.presets import (
    PROVIDERS,
    DeepSeek,
    Moonshot,
    Ollama,
    OpenAILike,
    OpenRouter,
    Qwen,
    ZhipuAI,
    create_model,
    provider_class,
)
from agentica_cli.models.retry import RetryPolicy

__all__ = [
    "PROVIDERS",
    "DeepSeek",
    "MissingApiKeyError",
    "Model",
    "ModelError",
    "ModelReasoningDelta",
    "ModelResponse",
    "ModelRetry",
    "ModelTextDelta",
    "Moonshot",
    "Ollama",
    "OpenAIChat",
    "OpenAILike",
    "OpenRouter",
    "Qwen",
    "RetryPolicy",
    "TokenUsage",
    "ToolCallRequest",
    "ZhipuAI",
    "create_model",
    "provider_class",
]
