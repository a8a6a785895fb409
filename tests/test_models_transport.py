"""The model transport without the `openai` SDK (models/chat_http.py), against the SDK itself.

The default transport posts to chat completions itself (models/chat_http.py, over models/http1.py or
httpx2); `transport="openai"` posts the same
body through the SDK's AsyncOpenAI. The SDK is the oracle here: both send the same URL, key and
headers, and the agent sees the same answers and the same errors from each. The provider and
model tests (test_provider_conformance.py, test_models_*.py) run through the default transport.
A `-p` run must not import the SDK at all (the time it saves is bench/bench_startup.py's; this
test times nothing).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_support import cli_env, scripted_key_file

from agentica_cli.models import ModelError, OpenAIChat
from agentica_cli.testing import ScriptedModelServer, turns

TRANSPORTS = ("httpx", "openai")


def ask(model: OpenAIChat) -> list:
    async def go():
        return [e async for e in model.response_stream([{"role": "user", "content": "hi"}])]

    return asyncio.run(go())


def test_a_print_run_reaches_its_model_without_importing_the_openai_sdk(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ScriptedModelServer([turns.text("the answer")]) as server:
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "agentica_cli", "-p", "hi", "--base-url", server.base_url,
             "--api-key-file", scripted_key_file(), "--model", "scripted-model"],
            cwd=project, env=cli_env(tmp_path / "home"), stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=120)
        requests = len(server.request_log)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert requests == 1 and "the answer" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "agentica_cli.models.chat_http" in imported  # the request went through the lean transport
    assert "agentica_cli.models.http1" in imported  # and its direct client: no proxy is set
    stacks = ("openai", "httpx2", "httpcore2", "anyio", "h11", "email", "http")
    assert not {name for name in imported if name.split(".")[0] in stacks}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_both_transports_send_the_same_url_key_and_headers(transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-42")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-7")
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "X-Gateway: team-a\nx-trace: from-env")
    with ScriptedModelServer([turns.text("ok")]) as server:
        model = OpenAIChat(id="m", api_key="sk-test", base_url=server.base_url + "/", transport=transport,
                           default_headers={"X-Trace": "explicit"})
        events = ask(model)
    assert events[-1].content == "ok"
    request = server.request_log[0]
    assert request.path == "/v1/chat/completions"
    headers = request.headers
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["content-type"] == "application/json" and headers["accept"] == "application/json"
    assert headers["openai-organization"] == "org-42" and headers["openai-project"] == "proj-7"
    assert headers["x-gateway"] == "team-a"
    assert headers["x-trace"] == "explicit"  # the model's own headers win, whatever their case
    if transport == "httpx":
        assert headers["user-agent"].startswith("agentica/")
        assert not [name for name in headers if name.startswith("x-stainless")]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_authorization_header_of_the_model_replaces_the_environments_and_the_keys(
        transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS", "Authorization: Bearer from-env")
    with ScriptedModelServer([turns.text("ok"), turns.text("ok")]) as server:
        ask(OpenAIChat(id="m", api_key="sk-test", base_url=server.base_url, transport=transport))
        ask(OpenAIChat(id="m", api_key="sk-test", base_url=server.base_url, transport=transport,
                       default_headers={"authorization": "Bearer explicit"}))
    assert [r.headers["authorization"] for r in server.request_log] == ["Bearer from-env", "Bearer explicit"]


ERRORS = [
    turns.error(401, body={"error": {"message": "Invalid Authentication", "type": "invalid_authentication_error"}}),
    turns.error(400, body={"error": {"message": "This model's maximum context length is 128000 tokens.",
                                     "code": "context_length_exceeded"}}),
    turns.error(404, body="404 page not found"),
    turns.error(403, body={"detail": "not allowed"}),
    turns.error(422, body=[{"error": {"code": 400, "message": "Gemini's list"}}]),
]


@pytest.mark.parametrize("stream", [True, False])
def test_an_error_answer_reads_the_same_through_either_transport(stream: bool) -> None:
    messages = {}
    for transport in TRANSPORTS:
        with ScriptedModelServer(ERRORS) as server:
            model = OpenAIChat(id="m", api_key="sk-test", base_url=server.base_url, transport=transport,
                               stream=stream, max_retries=0)
            caught = []
            for _ in ERRORS:
                with pytest.raises(ModelError) as err:
                    ask(model)
                caught.append((err.value.status_code, err.value.kind, err.value.message))
        messages[transport] = caught
    assert messages["httpx"] == messages["openai"]
    assert messages["httpx"][0] == (401, "auth", "HTTP 401: Invalid Authentication (check the API key)")
    assert messages["httpx"][1][1] == "context_length"


def test_retry_after_of_a_429_is_honoured_by_the_lean_transport() -> None:
    with ScriptedModelServer([turns.error(429, retry_after=0.3), turns.text("after the wait")]) as server:
        events = ask(OpenAIChat(id="m", api_key="sk-test", base_url=server.base_url, retry_base_delay=5))
    retry = next(e for e in events if type(e).__name__ == "ModelRetry")
    assert retry.delay == pytest.approx(0.3)
    assert events[-1].content == "after the wait"


def test_a_query_in_the_base_url_stays_after_the_path() -> None:
    from agentica_cli.models.chat_http import chat_url

    assert chat_url("https://h.example/v1") == "https://h.example/v1/chat/completions"
    assert chat_url("https://h.example/v1/") == "https://h.example/v1/chat/completions"
    assert chat_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/chat/completions"
    assert (chat_url("https://r.example/openai/deployments/d?api-version=2024-10-21")
            == "https://r.example/openai/deployments/d/chat/completions?api-version=2024-10-21")


def test_without_a_base_url_the_sdks_default_and_variable_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.models.chat_http import chat_url

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert chat_url(None) == "https://api.openai.com/v1/chat/completions"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.example:4000/v1")
    assert chat_url(None) == "http://gateway.example:4000/v1/chat/completions"


def test_an_unknown_transport_is_refused_when_the_model_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="transport must be one of httpx, openai"):
        OpenAIChat(api_key="k", transport="urllib")
    monkeypatch.setenv("AGENTICA_MODEL_TRANSPORT", "openai")
    assert OpenAIChat(api_key="k").transport == "openai"


def test_the_tls_context_is_made_once_for_each_certificate_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.models.chat_http import tls_context

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = tls_context()
    assert tls_context() is first
    import certifi

    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert tls_context() is not first


def test_the_sandbox_probe_on_a_thread_gives_the_backend_the_direct_check_gives() -> None:
    code = ("from agentica_cli.sandbox import sandbox as s\n"
            "s.probe_backends(); s.probe_backends()\n"
            "print(s.best_backend(), next((n for n in s.BACKENDS if s._available(n)), None))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.returncode == 0, out.stderr
    probed, direct = out.stdout.split()
    assert probed == direct


class _Redirect(BaseHTTPRequestHandler):
    """Answers every POST with a 307 to the same path on `self.server.target` (a moved endpoint)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(307)
        self.send_header("Location", self.server.target + self.path)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_redirected_endpoint_is_followed_with_the_same_body(transport: str) -> None:
    with ScriptedModelServer([turns.text("moved here")]) as server:
        moved = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
        moved.target = server.base_url.rsplit("/v1", 1)[0]  # type: ignore[attr-defined]
        threading.Thread(target=moved.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        try:
            base = f"http://127.0.0.1:{moved.server_address[1]}/v1"
            events = ask(OpenAIChat(id="m", api_key="sk-test", base_url=base, transport=transport))
        finally:
            moved.shutdown()
            moved.server_close()
    assert events[-1].content == "moved here"
    assert server.request_log[0].body["messages"] == [{"role": "user", "content": "hi"}]
