"""The one HTTP layer every toolkit uses, and the errors a toolkit raises for setup problems.

What it gives a toolkit:

- `HttpClient(service=..., base_url=..., key_env=...)`: GET/POST with a timeout, a clear
  User-Agent, a response size cap, and retries with backoff on 429 and 5xx (honouring a short
  `Retry-After`). Errors come back as `ToolkitHttpError` with a sentence a model can act on
  (401/403 name the API key variable).
- `guard=AddressPolicy(...)` (from `agentica_cli.tools.web_access`, the fetch_url SSRF rules): for URLs that
  come from the model, every request and every redirect is checked, and the connection goes to
  the vetted address (no DNS rebinding). API endpoints the user configured (`base_url`) are
  trusted and not guarded, so a self-hosted or proxied endpoint on localhost works.
- `api_key(explicit, "SERPER_API_KEY", service="Serper")` and `require_module("playwright",
  extra="browser")`: the missing-key / missing-extra errors, naming the variable or the
  `pip install "agentica-cli[extra]"` line.

httpx is imported on first request, so importing a toolkit costs nothing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
import ssl
from dataclasses import dataclass, field
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    import httpx

    from agentica_cli.tools.web_access import AddressPolicy

USER_AGENT = "agentica-toolkits/0.1 (a terminal coding agent; python-httpx)"
DEFAULT_TIMEOUT_S = 20.0
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 10.0  # a longer Retry-After is not waited for: the model hears "rate limited"


class ToolkitError(RuntimeError):
    """A toolkit failed in a way the model (or the user) can read and act on."""


class MissingKeyError(ToolkitError):
    """The service needs an API key and none was given or found in the environment."""


class MissingExtraError(ToolkitError, ImportError):
    """An optional dependency is not installed; the message names the pip extra."""


class ToolkitHttpError(ToolkitError):
    """An HTTP request failed: status, timeout, connection, too large or malformed."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def require_module(module: str, *, extra: str, package: str | None = None, toolkit: str = "") -> ModuleType:
    """Import an optional dependency or say which extra installs it."""
    try:
        return import_module(module)
    except ImportError:
        who = f"{toolkit} needs" if toolkit else "this needs"
        raise MissingExtraError(
            f"{who} the '{package or module}' package: pip install \"agentica-cli[{extra}]\""
        ) from None


def module_available(module: str) -> bool:
    """Whether an optional dependency is importable, without importing it."""
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def api_key(explicit: str | None, env: str, *, service: str, required: bool = True) -> str | None:
    """The key passed in, else `$env`; `MissingKeyError` naming the variable when required."""
    key = explicit or os.environ.get(env, "").strip() or None
    if key is None and required:
        raise MissingKeyError(f"{service} needs an API key: set {env} (or pass api_key=...).")
    return key


@dataclass
class HttpResponse:
    """A finished response, body read (at most the client's max_bytes)."""

    url: str
    status: int
    headers: dict[str, str]
    content: bytes
    truncated: bool = False
    service: str = ""
    cookies: dict[str, str] = field(default_factory=dict)
    _text: str | None = field(default=None, repr=False)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def text(self) -> str:
        if self._text is None:
            charset = "utf-8"
            for param in self.headers.get("content-type", "").split(";")[1:]:
                key, _, value = param.strip().partition("=")
                if key.lower() == "charset" and value:
                    charset = value.strip('"')
            try:
                self._text = self.content.decode(charset, errors="replace")
            except LookupError:
                self._text = self.content.decode("utf-8", errors="replace")
        return self._text

    def json(self) -> Any:
        if self.truncated:
            raise ToolkitHttpError(f"{self.service} sent a response larger than the size limit; it was not read.")
        try:
            return json.loads(self.text)
        except ValueError:
            snippet = " ".join(self.text[:120].split())
            raise ToolkitHttpError(f"{self.service} sent a malformed response (not JSON): {snippet!r}") from None


@functools.lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every request: building one loads the CA bundle, which costs ~20-100 ms,
    and each request opens its own client. SSL_CERT_FILE / SSL_CERT_DIR are honoured as by httpx."""
    import certifi

    context = ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())
    if os.environ.get("SSL_CERT_DIR"):
        context.load_verify_locations(capath=os.environ["SSL_CERT_DIR"])
    return context


def _retry_delay(response_headers: dict[str, str], attempt: int, backoff: float) -> float | None:
    """Seconds to wait before the next attempt, or None when Retry-After asks for too long."""
    after = response_headers.get("retry-after", "").strip()
    if after:
        try:
            seconds = float(after)
        except ValueError:
            seconds = backoff * 2**attempt  # an HTTP date: fall back to our own schedule
        if seconds > MAX_RETRY_AFTER_S:
            return None
        return max(0.0, seconds)
    return backoff * 2**attempt * (0.75 + random.random() / 2)  # jitter: parallel calls spread out


class HttpClient:
    """HTTP for one toolkit: base URL, key header, timeout, retries, size cap, optional SSRF guard."""

    def __init__(
        self,
        *,
        service: str,
        base_url: str = "",
        headers: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
        retries: int = 2,
        backoff: float = 0.5,
        key_env: str | None = None,
        guard: AddressPolicy | None = None,
        proxy: str | None = None,
        user_agent: str = USER_AGENT,
    ):
        self.service = service
        self.base_url = base_url.rstrip("/")
        self.headers = {"User-Agent": user_agent, **(headers or {})}
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.key_env = key_env
        self.guard = guard
        self.proxy = proxy

    def url_for(self, path_or_url: str) -> str:
        if "://" in path_or_url:
            return path_or_url
        if not self.base_url:
            raise ValueError(f"{self.service}: no base_url to resolve {path_or_url!r} against")
        return self.base_url + "/" + path_or_url.lstrip("/") if path_or_url else self.base_url

    async def get(self, path_or_url: str = "", **kwargs: Any) -> HttpResponse:
        return await self.request("GET", path_or_url, **kwargs)

    async def post(self, path_or_url: str = "", **kwargs: Any) -> HttpResponse:
        return await self.request("POST", path_or_url, **kwargs)

    async def get_json(self, path_or_url: str = "", **kwargs: Any) -> Any:
        return (await self.get(path_or_url, **kwargs)).json()

    async def post_json(self, path_or_url: str = "", **kwargs: Any) -> Any:
        return (await self.post(path_or_url, **kwargs)).json()

    async def request(
        self,
        method: str,
        path_or_url: str = "",
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
        cookies: dict[str, str] | None = None,
        ok_statuses: tuple[int, ...] = (),
    ) -> HttpResponse:
        """One request with retries; raises ToolkitHttpError unless 2xx (or in ok_statuses)."""
        import httpx

        url = self.url_for(path_or_url)
        attempt = 0
        while True:
            try:
                response = await asyncio.wait_for(
                    self._once(method, url, params, json_body, headers, cookies), self.timeout
                )
            except asyncio.TimeoutError:
                raise ToolkitHttpError(f"{self.service} did not answer within {self.timeout:g} s ({_where(url)}).") \
                    from None
            except httpx.TimeoutException:
                raise ToolkitHttpError(f"{self.service} did not answer within {self.timeout:g} s ({_where(url)}).") \
                    from None
            except httpx.HTTPError as err:
                raise ToolkitHttpError(f"cannot reach {self.service} at {_where(url)}: {err}") from None
            if response.status < 300 or response.status in ok_statuses:
                return response
            if response.status in RETRY_STATUSES and attempt < self.retries:
                delay = _retry_delay(response.headers, attempt, self.backoff)
                if delay is not None:
                    attempt += 1
                    await asyncio.sleep(delay)
                    continue
            raise self._status_error(response)

    def _status_error(self, response: HttpResponse) -> ToolkitHttpError:
        status = response.status
        detail = " ".join(response.text[:200].split()) if response.content else ""
        if status in (401, 403) and self.key_env:
            message = (f"{self.service} refused the request (HTTP {status}): check the API key in {self.key_env}.")
        elif status == 429:
            message = f"{self.service} is rate limiting requests (HTTP 429); try again later."
        elif status >= 500:
            message = f"{self.service} had a server error (HTTP {status}); try again later."
        else:
            message = f"{self.service} answered HTTP {status} for {_where(response.url)}."
        if detail and status not in (401, 403):
            message += f" Details: {detail}"
        return ToolkitHttpError(message, status)

    async def _once(
        self,
        method: str,
        url: str,
        params: dict[str, Any] | None,
        json_body: Any,
        headers: dict[str, str] | None,
        cookies: dict[str, str] | None,
    ) -> HttpResponse:
        import httpx

        merged = {**self.headers, **(headers or {})}
        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        if self.guard is None:
            # A configured endpoint: proxies from the environment apply, redirects are followed.
            async with httpx.AsyncClient(timeout=self.timeout, headers=merged, follow_redirects=True,
                                         proxy=self.proxy, cookies=cookies, verify=_ssl_context()) as client:
                request = client.build_request(method, url, params=clean_params or None, json=json_body)
                response = await client.send(request, stream=True)
                return await self._read(response, str(response.url))
        # A URL from the model: vet each hop, connect to the vetted address only.
        async with httpx.AsyncClient(timeout=self.timeout, headers=merged, follow_redirects=False, trust_env=False,
                                     cookies=cookies, limits=httpx.Limits(max_keepalive_connections=0),
                                     verify=_ssl_context()) as client:
            current = url
            for _ in range(MAX_REDIRECTS + 1):
                addresses = await self.guard.vetted_addresses(current)
                response = await _send_pinned(client, method, current, addresses, clean_params, json_body)
                if response.is_redirect:
                    await response.aclose()
                    current = urljoin(current, response.headers.get("location", ""))
                    clean_params = {}  # the Location carries its own query
                    if response.status_code in (301, 302, 303):  # as browsers do: the next hop is a GET
                        method, json_body = "GET", None
                    continue
                return await self._read(response, current)
            raise ToolkitHttpError(f"too many redirects (more than {MAX_REDIRECTS}) from {_where(url)}.")

    async def _read(self, response: httpx.Response, url: str) -> HttpResponse:
        body = bytearray()
        truncated = False
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    del body[self.max_bytes:]
                    truncated = True
                    break
        finally:
            await response.aclose()
        headers = {k.lower(): v for k, v in response.headers.items()}
        return HttpResponse(url=url, status=response.status_code, headers=headers, content=bytes(body),
                            truncated=truncated, service=self.service,
                            cookies={name: value for name, value in response.cookies.items()})


async def _send_pinned(client: httpx.AsyncClient, method: str, url: str, addresses: list[str],
                       params: dict[str, Any], json_body: Any) -> httpx.Response:
    """Send to one of the vetted addresses, keeping the URL's host for the Host header and TLS SNI."""
    from agentica_cli.tools.web_access import NoAddressConnected, send_pinned

    try:
        return await send_pinned(client, method, url, addresses, params=params or None, json=json_body)
    except NoAddressConnected as err:
        raise ToolkitHttpError(err.describe(_where(url))) from None


def _where(url: str) -> str:
    """Scheme, host and path of a URL without user:password@ or the query (which may hold a key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def url_guard(allow_private: bool | list[str] | tuple[str, ...] = False) -> AddressPolicy:
    """The fetch_url SSRF policy: public addresses only, plus `allow_private` (True or networks)."""
    from agentica_cli.tools.web_access import AddressPolicy

    return AddressPolicy(allow_private)
