"""What a failed model request said, read the way each provider says it.

Every OpenAI-compatible provider answers a failed request with its own body: OpenAI and most
others `{"error": {"message", "type", "code"}}`; Zhipu the same with a numeric `code` string
("1261"); DashScope sometimes a top-level `{"code", "message"}`; Gemini's OpenAI endpoint a JSON
*list* of such objects; OpenRouter `error.metadata.raw`, the upstream provider's own body as a
string; a proxy in front of any of them an HTML page. `read_error` turns any of these into one
`ErrorReport` (the message text that gives the real reason, the provider's code and type);
`failure_category` says what kind of failure it is: a context overflow (compact and retry
once), a billing or quota problem (retrying cannot help), a rate limit, or none of those.

The wordings are kept per provider in `PROVIDER_ERRORS` (keyed by preset name, so the provider
dialects can name theirs) but matched all together: a custom `openai-like` endpoint may be any
of these servers, and a gateway passes its upstream's wording through.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

OVERFLOW = "context_length"  # ModelError.kind: the request is too long for the model's context
BILLING = "billing"  # no credit, quota or plan left: the same request fails again until the user acts
RATE_LIMIT = "rate_limit"  # a per-minute limit the request is too large for (Groq 413)


@dataclass(frozen=True)
class ProviderErrors:
    """One provider's error wordings: regular expressions (case-insensitive) on the message,
    and provider codes (`error.code`, `error.type`) that decide without the message."""

    overflow: tuple[str, ...] = ()
    overflow_codes: tuple[str, ...] = ()
    billing: tuple[str, ...] = ()
    billing_codes: tuple[str, ...] = ()
    rate_limit: tuple[str, ...] = ()  # size limits that are not the context: not an overflow


PROVIDER_ERRORS: dict[str, ProviderErrors] = {
    # 400 context_length_exceeded "This model's maximum context length is 128000 tokens..."; 429
    # insufficient_quota "You exceeded your current quota, please check your plan and billing details"
    "openai": ProviderErrors(
        overflow=(r"maximum context length", r"context[ _]length[ _]exceeded", r"reduce the length of the messages"),
        overflow_codes=("context_length_exceeded",),
        billing=(r"exceeded your current quota", r"check your plan and billing"),
        billing_codes=("insufficient_quota", "billing_hard_limit_reached"),
        # 429 "Request too large for gpt-4o ... on tokens per min (TPM): Limit 30000, Requested 342389"
        rate_limit=(r"tokens per min\b",),
    ),
    # 400 {"code": "1261", "message": "Prompt exceeds max length"}; 400 code 1210 "... input tokens
    # exceeds the model's maximum context length"; 429 code 1113 "余额不足或无可用资源包,请充值。"
    # (also what a GLM Coding Plan key gets on the pay-as-you-go endpoint)
    "zhipuai": ProviderErrors(
        overflow=(r"prompt exceeds max length", r"exceeds the model's maximum context length"),
        overflow_codes=("1261",),
        billing=(r"余额不足", r"无可用资源包", r"insufficient balance"),
        billing_codes=("1113",),
    ),
    # 400 "This model's maximum context length is 131072 tokens. However, you requested ..."; 402
    # "Insufficient Balance"
    "deepseek": ProviderErrors(overflow=(r"maximum context length",), billing=(r"insufficient balance",)),
    # 400 "Invalid request: Your request exceeded model token limit: 262144"; 429
    # exceeded_current_quota_error "... is suspended due to insufficient balance"
    "moonshot": ProviderErrors(
        overflow=(r"exceeded model token limit",),
        billing=(r"suspended due to insufficient balance", r"exceeded current quota"),
        billing_codes=("exceeded_current_quota_error",),
    ),
    # 400 "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]";
    # Arrearage "Access denied, please make sure your account is in good standing."
    "qwen": ProviderErrors(
        overflow=(r"range of input length should be",),
        billing=(r"account is in good standing", r"\barrearage\b"),
        billing_codes=("Arrearage",),
    ),
    # 400 "This endpoint's maximum context length is ..."; 402 "Insufficient credits"; upstream
    # reasons in error.metadata.raw (read_error takes them from there)
    "openrouter": ProviderErrors(overflow=(r"maximum context length",), billing=(r"insufficient credits",)),
    # A JSON list: [{"error": {"code": 400, "message": "The input token count (1054016) exceeds the
    # maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}]
    "gemini": ProviderErrors(overflow=(r"input token count .* exceeds the maximum number of tokens",)),
    # 400 "This model's maximum prompt length is 131072 but the request contains 136973 tokens."
    "xai": ProviderErrors(overflow=(r"maximum prompt length",)),
    # 413 rate_limit_exceeded "Request too large for model `...` ... on tokens per minute (TPM):
    # Limit 6000, Requested 12328": the plan's per-minute budget, not the context window
    "groq": ProviderErrors(
        rate_limit=(r"tokens per minute", r"\(TPM\)", r"requests per minute"),
    ),
    # 400 exceed_context_size_error "the request exceeds the available context size, try increasing
    # it" / "request (4390 tokens) exceeds the available context size (4096 tokens)"; 500 "Context
    # size has been exceeded."; older: "the request exceeds the available context size. try
    # increasing the context size or enable context shift"
    "llamacpp": ProviderErrors(
        overflow=(r"exceeds the available context size", r"context size has been exceeded",
                  r"input is larger than the max context size"),
        overflow_codes=("exceed_context_size_error",),
    ),
    # MLX engine: "Context size has been exceeded."; llama.cpp engine: "The number of tokens to keep
    # from the initial prompt is greater than the context length"; or an empty 200 answer (finish
    # reasons: the stream parser's job)
    "lmstudio": ProviderErrors(
        overflow=(r"context size has been exceeded", r"tokens to keep from the initial prompt is greater than the "
                  r"context length", r"context length of only \d+ tokens"),
    ),
    # 400 "This model's maximum context length is 32768 tokens. However, you requested ..."; newer:
    # "... is longer than the maximum model length of 32768"
    "vllm": ProviderErrors(overflow=(r"maximum context length", r"longer than the maximum model length")),
    # Anthropic's OpenAI-compatible endpoint and gateways in front of Claude: "prompt is too long"
    "anthropic": ProviderErrors(overflow=(r"prompt is too long",), billing=(r"credit balance is too low",)),
    # Mistral: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum
    # context length"
    "mistral": ProviderErrors(overflow=(r"too large for model with \d+ maximum context length",)),
}

# Preset names (agentica_cli.models.presets.PROVIDERS) whose errors are another entry's.
SAME_ERRORS_AS = {"zai": "zhipuai", "zhipuai-coding": "zhipuai", "zai-coding": "zhipuai",
                  "moonshot-intl": "moonshot", "qwen-intl": "qwen"}


def errors_for(name: str) -> ProviderErrors:
    """One provider's wordings, by preset or dialect name (GENERIC for one not listed)."""
    key = name.strip().lower()
    return PROVIDER_ERRORS.get(SAME_ERRORS_AS.get(key, key), GENERIC)


# Wordings no provider owns: generic phrases gateways and frameworks use.
GENERIC = ProviderErrors(
    overflow=(r"context[ _-]?window[ _-]?exceeded", r"model_context_window_exceeded", r"prompt is too long",
              r"too many tokens", r"input is too long", r"exceeds? (the )?(model'?s? )?context (length|window|size)",
              r"token limit exceeded"),
    billing=(r"insufficient[ _](balance|credits?|quota|funds)", r"payment required", r"quota (has been )?exhausted"),
    billing_codes=("insufficient_quota", "insufficient_balance", "payment_required"),
)


def _compile(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_ALL = [*PROVIDER_ERRORS.values(), GENERIC]
_OVERFLOW = _compile([p for e in _ALL for p in e.overflow])
_BILLING = _compile([p for e in _ALL for p in e.billing])
_RATE_LIMIT = _compile([p for e in _ALL for p in e.rate_limit])
_OVERFLOW_CODES = frozenset(c.lower() for e in _ALL for c in e.overflow_codes)
_BILLING_CODES = frozenset(c.lower() for e in _ALL for c in e.billing_codes)


@dataclass
class ErrorReport:
    """A failed request's body as one shape: `message` is the text that says why."""

    message: str = ""
    codes: list[str] = field(default_factory=list)  # error.code, error.type, error.status, in that order
    page_title: str | None = None  # the body was a web page (a proxy's): its <title>, if it had one
    web_page: bool = False


def read_error(body: Any) -> ErrorReport:
    """The reason inside a provider's error body: a dict, a list (Gemini), a JSON or HTML string."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        if text[:1] in ("{", "["):
            try:
                return read_error(json.loads(text))
            except ValueError:
                pass
        if _looks_like_html(text):
            return ErrorReport(page_title=_html_title(text), web_page=True)
        return ErrorReport(message=text)
    if isinstance(body, list):  # Gemini: a list of error objects; the first says it
        for item in body:
            report = read_error(item)
            if report.message:
                return report
        return ErrorReport()
    if not isinstance(body, dict):
        return ErrorReport()
    inner = body.get("error", body)
    if isinstance(inner, str):  # {"error": "model 'x' not found"} (Ollama)
        return ErrorReport(message=inner)
    if not isinstance(inner, dict):
        return ErrorReport()
    report = ErrorReport(message=str(inner.get("message") or inner.get("msg") or ""))
    for key in ("code", "type", "status"):
        value = inner.get(key)
        if value not in (None, "") and not isinstance(value, (dict, list)):
            report.codes.append(str(value))
    if inner is not body:  # DashScope puts its code beside "error"; nothing else does harm here
        value = body.get("code")
        if isinstance(value, str) and value:
            report.codes.append(value)
    upstream = _upstream(inner)
    if upstream is not None and (upstream.message or upstream.codes):
        # OpenRouter: "Provider returned error" says nothing; the provider's own body does.
        name = ((inner.get("metadata") or {}).get("provider_name") or "") if isinstance(
            inner.get("metadata"), dict) else ""
        message = upstream.message or report.message
        report.message = f"{name}: {message}" if name and message else message
        report.codes = upstream.codes + report.codes
    return report


def _upstream(inner: dict[str, Any]) -> ErrorReport | None:
    metadata = inner.get("metadata")
    if not isinstance(metadata, dict):
        return None
    raw = metadata.get("raw")
    if isinstance(raw, (dict, list)):
        return read_error(raw)
    if isinstance(raw, str) and raw.strip():
        report = read_error(raw)
        return report if (report.message or report.codes) else ErrorReport(message=raw.strip())
    return None


def _looks_like_html(text: str) -> bool:
    head = text[:512].lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head or "<title" in head


def _html_title(text: str) -> str | None:
    found = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    if not found:
        return None
    title = " ".join(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())
    return title[:200] or None


def failure_category(status: int | None, report: ErrorReport) -> str | None:
    """OVERFLOW, BILLING, RATE_LIMIT, or None for anything else (status decides then)."""
    codes = {c.lower() for c in report.codes}
    text = report.message
    if codes & _BILLING_CODES or (text and _BILLING.search(text)):
        return BILLING
    if status == 402:
        return BILLING
    if text and _RATE_LIMIT.search(text):  # before overflow: Groq's TPM 413 says "reduce your message size"
        # A request larger than the per-minute budget itself never fits (Groq answers 413, OpenAI
        # 429 with "Limit 30000, Requested 342389"); any other per-minute limit passes: retried.
        return RATE_LIMIT if status == 413 or _larger_than_limit(text) else None
    if codes & _OVERFLOW_CODES or (text and _OVERFLOW.search(text)):
        return OVERFLOW
    if status == 413 and "rate_limit_exceeded" not in codes:  # Payload Too Large: the request's size
        return OVERFLOW
    return None


def _larger_than_limit(text: str) -> bool:
    found = re.search(r"Limit:? ([\d,]+), Requested:? ([\d,]+)", text, re.IGNORECASE)
    if not found:
        return False
    limit, requested = (int(g.replace(",", "")) for g in found.groups())
    return requested > limit


# -- hints: what to do about an error, by where the request went -------------------------------------

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0")
LOCAL_SERVER_PORTS = "LM Studio 1234, llama.cpp 8080, Ollama 11434, vLLM 8000"


def host_of(url: str | None) -> str:
    try:
        return (urlsplit(str(url or "")).hostname or "").lower()
    except ValueError:
        return ""


def is_local(url: str | None) -> bool:
    host = host_of(url)
    return host in LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


# Platforms whose keys work only on their own host: a 401 there names the other one.
KEY_PLATFORMS: dict[str, str] = {
    "api.moonshot.cn": "a key from the international platform (platform.moonshot.ai) needs base_url "
                       "https://api.moonshot.ai/v1",
    "api.moonshot.ai": "a key from the China platform (platform.moonshot.cn) needs base_url "
                       "https://api.moonshot.cn/v1",
    "open.bigmodel.cn": "a z.ai (international) key needs base_url https://api.z.ai/api/paas/v4 (GLM Coding Plan: "
                        "https://api.z.ai/api/coding/paas/v4)",
    "api.z.ai": "a bigmodel.cn (China) key needs base_url https://open.bigmodel.cn/api/paas/v4 (GLM Coding Plan: "
                "https://open.bigmodel.cn/api/coding/paas/v4)",
    "dashscope.aliyuncs.com": "an international (Alibaba Cloud Model Studio) key needs base_url "
                              "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    "dashscope-intl.aliyuncs.com": "a China (Bailian) key needs base_url "
                                   "https://dashscope.aliyuncs.com/compatible-mode/v1",
}

CODING_PLAN_URLS = {
    "open.bigmodel.cn": "https://open.bigmodel.cn/api/coding/paas/v4",
    "api.z.ai": "https://api.z.ai/api/coding/paas/v4",
}


def auth_hint(url: str | None) -> str:
    """What to check after a 401/403: the key, and for split platforms the other base URL."""
    other = KEY_PLATFORMS.get(host_of(url))
    return f"check the API key; {other}" if other else "check the API key"


def billing_hint(url: str | None, report: ErrorReport) -> str:
    """After a billing error: top up, or (a GLM Coding Plan key on the pay-as-you-go endpoint,
    which answers the same code 1113) the coding endpoint."""
    host = host_of(url)
    coding = CODING_PLAN_URLS.get(host)
    path = urlsplit(str(url or "")).path
    if coding and "/coding/" not in path and "1113" in report.codes:
        return (f"the account has no balance or resource package left: top it up; a GLM Coding Plan key needs "
                f"base_url {coding}")
    return "the account has no credit or quota left: top it up or check the plan; retrying will not help"


def refused_hint(url: str) -> str:
    if is_local(url):
        return (f"is the server running, and listening on this port? (default ports: {LOCAL_SERVER_PORTS}; "
                "set base_url or --base-url to the one it uses)")
    return "check the base URL and your network or proxy"
