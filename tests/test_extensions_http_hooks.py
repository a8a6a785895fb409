"""Claude Code's "http" hooks: the event's JSON POSTed to a real HTTP server on 127.0.0.1 that
the test starts; its answer decides as a command hook's stdout would. Failures never block."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_support import model_args, run_cli
from conftest import collect, scripted_model, tool_results

from agentica_cli.agent import Decision
from agentica_cli.agent.events import Notice
from agentica_cli.app.settings.config import ConfigError, validate
from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.hook_config import HookConfigError, HookSpec, specs_from_claude_json, specs_from_toml
from agentica_cli.extensions.hooks import CommandHooks
from agentica_cli.testing import ScriptedModelServer, turns

HOLD = (0, "")  # an answer that waits until the test releases it (a hook server that hangs)


class HookServer:
    """Records each POST (path, headers, JSON body) and answers what the test scripted for its
    path: (status, body), or HOLD."""

    def __init__(self, answers: dict[str, tuple[int, str]]):
        self.answers = answers
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests.append({"path": self.path, "headers": dict(self.headers),
                                        "json": json.loads(body)})
                status, text = server.answers.get(self.path, (200, ""))
                if (status, text) == HOLD:
                    server.release.wait(30)
                    status, text = 200, ""
                data = text.encode()
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", "/moved-here")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def __enter__(self) -> HookServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def http_spec(event: str, url: str, **entry: Any) -> HookSpec:
    [spec] = specs_from_claude_json({"hooks": {event: [{"matcher": entry.pop("matcher", ""), "hooks": [
        {"type": "http", "url": url, **entry}]}]}}, "settings.json")
    return spec


def deep(server: Any, work: Path, specs: list[HookSpec], **kwargs: Any) -> DeepAgent:
    return DeepAgent(scripted_model(server), work_dir=work, hooks=[CommandHooks(specs, work)],
                     exclude_tools=("web_search", "fetch_url"), **kwargs)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_http_hook_gets_the_event_and_its_answer_denies_a_call_and_adds_context(
        scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_TOKEN", "s3cret")
    monkeypatch.setenv("UNLISTED_SECRET", "must-not-be-sent")
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "no rm -rf on build/ today"}}
    answers = {"/pre": (200, json.dumps(deny)), "/prompt": (200, "Deploy freeze until Monday.\n")}
    server = scripted(turns.tool_calls(turns.call("execute", {"command": "rm -rf build"}, id="x1"),
                                       turns.call("ls", {}, id="l1")),
                      turns.text("ok"))
    with HookServer(answers) as hooks:
        specs = [http_spec("PreToolUse", hooks.url("/pre"), matcher="Bash", timeout=10,
                           headers={"Authorization": "Bearer $HOOK_TOKEN", "X-Team": "${HOOK_TOKEN}-${UNLISTED_SECRET}",
                                    "content-type": "text/plain"},
                           allowedEnvVars=["HOOK_TOKEN"]),
                 http_spec("UserPromptSubmit", hooks.url("/prompt"))]
        asyncio.run(collect(deep(server, tmp_path, specs, approve=lambda call: Decision.allow()), "clean up"))
        seen = list(hooks.requests)
    assert [r["path"] for r in seen] == ["/prompt", "/pre"]  # the matcher left ls alone
    prompt, pre = seen
    assert prompt["json"]["hook_event_name"] == "UserPromptSubmit" and prompt["json"]["prompt"] == "clean up"
    assert pre["json"]["hook_event_name"] == "PreToolUse"
    assert (pre["json"]["tool_name"], pre["json"]["tool_input"]["command"]) == ("Bash", "rm -rf build")
    assert pre["json"]["session_id"] == prompt["json"]["session_id"]
    headers = {k.lower(): v for k, v in pre["headers"].items()}
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["x-team"] == "s3cret-"  # a variable allowedEnvVars does not list is sent as ""
    assert "must-not-be-sent" not in json.dumps(pre["headers"])
    assert server.requests[0]["messages"][-1]["content"] == "clean up\n\nDeploy freeze until Monday."
    results = tool_results(server.requests[1])
    assert "no rm -rf on build/ today" in results["x1"]
    assert "Error" not in results["l1"]


def test_http_hook_failures_are_warnings_and_never_block(scripted, tmp_path: Path) -> None:
    answers = {"/error": (500, "database down"), "/hang": HOLD, "/moved": (302, "")}
    server = scripted(turns.tool_calls(turns.call("write_file", {"file_path": "a.txt", "content": "hi"}, id="w1")),
                      turns.text("written"))
    with HookServer(answers) as hooks:
        specs = [http_spec("PreToolUse", hooks.url("/error")),
                 http_spec("PreToolUse", hooks.url("/hang"), timeout=0.5),
                 http_spec("PreToolUse", hooks.url("/moved")),
                 http_spec("PreToolUse", f"http://127.0.0.1:{closed_port()}/nobody")]
        events = asyncio.run(collect(deep(server, tmp_path, specs, approve=lambda call: Decision.allow()), "write"))
        hooks.release.set()
        paths = hooks.paths()
    warnings = "\n".join(e.message for e in events if isinstance(e, Notice) and e.kind == "warning")
    assert f"`{hooks.url('/error')}` failed: HTTP 500: database down" in warnings
    assert f"`{hooks.url('/hang')}` timed out after 0.5 s" in warnings
    assert "HTTP 302 (redirects are not followed)" in warnings
    assert "/nobody` failed: ConnectError" in warnings
    assert "/error" in paths and "/moved" in paths and "/moved-here" not in paths  # the redirect was not followed
    assert (tmp_path / "a.txt").read_text() == "hi"  # no failure blocked the call
    assert "Wrote" in tool_results(server.requests[1])["w1"] or "a.txt" in tool_results(server.requests[1])["w1"]


def test_a_projects_http_hooks_wait_for_trust(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    block = {"decision": "block", "reason": "the repository is frozen"}
    with HookServer({"/submit": (200, json.dumps(block))}) as hooks, \
            ScriptedModelServer([turns.text("answered")]) as server:
        settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "http", "url": hooks.url("/submit")}]}]}}
        (project / ".claude" / "settings.json").write_text(json.dumps(settings))
        untrusted = run_cli(["-p", "go", *model_args(server)], cwd=project, home=home)
        assert untrusted.returncode == 0, untrusted.stderr
        assert "ignoring this untrusted project's hooks" in untrusted.stderr
        assert hooks.requests == []  # nothing was sent before trust
        trusted = run_cli(["-p", "go", "--trust", *model_args(server)], cwd=project, home=home)
        assert trusted.returncode == 4, trusted.stderr  # blocked by the hook (docs/cli.md#exit-codes)
        assert "the repository is frozen" in trusted.stderr
        assert hooks.paths() == ["/submit"] and hooks.requests[0]["json"]["prompt"] == "go"
        assert len(server.requests) == 1  # only the untrusted run reached the model


def test_http_hook_entries_are_checked_in_json_and_toml() -> None:
    def entry(**fields: Any) -> dict[str, Any]:
        return {"hooks": {"Stop": [{"hooks": [{"type": "http", **fields}]}]}}

    for bad, why in [(entry(), "needs a 'url'"), (entry(url="ftp://x"), "needs a 'url'"),
                     (entry(url="http://x", headers={"A": 1}), "'headers' must be an object of strings"),
                     (entry(url="http://x", allowedEnvVars="TOKEN"), "'allowedEnvVars' must be a list")]:
        with pytest.raises(HookConfigError, match=why):
            specs_from_claude_json(bad, "settings.json")
    table = {"type": "http", "url": "https://hooks.example/stop", "headers": {"X-Key": "$K"},
             "allowed_env_vars": ["K"], "timeout": 5}
    checked = validate({"hooks": {"Stop": [table]}}, "config.toml")
    [spec] = specs_from_toml(checked["hooks"], "config.toml")
    assert (spec.kind, spec.url, spec.headers, spec.allowed_env_vars, spec.timeout) == (
        "http", "https://hooks.example/stop", {"X-Key": "$K"}, ("K",), 5.0)
    assert spec.shown == "Stop hook `https://hooks.example/stop`"
    with pytest.raises(ConfigError, match="needs a 'command'"):
        validate({"hooks": {"Stop": [{"headers": {"A": "b"}}]}}, "config.toml")
