"""POST /chat/completions over httpx2, without the `openai` SDK: the model client's transport.

`import openai` costs 150-400 ms on a 2-core machine even in agentica's lean form
(models/openai_import.py), before `agentica -p` can send its first request; the client only
ever sent one ready JSON body to one endpoint and read the answer itself (models/sse.py). This
module does that over httpx2 (the HTTP client the SDK itself runs on, and the MCP SDK's), with
what the SDK did for us kept as it was:

- the URL: the base URL (else `OPENAI_BASE_URL`, else OpenAI's) with `chat/completions`
  appended to its path; a query in the base URL (Azure's `?api-version=`) is kept after it;
- headers: `Authorization: Bearer KEY`, JSON `Accept` and `Content-Type`, `OpenAI-Organization`
  and `OpenAI-Project` from `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID`, `OPENAI_CUSTOM_HEADERS`
  (`Name: value` lines), then the model's `default_headers`, later ones winning, names compared
  without case (an explicit `Authorization` drops the variable's); the SDK's telemetry headers
  (`X-Stainless-*`) are not sent and the User-Agent names agentica;
- the body: compact JSON, UTF-8, NaN refused;
- the client: httpx2's, with the SDK's limits, redirects followed, proxies and CA files from the
  environment (`trust_env`), one timeout for each read or write and its own for connecting; its
  TLS context is httpx2's default one, made once a process (`tls_context`: loading the CA
  certificates takes 20 ms and more, which `models/warmup.py` does on a thread while `-p` starts
  when the endpoint may be https). The client is built before that load: a request hook loads
  the certificates before any request to an https URL goes out (the first one, or a redirect to
  https), so a plain-http endpoint (Ollama, vLLM, a test server) never pays for them;
- errors: a status of 400 or more (any status but 2xx) raises `HttpStatusError` with the body
  read, parsed and unwrapped as the SDK does (`exc.body` is the `error` object when there is
  one, else the JSON, else the text) and the SDK's message (`Error code: N - message`); no
  answer raises `HttpConnectionError` ("Connection error.") or `HttpTimeoutError` ("Request
  timed out."), the httpx2 error as the cause. Those are the attributes (`status_code`, `body`,
  `response`, `request`, `message`) models/openai_chat.py reads off the SDK's exceptions, so
  both classify alike. No retries here: the model client's own.

`OpenAIChat(transport="openai")` (or `AGENTICA_MODEL_TRANSPORT=openai`) sends through the SDK
instead (models/openai_chat.py `SdkChatEndpoint`).
"""

from __future__ import annotations

import json
import os
import platform
import ssl
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

import httpx2

from agentica_cli import __version__

DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the SDK's, when neither the model nor OPENAI_BASE_URL names one
USER_AGENT = f"agentica/{__version__}"
# The SDK's connection limits (openai/_constants.py): more than any session opens.
LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
_tls_lock = threading.Lock()
_tls_contexts: dict[tuple[str | None, str | None], ssl.SSLContext] = {}  # their CA certificates loaded
_unloaded: dict[tuple[str | None, str | None], tuple[ssl.SSLContext, Callable[[ssl.SSLContext], None]]] = {}


class HttpStatusError(Exception):
    """An answer with an error status, its body read (the SDK's APIStatusError, same attributes)."""

    def __init__(self, message: str, *, response: httpx2.Response, body: object):
        super().__init__(message)
        self.message = message
        self.response = response
        self.request = response.request
        self.status_code = response.status_code
        self.body = body


class HttpConnectionError(Exception):
    """No answer: the connection failed or broke before the status came (the SDK's APIConnectionError)."""

    def __init__(self, request: httpx2.Request, message: str = "Connection error."):
        super().__init__(message)
        self.message = message
        self.request = request


class HttpTimeoutError(HttpConnectionError):
    """A connect, write or read timeout before the status came (the SDK's APITimeoutError)."""

    def __init__(self, request: httpx2.Request):
        super().__init__(request, "Request timed out.")


CertificateSetting = tuple[str | None, str | None]  # (SSL_CERT_FILE, SSL_CERT_DIR), empty as None
Loader = Callable[[ssl.SSLContext], None]


def _certificate_setting() -> CertificateSetting:
    return (os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)


def tls_context() -> ssl.SSLContext:
    """The TLS context httpx2 makes for `verify=True` (SSL_CERT_FILE, else SSL_CERT_DIR, else the
    system's CA certificates), made once a process for each value of those variables, its CA
    certificates loaded; a second caller waits for the first one's instead of loading them again."""
    return _loaded(_certificate_setting())


def _loaded(key: CertificateSetting) -> ssl.SSLContext:
    with _tls_lock:
        context = _tls_contexts.get(key)
        if context is None:
            pending = _unloaded.get(key)
            if pending is None:
                context = httpx2.create_ssl_context(verify=True, trust_env=True)
            else:  # into the object clients already hold; kept pending if the load fails (it raises)
                context, load = pending
                load(context)
                del _unloaded[key]
            _tls_contexts[key] = context
    return context


def unloaded_tls_context() -> ssl.SSLContext:
    """The context a client made now holds (`_deferred` for the current certificate setting):
    made ahead by the batch's zygote, whose children then inherit it instead of each making it."""
    return _deferred(_certificate_setting())


def _deferred(key: CertificateSetting) -> ssl.SSLContext:
    """The context `_loaded(key)` returns, without its CA certificates when they are not loaded
    yet (they are loaded into this same object later); made whole now where that cannot be."""
    with _tls_lock:
        context = _tls_contexts.get(key)
        if context is not None:
            return context
        pending = _unloaded.get(key)
        if pending is None:
            made = _unloaded_context(key)
            if made is not None:
                pending = _unloaded[key] = made
        if pending is not None:
            return pending[0]
    return _loaded(key)


def _unloaded_context(key: CertificateSetting) -> tuple[ssl.SSLContext, Loader] | None:
    """httpcore2's `default_ssl_context()` (what httpx2 makes for `verify=True`) split in two: the
    context, configured as it configures it, and the load of its CA certificates. None where it is
    another kind of context (truststore's on macOS and Windows) or its files are not found the
    plain way: those are made whole. tests/test_models_tls.py compares the two halves, loaded,
    with httpx2's own context, so a change in httpcore2 or Python shows there."""
    cafile, capath = key
    if cafile or capath:  # ssl.create_default_context(cafile=...) or (capath=...), the CA load left out
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.verify_mode = ssl.CERT_REQUIRED
        context.check_hostname = True
        if sys.version_info >= (3, 13):
            context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
        keylog = os.environ.get("SSLKEYLOGFILE")
        if keylog and not sys.flags.ignore_environment:
            context.keylog_filename = keylog
        if cafile:
            return context, lambda ctx: ctx.load_verify_locations(cafile=cafile)
        return context, lambda ctx: ctx.load_verify_locations(capath=capath)
    if platform.system() in ("Windows", "Darwin"):
        return None
    paths = ssl.get_default_verify_paths()
    found_file = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    if not found_file:  # httpcore2 then looks at a directory's names and a list of known files: not here
        return None
    found_dir = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), lambda ctx: ctx.load_verify_locations(found_file, found_dir)


class _LoadBeforeHttps:
    """A client's request hook: the CA certificates of its TLS context loaded before any request
    to a URL that is not plain http goes out (every hop of a redirect passes here). Until then the
    context trusts nothing, so a handshake that came first anyway would fail, never pass."""

    def __init__(self, key: CertificateSetting):
        self.key = key

    async def __call__(self, request: httpx2.Request) -> None:
        if request.url.scheme != "http":
            _loaded(self.key)


def chat_url(base_url: str | None) -> str:
    """Where the request goes: `chat/completions` after the base URL's path, as the SDK joins it
    (a slash added when the path has none at its end), its query kept after the new path."""
    url = httpx2.URL(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    path, separator, query = url.raw_path.partition(b"?")
    if not path.endswith(b"/"):
        path += b"/"
    return str(url.copy_with(raw_path=path + b"chat/completions" + separator + query))


def _env_headers() -> dict[str, str]:
    """`OPENAI_CUSTOM_HEADERS`: one `Name: value` a line, as the SDK reads it."""
    parsed: dict[str, str] = {}
    for line in os.environ.get("OPENAI_CUSTOM_HEADERS", "").split("\n"):
        name, colon, value = line.partition(":")
        if colon:
            parsed[name.strip()] = value.strip()
    return parsed


def _merge(*mappings: Mapping[str, str]) -> dict[str, str]:
    """Headers merged without regard to case, later mappings winning (the SDK's `_merge_headers`)."""
    merged: dict[str, tuple[str, str]] = {}
    for mapping in mappings:
        for name, value in mapping.items():
            merged[name.lower()] = (name, value)
    return dict(merged.values())


def request_headers(api_key: str, default_headers: Mapping[str, str] | None) -> dict[str, str]:
    explicit = dict(default_headers or {})
    from_env = _env_headers()
    if any(name.lower() == "authorization" for name in explicit):
        from_env = {name: value for name, value in from_env.items() if name.lower() != "authorization"}
    ids = {name: os.environ[var] for name, var in (("OpenAI-Organization", "OPENAI_ORG_ID"),
                                                   ("OpenAI-Project", "OPENAI_PROJECT_ID")) if var in os.environ}
    auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return _merge(auth, {"Accept": "application/json", "Content-Type": "application/json", "User-Agent": USER_AGENT},
                  ids, from_env, explicit)


def status_error(response: httpx2.Response) -> HttpStatusError:
    """The error for a status that is not 2xx, from its read body, worded as the SDK words it."""
    message = f"Error code: {response.status_code}"
    text = response.text.strip()
    body: object = text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        detail = error.get("message") if isinstance(error, dict) else None
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
    if isinstance(body, dict):
        body = body.get("error", body)
    return HttpStatusError(message, response=response, body=body)


def _request_failures() -> tuple[type[BaseException], ...]:
    """What means "no answer" besides httpx2's own errors: a TLS failure anyio does not map,
    and anyio's end of stream (the SDK's list, openai/_httpx2.py)."""
    anyio = sys.modules.get("anyio")  # imported by httpx2's transport before it can raise
    return (httpx2.RequestError, ssl.SSLError, *((anyio.EndOfStream,) if anyio is not None else ()))


class ChatEndpoint:
    """One provider's chat completions endpoint for one event loop (httpx2's connections are
    bound to the loop that opened them)."""

    def __init__(self, *, api_key: str, base_url: str | None, timeout: float, connect_timeout: float,
                 default_headers: Mapping[str, str] | None = None):
        self.api_key = api_key  # read by the error classifier, which cuts the key out of messages
        self.url = chat_url(base_url)
        self.headers = request_headers(api_key, default_headers)
        # The certificate setting of the moment the client is built, its certificates loaded
        # by the hook before the first request that needs them.
        certificates = _certificate_setting()
        self._http = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, connect=min(connect_timeout, timeout)),
                                        limits=LIMITS, follow_redirects=True, verify=_deferred(certificates),
                                        event_hooks={"request": [_LoadBeforeHttps(certificates)]})

    async def _send(self, params: dict[str, Any], *, stream: bool) -> httpx2.Response:
        body = json.dumps(params, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        request = self._http.build_request("POST", self.url, content=body, headers=self.headers)
        try:
            response = await self._http.send(request, stream=stream)
        except httpx2.TimeoutException as err:
            raise HttpTimeoutError(request) from err
        except _request_failures() as err:
            raise HttpConnectionError(request) from err
        if not response.is_success:
            try:
                await response.aread()
            except _request_failures() as err:  # the error's body broke off: no answer worth reading
                await response.aclose()
                raise HttpConnectionError(request) from err
            raise status_error(response)
        return response

    async def complete(self, params: dict[str, Any]) -> Any:
        """A whole answer: the parsed JSON, or the text when the server says it is not JSON
        (what the SDK returns for `cast_to=object`)."""
        response = await self._send(params, stream=False)
        if not response.headers.get("content-type", "*").split(";")[0].endswith("json"):
            return response.text
        return json.loads(response.content)

    async def open_stream(self, params: dict[str, Any]) -> httpx2.Response:
        """A streamed answer: the response with its status checked and its body unread."""
        return await self._send(params, stream=True)

    async def aclose(self) -> None:
        await self._http.aclose()
