"""When and how long to wait before retrying a failed model request."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass
class RetryPolicy:
    """Bounded exponential backoff; a server's Retry-After wins (up to `max_retry_after`)."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        if retry_after is not None:
            return min(self.max_retry_after, max(retry_after, 0.0))
        return backoff


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms`, `retry-after` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    import email.utils  # an HTTP date: rare, and the email package is ~4 ms to import

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
