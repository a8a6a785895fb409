"""LLM clients: OpenAIChat and OpenAI-compatible presets. Requests go over httpx2 (chat_http);
the `openai` SDK is imported only for `transport="openai"` and `OpenAIChat.client()`.

What each provider sends back and wants back (reasoning, thought signatures, finish
reasons) is its dialect: agentica_cli/models/dialects.py, chosen per class, base URL and id.

| class        | key variable        | default base URL (override variable)                      | default model |
|--------------|---------------------|-----------------------------------------------------------|---------------|
| OpenAIChat   | OPENAI_API_KEY      | SDK default (OPENAI_BASE_URL)                             | gpt-4o        |
| ZhipuAI      | ZHIPUAI_API_KEY / ZAI_API_KEY | open.bigmodel.cn/api/paas/v4 (ZHIPUAI_BASE_URL) | glm-5.1       |
| ZAI          | ZAI_API_KEY         | api.z.ai/api/paas/v4 (ZAI_BASE_URL); *Coding: .../api/coding/paas/v4 | glm-5.1 |
| DeepSeek     | DEEPSEEK_API_KEY    | api.deepseek.com (DEEPSEEK_BASE_URL)                      | deepseek-v4-flash |
| Moonshot     | MOONSHOT_API_KEY    | api.moonshot.cn/v1, International: api.moonshot.ai/v1     | kimi-k2.6     |
| Qwen         | DASHSCOPE_API_KEY   | dashscope(-intl).aliyuncs.com/compatible-mode/v1          | qwen-plus     |
| OpenRouter   | OPENROUTER_API_KEY  | openrouter.ai/api/v1 (OPENROUTER_BASE_URL)                | openai/gpt-4o |
| Ollama       | none                | localhost:11434/v1 (OLLAMA_BASE_URL, OLLAMA_HOST)         | qwen2.5-coder:7b |
| LMStudio, LlamaCpp, VLLM | optional | localhost:1234/v1, localhost:8080/v1, localhost:8000/v1 | default |
| OpenAILike   | OPENAI_LIKE_API_KEY (optional) | localhost:8000/v1 (OPENAI_LIKE_BASE_URL)       | default       |

Errors as each provider words them: `provider_errors`; listing an endpoint's models and a
local server's real context: `discovery`; tool calls written as text: `text_tool_calls`.
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
    VLLM,
    ZAI,
    DeepSeek,
    LlamaCpp,
    LMStudio,
    Moonshot,
    MoonshotInternational,
    Ollama,
    OpenAILike,
    OpenRouter,
    Qwen,
    QwenInternational,
    ZAICoding,
    ZhipuAI,
    ZhipuAICoding,
    create_model,
    provider_class,
)
from agentica_cli.models.retry import RetryPolicy

__all__ = [
    "PROVIDERS",
    "VLLM",
    "ZAI",
    "DeepSeek",
    "LMStudio",
    "LlamaCpp",
    "MissingApiKeyError",
    "Model",
    "ModelError",
    "ModelReasoningDelta",
    "ModelResponse",
    "ModelRetry",
    "ModelTextDelta",
    "Moonshot",
    "MoonshotInternational",
    "Ollama",
    "OpenAIChat",
    "OpenAILike",
    "OpenRouter",
    "Qwen",
    "QwenInternational",
    "RetryPolicy",
    "TokenUsage",
    "ToolCallRequest",
    "ZAICoding",
    "ZhipuAI",
    "ZhipuAICoding",
    "create_model",
    "provider_class",
]
