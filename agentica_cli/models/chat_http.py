"""POST /chat/completions without the `openai` SDK: the model client's transport.

`import openai` costs 150-400 ms on a 2-core machine even in agentica's lean form
(models/openai_import.py), before `agentica -p` can send its first request; the client only
ever sent one ready JSON body to one endpoint and read the answer itself (models/sse.py). This
module does that, with what the SDK did for us kept as it was. It sends over models/http1.py (a
small HTTP/1.1 client on asyncio: httpx2 and what it runs on cost 55-70 ms of CPU to import) where
that client can (`direct_route`: no proxy variable, an ASCII host, Linux, Python 3.11+), else
over httpx2 (the HTTP client the SDK itself runs on, and the MCP SDK's); `AGENTICA_HTTP_CLIENT=httpx2`
sends every request over httpx2. Both behave alike (tests/test_models_http1.py holds one to the other):

- the URL: the base URL (else `OPENAI_BASE_URL`, else OpenAI's) with `chat/completions`
  appended to its path; a query in the base URL (Azure's `?api-version=`) is kept after it;
- headers: `Authorization: Bearer KEY`, JSON `Accept` and `Content-Type`, `OpenAI-Organization`
  and `OpenAI-Project` from `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID`, `OPENAI_CUSTOM_HEADERS`
  (`Name: value` lines), then the model's `default_headers`, later ones winning, names compared
  without case (an explicit `Authorization` drops the variable's); the SDK's telemetry headers
  (`X-Stainless-*`) are not sent and the User-Agent names agentica;
- the body: compact JSON, UTF-8, NaN refused;
- the client: redirects followed, proxies and CA files from the environment (httpx2's
  `trust_env`), one timeout for each read or write and its own for connecting (httpx2's with
  the SDK's limits, where it sends); its
  TLS context is httpx2's default one, made once a process (`tls_context`: loading the CA
  certificates takes 20 ms and more, which `models/warmup.py` does on a thread while `-p` starts
  when the endpoint may be https). The client is built before that load: a request hook loads
  the certificates before any request to an https URL goes out (the first one, or a redirect to
  https), so a plain-http endpoint (Ollama, vLLM, a test server) never pays for them;
- errors: a status of 400 or more (any status but 2xx) raises `HttpStatusError` with the body
  read, parsed and unwrapped as the SDK does (`exc.body` is the `error` object when there is
  one, else the JSON, else the text) and the SDK's message (`Error code: N - message`); no
  answer raises `HttpConnectionError` ("Connection error.") or `HttpTimeoutError` ("Request
  timed out."), the client's error as the cause; a request that cannot be sent as given (a header
  value with a line break) is a ModelError. Those are the attributes (`status_code`, `body`,
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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from agentica_cli import __version__

if TYPE_CHECKING:
    import httpx2

    from agentica_cli.models import http1

DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the SDK's, when neither the model nor OPENAI_BASE_URL names one
USER_AGENT = f"agentica/{__version__}"
CLIENT_ENV = "AGENTICA_HTTP_CLIENT"  # "httpx2": never the direct client (http1.py)
_tls_lock = threading.Lock()
_tls_contexts: dict[tuple[str | None, str | None], ssl.SSLContext] = {}  # their CA certificates loaded
_unloaded: dict[tuple[str | None, str | None], tuple[ssl.SSLContext, Callable[[ssl.SSLContext], None]]] = {}


class HttpStatusError(Exception):
    """An answer with an error status, its body read (the SDK's APIStatusError, same attributes)."""

    def __init__(self, message: str, *, response: Any, body: object):
        super().__init__(message)
        self.message = message
        self.response = response
        self.request = response.request
        self.status_code = response.status_code
        self.body = body


class HttpConnectionError(Exception):
    """No answer: the connection failed or broke before the status came (the SDK's APIConnectionError)."""

    def __init__(self, request: Any, message: str = "Connection error."):
        super().__init__(message)
        self.message = message
        self.request = request


class HttpTimeoutError(HttpConnectionError):
    """A connect, write or read timeout before the status came (the SDK's APITimeoutError)."""

    def __init__(self, request: Any):
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
                made = _unloaded_context(key)  # httpx2's context without importing it, where that can be made
                if made is None:
                    import httpx2

                    context = httpx2.create_ssl_context(verify=True, trust_env=True)
                else:
                    context, load = made
                    load(context)
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
    (a slash added when the path has none at its end), its query kept after the new path. Written
    as httpx2 writes a URL (scheme and host in lower case, a default port left out) where the URL
    is plain; else httpx2 itself writes it (a non-ASCII host, user info, a bad port)."""
    raw = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    plain = _plain_url(raw)
    if plain is None:
        import httpx2

        url = httpx2.URL(raw)
        raw_path, separator, raw_query = url.raw_path.partition(b"?")
        if not raw_path.endswith(b"/"):
            raw_path += b"/"
        return str(url.copy_with(raw_path=raw_path + b"chat/completions" + separator + raw_query))
    scheme, host, port, path, query = plain
    if not path.endswith("/"):
        path += "/"
    return urlunsplit((scheme, host + (f":{port}" if port is not None else ""), path + "chat/completions", query, ""))


_PLAIN_PATH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/%")
_PLAIN_QUERY = _PLAIN_PATH | {"?"}


def _plain_url(raw: str) -> tuple[str, str, int | None, str, str] | None:
    """(scheme, host as written in a URL, port or None for the scheme's default, path, query) of
    an http(s) URL that httpx2 would write back unchanged but for case and a default port; None
    for any other (httpx2 then normalises it: percent-encoding, IDNA, dot segments)."""
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in ("http", "https") or not host or parts.username is not None or parts.password is not None:
        return None
    if not all(c in _PLAIN_PATH for c in parts.path) or not all(c in _PLAIN_QUERY for c in parts.query):
        return None
    if "/./" in parts.path + "/" or "/../" in parts.path + "/" or "%" in parts.path + parts.query:
        return None
    if ":" in host:  # an IPv6 literal: httpx2 writes it in its own normal form
        return None
    if not all(c.isascii() and (c.isalnum() or c in "-.") for c in host):
        return None
    default = 80 if scheme == "http" else 443
    return scheme, host, None if port in (None, default) else port, parts.path, parts.query


# What sending over httpx2 imports up to its first answer (its connection pool, anyio's streams
# under it): the batch's zygote preloads these where its sessions will send over httpx2.
HTTPX2_MODULES = ("httpx2", "httpcore2", "httpcore2._backends.anyio", "httpcore2._backends.auto", "h11",
                  "truststore", "anyio._core._sockets", "anyio._core._streams", "anyio._backends._asyncio")
UNKNOWN_BASE_URL = "?"  # transport_modules' base_url when it is not known yet (a config file may name it)


def transport_modules(base_url: str | None) -> tuple[str, ...]:
    """The modules a first request to `base_url` (None: the default endpoint; UNKNOWN_BASE_URL:
    not known, the environment's then) imports: the direct client's, or httpx2's stack."""
    url = chat_url(None if base_url == UNKNOWN_BASE_URL else base_url)
    return ("agentica_cli.models.http1",) if direct_route(url) else HTTPX2_MODULES


def direct_route(url: str) -> bool:
    """Whether http1.py's client sends to `url` (else httpx2): where httpx2 would connect to its
    host directly, by the proxy variables as httpx2 reads them (`environment_proxies`), and not on
    macOS or Windows (whose proxies also come from system settings), nor before Python 3.11, nor
    for a URL chat_url left to httpx2 to write; `AGENTICA_HTTP_CLIENT=httpx2` turns it off."""
    if os.environ.get(CLIENT_ENV, "").strip().lower() == "httpx2":
        return False
    if sys.version_info < (3, 11) or sys.platform in ("darwin", "win32"):
        return False
    plain = _plain_url(url)
    if plain is None:
        return False
    scheme, host = plain[0], plain[1]
    proxies = environment_proxies()
    if not (proxies.get(scheme) or proxies.get("all")):
        return True
    return _bypassed(host.lower(), proxies.get("no", ""))


def environment_proxies() -> dict[str, str]:
    """The `*_proxy` variables as urllib's getproxies_environment reads them for httpx2 on Linux
    (scheme -> value; "no" for no_proxy): any case, a lower-case name winning over its upper-case
    twin (and an empty one removing it), HTTP_PROXY ignored under CGI (REQUEST_METHOD set)."""
    proxies: dict[str, str] = {}
    for name, value in os.environ.items():
        lowered = name.lower()
        if value and lowered.endswith("_proxy"):
            proxies[lowered[:-6]] = value
    if "REQUEST_METHOD" in os.environ:
        proxies.pop("http", None)
    for name, value in os.environ.items():
        if name.endswith("_proxy"):
            key = name.lower()[:-6]
            if value:
                proxies[key] = value
            else:
                proxies.pop(key, None)
    return proxies


def _bypassed(host: str, no_proxy: str) -> bool:
    """Whether an entry of NO_PROXY certainly sends `host` past the proxy in httpx2 (whose NO_PROXY
    patterns, having a host, outrank the proxies' host-less ones): `*`, the host itself (a name,
    `localhost` or an IPv4 address), a domain it is in (`example.com`: it and its subdomains;
    `.example.com` or `*.example.com`: its subdomains). Other kinds of entry (networks, ports,
    IPv6, URLs) are not read here: the request goes through httpx2, which reads them."""
    for entry in (part.strip().lower() for part in no_proxy.split(",")):
        if entry == "*":
            return True
        if not entry or any(c in entry for c in "/:[]@%") or not entry.isascii():
            continue
        if entry.startswith(("*.", ".")):
            domain = entry.lstrip("*")
            if host.endswith(domain) and len(host) > len(domain):
                return True
        elif not entry.startswith("*") and (host == entry or (
                not _is_ipv4(entry) and entry != "localhost" and host.endswith("." + entry))):
            return True
    return False


def _is_ipv4(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(part.isdigit() and int(part) < 256 and str(int(part)) == part for part in parts)


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


def status_error(response: Any) -> HttpStatusError:
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
    import httpx2

    anyio = sys.modules.get("anyio")  # imported by httpx2's transport before it can raise
    return (httpx2.RequestError, ssl.SSLError, *((anyio.EndOfStream,) if anyio is not None else ()))


def _httpx2_client(timeout: float, connect_timeout: float, certificates: CertificateSetting) -> httpx2.AsyncClient:
    import httpx2

    # The SDK's connection limits (openai/_constants.py): more than any session opens.
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    return httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, connect=min(connect_timeout, timeout)),
                              limits=limits, follow_redirects=True, verify=_deferred(certificates),
                              event_hooks={"request": [_LoadBeforeHttps(certificates)]})


class ChatEndpoint:
    """One provider's chat completions endpoint for one event loop (the connections of either
    client are bound to the loop that opened them)."""

    def __init__(self, *, api_key: str, base_url: str | None, timeout: float, connect_timeout: float,
                 default_headers: Mapping[str, str] | None = None):
        self.api_key = api_key  # read by the error classifier, which cuts the key out of messages
        self.url = chat_url(base_url)
        self.headers = request_headers(api_key, default_headers)
        # The certificate setting of the moment the client is built, its certificates loaded
        # before the first connection (or request, httpx2's hook) that needs them.
        certificates = _certificate_setting()
        self._direct: http1.Client | None = None
        self._http: httpx2.AsyncClient | None = None
        if direct_route(self.url):
            from agentica_cli.models import http1

            self._direct = http1.Client(timeout=timeout, connect_timeout=min(connect_timeout, timeout),
                                        tls=_deferred(certificates), before_tls=lambda: _loaded(certificates),
                                        may_connect=direct_route)
        else:
            self._http = _httpx2_client(timeout, connect_timeout, certificates)
        self._client_settings = (timeout, connect_timeout, certificates)

    @property
    def client_name(self) -> str:
        """Which HTTP client sends: "http1" (models/http1.py) or "httpx2"."""
        return "http1" if self._direct is not None else "httpx2"

    async def _send(self, params: dict[str, Any], *, stream: bool) -> Any:
        body = json.dumps(params, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        if self._direct is not None:
            from agentica_cli.models import http1

            try:
                return await self._send_direct(self._direct, body, stream)
            except http1.NotDirect:  # redirected where a proxy applies: httpx2 sends, from now on
                direct, self._direct = self._direct, None
                await direct.aclose()
                self._http = _httpx2_client(*self._client_settings)
        assert self._http is not None
        import httpx2

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

    async def _send_direct(self, client: http1.Client, body: bytes, stream: bool) -> http1.Response:
        from agentica_cli.models import http1
        from agentica_cli.models.base import ModelError

        try:
            response = await client.send("POST", self.url, self.headers, body, stream=stream)
        except http1.NotDirect:
            raise
        except http1.LocalProtocolError as err:  # another attempt would send the same
            raise ModelError(f"the request to {err.request.url} cannot be sent: {err}") from err
        except http1.TimeoutException as err:
            raise HttpTimeoutError(err.request) from err
        except http1.TransportError as err:
            raise HttpConnectionError(err.request) from err
        if not response.is_success:
            try:
                await response.aread()
            except http1.TransportError as err:  # the error's body broke off: no answer worth reading
                raise HttpConnectionError(err.request) from err
            finally:
                await response.aclose()
            raise status_error(response)
        return response

    async def complete(self, params: dict[str, Any]) -> Any:
        """A whole answer: the parsed JSON, or the text when the server says it is not JSON
        (what the SDK returns for `cast_to=object`)."""
        response = await self._send(params, stream=False)
        if not response.headers.get("content-type", "*").split(";")[0].endswith("json"):
            return response.text
        return json.loads(response.content)

    async def open_stream(self, params: dict[str, Any]) -> Any:
        """A streamed answer: the response with its status checked and its body unread."""
        return await self._send(params, stream=True)

    async def aclose(self) -> None:
        if self._direct is not None:
            await self._direct.aclose()
        if self._http is not None:
            await self._http.aclose()
