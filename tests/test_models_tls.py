"""The model client's TLS context: loaded only when a request reaches an https URL, and then
verifying exactly as httpx2's own (models/chat_http.py `_deferred`, `_LoadBeforeHttps`;
models/warmup.py). The https server is real (127.0.0.1, a self-signed certificate made here)."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx2
import pytest
from first_request_probe import noted_at_first_request

from agentica_cli.models import chat_http, warmup
from agentica_cli.models.chat_http import ChatEndpoint, HttpConnectionError
from agentica_cli.testing import ScriptedModelServer, turns

ANSWER = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
          "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}


@pytest.fixture(autouse=True)
def fresh_contexts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no context made, with no certificate variable of the caller's."""
    monkeypatch.setattr(chat_http, "_tls_contexts", {})
    monkeypatch.setattr(chat_http, "_unloaded", {}, raising=False)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(certificate, key) in PEM: self-signed, for 127.0.0.1."""
    crypto = pytest.importorskip("cryptography", reason="the cryptography package makes the test certificate")
    del crypto
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentica test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class _Answer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serve(server: ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def https_server(certificate: tuple[Path, Path]) -> Iterator[str]:
    """The base URL of a chat completions endpoint over TLS with the self-signed certificate."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    for address in _serve(server):
        yield f"https://{address}/v1"


@pytest.fixture
def redirect_to(https_server: str) -> Iterator[str]:
    """A plain-http base URL whose every POST is redirected (307, method kept) to the https one."""
    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(307)
            self.send_header("Location", https_server + "/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    for address in _serve(ThreadingHTTPServer(("127.0.0.1", 0), Redirect)):
        yield f"http://{address}/v1"


def _ask(base_url: str) -> object:
    async def run() -> object:
        endpoint = ChatEndpoint(api_key="k", base_url=base_url, timeout=10, connect_timeout=10)
        try:
            return await endpoint.complete({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        finally:
            await endpoint.aclose()

    return asyncio.run(run())


def test_a_plain_http_endpoint_never_loads_the_ca_certificates() -> None:
    base = None
    with ScriptedModelServer([turns.text("ok")]) as server:
        base = server.base_url
        assert not warmup.may_use_tls(base)
        warmup._warm(base)  # what `agentica -p --base-url http://...` starts with
        assert chat_http._tls_contexts == {}
        answer = _ask(base)
        assert server.request_log, "the request reached the server"
    assert isinstance(answer, dict)
    assert chat_http._tls_contexts == {}  # nothing made the context whole: no CA file was read


# `agentica -p` itself, in a subprocess: at its first request (the warm-up thread let finish first,
# so what it would load is counted) the certificate settings whose CA files were read.
LOADED = """
    def noted():
        import threading
        for thread in threading.enumerate():
            if thread.name == "agentica-warm-transport":
                thread.join(30)
        from agentica_cli.models import chat_http
        return {"loaded": [list(key) for key in chat_http._tls_contexts]}
"""


def test_print_mode_against_an_http_server_reads_no_ca_file_before_its_first_request(tmp_path: Path) -> None:
    noted = noted_at_first_request(tmp_path, LOADED, "hi", drop_env=("SSL_CERT_", "http_proxy", "https_proxy",
                                                                      "all_proxy"))
    assert noted == {"loaded": []}


def test_print_mode_with_an_http_base_url_from_the_config_reads_no_ca_file(tmp_path: Path) -> None:
    """The command line names no endpoint: the warm-up waits for the settings, whose config file
    says it is plain http (it used to load the certificates at once, for a maybe-https one)."""
    noted = noted_at_first_request(tmp_path, LOADED, "hi", base_url_in_config=True,
                                   drop_env=("SSL_CERT_", "http_proxy", "https_proxy", "all_proxy"))
    assert noted == {"loaded": []}


def test_the_warm_up_still_loads_them_when_the_endpoint_may_be_https() -> None:
    assert warmup.may_use_tls(None) and warmup.may_use_tls("https://api.example/v1")
    warmup._warm("https://api.example/v1")
    assert list(chat_http._tls_contexts) == [(None, None)]


def test_an_https_endpoint_with_an_unknown_certificate_is_refused(https_server: str) -> None:
    with pytest.raises(HttpConnectionError) as caught:
        _ask(https_server)
    assert "CERTIFICATE_VERIFY_FAILED" in repr(caught.value.__cause__)


def test_an_https_endpoint_is_trusted_when_ssl_cert_file_names_its_certificate(
        https_server: str, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    assert _ask(https_server) == ANSWER
    assert (str(certificate[0]), None) in chat_http._tls_contexts


def test_a_redirect_from_http_to_https_verifies_the_certificate(
        redirect_to: str, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HttpConnectionError) as caught:
        _ask(redirect_to)
    assert "CERTIFICATE_VERIFY_FAILED" in repr(caught.value.__cause__)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    assert _ask(redirect_to) == ANSWER


def _settings(context: ssl.SSLContext) -> dict[str, object]:
    return {"type": type(context), "protocol": context.protocol, "verify_mode": context.verify_mode,
            "check_hostname": context.check_hostname, "options": context.options,
            "verify_flags": context.verify_flags, "minimum_version": context.minimum_version,
            "maximum_version": context.maximum_version, "keylog_filename": context.keylog_filename,
            "post_handshake_auth": context.post_handshake_auth, "stats": context.cert_store_stats(),
            "ca_certs": context.get_ca_certs(binary_form=True),
            "hostname_checks_common_name": context.hostname_checks_common_name}


@pytest.mark.parametrize("setting", ["default", "file", "dir"])
def test_the_deferred_context_once_loaded_is_httpx2s_own(
        setting: str, certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if setting == "file":
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / "keys.log"))
    elif setting == "dir":
        monkeypatch.setenv("SSL_CERT_DIR", str(certificate[0].parent))
    key = chat_http._certificate_setting()
    deferred = chat_http._deferred(key)
    if sys.platform == "linux":
        assert key in chat_http._unloaded and key not in chat_http._tls_contexts  # its CA load is still to come
    assert chat_http._loaded(key) is deferred  # loaded in place: the client's own object
    assert _settings(deferred) == _settings(httpx2.create_ssl_context(verify=True, trust_env=True))


def test_a_certificate_file_that_cannot_be_read_fails_the_https_request_and_is_tried_again(
        https_server: str, certificate: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "later.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))

    async def run() -> tuple[BaseException | None, object]:
        endpoint = ChatEndpoint(api_key="k", base_url=https_server, timeout=10, connect_timeout=10)
        params = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        try:
            try:
                await endpoint.complete(params)
            except Exception as err:  # as before, when the client was built: the file's own error
                failed: BaseException | None = err
            else:
                failed = None
            missing.write_bytes(certificate[0].read_bytes())
            return failed, await endpoint.complete(params)  # the same client, its context loaded now
        finally:
            await endpoint.aclose()

    failed, answer = asyncio.run(run())
    assert isinstance(failed, OSError)
    assert answer == ANSWER


class _ConnectProxy(BaseHTTPRequestHandler):
    """An HTTP proxy that tunnels (CONNECT) and notes each tunnel's target."""

    tunnels: ClassVar[list[str]] = []

    def do_CONNECT(self) -> None:
        import select
        import socket

        host, _, port = self.path.rpartition(":")
        upstream = socket.create_connection((host, int(port)), timeout=10)
        type(self).tunnels.append(self.path)
        self.send_response(200, "Connection established")
        self.end_headers()
        ends = [self.connection, upstream]
        try:
            while True:
                readable, _, _ = select.select(ends, [], [], 10)
                if not readable:
                    return
                for end in readable:
                    data = end.recv(65536)
                    if not data:
                        return
                    (upstream if end is self.connection else self.connection).sendall(data)
        finally:
            upstream.close()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "ALL_PROXY"])
def test_an_https_endpoint_through_a_proxy_from_the_environment_verifies_the_certificate(
        variable: str, https_server: str, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    _ConnectProxy.tunnels = []
    for address in _serve(ThreadingHTTPServer(("127.0.0.1", 0), _ConnectProxy)):
        monkeypatch.setenv(variable, f"http://{address}")
        with pytest.raises(HttpConnectionError) as caught:
            _ask(https_server)
        assert "CERTIFICATE_VERIFY_FAILED" in repr(caught.value.__cause__)
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        assert _ask(https_server) == ANSWER
    assert len(_ConnectProxy.tunnels) == 2  # both went through the proxy
