"""Claude Code's "http" hooks: the event's JSON is POSTed to a URL, and the response body is
read as a command hook's stdout is.

    {"type": "http", "url": "http://127.0.0.1:8080/hooks/pre-tool-use", "timeout": 30,
     "headers": {"Authorization": "Bearer $MY_TOKEN"}, "allowedEnvVars": ["MY_TOKEN"]}

A header value's `$VAR` or `${VAR}` is filled from the user's environment only for the names
listed in `allowedEnvVars`; any other reference becomes an empty string (as in Claude Code), so
a hook cannot send a variable the configuration did not name. A 2xx answer: an empty body goes
on, a JSON object is the hook's JSON output (`decision`, `hookSpecificOutput`, `continue`,
`systemMessage`, ...), other text is context on SessionStart and UserPromptSubmit. A non-2xx
status (a redirect included: it is not followed), a failed connection or the timeout is a
non-blocking error shown to the user: a status code alone never blocks; to block, answer 2xx
with `{"decision": "block", "reason": ...}`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

from agentica_cli.agent.hooks import HookOutcome, outcome_from_output
from agentica_cli.child_env import command_environment
from agentica_cli.extensions.hook_config import HookSpec

MAX_BODY = 10_000  # characters of the answer read, as a command hook's output
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand_headers(headers: Mapping[str, str], allowed: tuple[str, ...] | list[str],
                   environ: Mapping[str, str]) -> dict[str, str]:
    """`headers` with `$VAR` / `${VAR}` filled from `environ` for the allowed names, "" for others."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return environ.get(name, "") if name in allowed else ""

    return {name: _REFERENCE.sub(value, text) for name, text in headers.items()}


def outcome_from_answer(spec: HookSpec, status: int, body: str) -> HookOutcome:
    if not 200 <= status < 300:
        detail = " ".join(body.split())[:200]
        moved = " (redirects are not followed)" if 300 <= status < 400 else ""
        return HookOutcome(messages=[f"{spec.shown} failed: HTTP {status}{moved}" + (f": {detail}" if detail else "")])
    return outcome_from_output(spec.event, body)


async def post(spec: HookSpec, payload: dict[str, Any]) -> HookOutcome:
    """POST `payload` to the hook's URL; what the answer decided (see the module docstring)."""
    import httpx

    expanded = expand_headers(spec.headers, spec.allowed_env_vars, command_environment())
    headers = {**{k: v for k, v in expanded.items() if k.lower() != "content-type"},
               "Content-Type": "application/json"}
    body = json.dumps(payload, ensure_ascii=False, default=str).encode()

    async def ask() -> tuple[int, str]:
        async with httpx.AsyncClient(timeout=spec.timeout, follow_redirects=False) as client, \
                client.stream("POST", spec.url, content=body, headers=headers) as response:
            received = bytearray()
            async for chunk in response.aiter_bytes():
                received += chunk
                if len(received) > MAX_BODY * 4:  # enough for MAX_BODY characters of UTF-8
                    break
            return response.status_code, received.decode("utf-8", "replace")[:MAX_BODY]

    try:
        status, text = await asyncio.wait_for(ask(), spec.timeout)  # the whole exchange, not each read
    except (asyncio.TimeoutError, httpx.TimeoutException):
        return HookOutcome(messages=[f"{spec.shown} timed out after {spec.timeout:g} s"])
    except Exception as exc:  # refused, unreachable, a TLS failure, a bad URL or header: never blocks
        return HookOutcome(messages=[f"{spec.shown} failed: {type(exc).__name__}: {exc}"])
    return outcome_from_answer(spec, status, text)
