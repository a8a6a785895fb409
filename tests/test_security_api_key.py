"""The API key given on the command line: `--api-key KEY` is visible in the process list, so it
warns once and `--api-key-file PATH` / `--api-key -` are offered; wherever the key came from,
it never lands in agentica's files, its error messages, `/status` or a command's environment."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path

import pexpect
import pytest
from cli_support import cli_env, last_user_message, run_cli, tool_results
from screen_support import spawn_agentica

from agentica_cli.models import ModelError, OpenAIChat
from agentica_cli.models.base import ModelRetry
from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.timeout(90)

KEY = "sk-house-test-7f3e9a1c5b2d"
WARNING = "agentica: warning: --api-key KEY shows the key in the process list (ps)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def files_holding(folder: Path, secret: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def server_args(server: ScriptedModelServer) -> list[str]:
    return ["--base-url", server.base_url, "--model", "scripted-model"]


def test_a_key_in_argv_warns_once_and_stays_out_of_files_and_commands(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("execute", {"command": "env"}, id="e1")), turns.text("done")]
    # an innocent-looking variable holding the key: the scrub goes by value too
    env = cli_env(home, INNOCENT_SETTING=KEY)
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "run env", "--yes", "--api-key", KEY, *server_args(server)], cwd=project, home=home,
                       env=env)
        requests, log = server.requests, server.request_log
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(WARNING) == 1
    assert "--api-key-file PATH or --api-key - (read from stdin)" in proc.stderr
    assert {record.headers["authorization"] for record in log} == {f"Bearer {KEY}"}
    env_output = tool_results(requests[1])["e1"]
    assert "PATH=" in env_output and "INNOCENT_SETTING" not in env_output and KEY not in env_output
    assert KEY not in proc.stdout + proc.stderr
    assert list((home / "sessions").glob("*.jsonl"))  # a session was saved...
    assert files_holding(home, KEY) == []  # ... without the key; nor any log


def test_key_file_and_stdin_forms_keep_the_key_off_the_command_line(home: Path, project: Path,
                                                                     tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    with ScriptedModelServer([turns.text("one"), turns.text("two")]) as server:
        from_file = run_cli(["-p", "hi", "--api-key-file", str(key_file), *server_args(server)], cwd=project,
                            home=home)
        from_stdin = run_cli(["-p", "--api-key", "-", *server_args(server)], cwd=project, home=home,
                             input=f"{KEY}\nsummarise the piped text\n")
        requests, log = server.requests, server.request_log
    assert (from_file.returncode, from_file.stdout) == (0, "one\n")
    assert (from_stdin.returncode, from_stdin.stdout) == (0, "two\n")
    assert "warning" not in from_file.stderr + from_stdin.stderr
    assert [record.headers["authorization"] for record in log] == [f"Bearer {KEY}"] * 2
    assert last_user_message(requests[1]).strip() == "summarise the piped text"  # the key's line is not the prompt
    assert files_holding(home, KEY) == []


@pytest.mark.parametrize(("args", "message"), [
    (["--api-key", "x", "--api-key-file", "f"], "agentica: use either --api-key or --api-key-file, not both\n"),
    (["--api-key-file", "missing"], "agentica: --api-key-file missing: No such file or directory\n"),
    (["--api-key-file", "empty"], "agentica: --api-key-file empty: no key there (empty)\n"),
    (["--api-key", "-"], "agentica: --api-key -: no key there (empty)\n"),
])
def test_a_key_that_cannot_be_read_is_a_usage_error(home: Path, project: Path, args: list[str], message: str) -> None:
    (project / "empty").write_text("\n")
    proc = run_cli(["-p", "hi", *args], cwd=project, home=home, input="")
    assert (proc.returncode, proc.stderr) == (2, message)


def test_a_server_that_echoes_the_key_does_not_put_it_in_the_error(scripted) -> None:
    server = scripted(turns.error(500, f"upstream rejected {KEY}"), turns.error(401, f"Incorrect API key: {KEY}"))
    model = OpenAIChat(id="scripted-model", api_key=KEY, base_url=server.base_url, retry_base_delay=0.01)

    async def run() -> tuple[list[str], str]:
        notices: list[str] = []
        try:
            async for event in model.response_stream([{"role": "user", "content": "hi"}]):
                if isinstance(event, ModelRetry):
                    notices.append(event.reason)
        except ModelError as err:
            return notices, str(err)
        finally:
            await model.aclose()
        return notices, ""

    notices, error = asyncio.run(run())
    assert notices == ["HTTP 500: upstream rejected [API key hidden]"]
    assert error == "HTTP 401: Incorrect API key: [API key hidden] (check the API key)"


@pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminal REPL test")
def test_the_repl_asks_for_the_key_without_echo_and_status_never_shows_it(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("hello there")]) as server:
        child = spawn_agentica(home, project, ["--api-key", "-", *server_args(server)])
        child.logfile_read = screen = io.StringIO()
        try:
            child.expect("API key: ")
            child.sendline(KEY)
            child.expect("❯")
            child.send("hi\r")
            child.expect("hello there")
            child.expect("❯")
            child.send("/status\r")
            child.expect("permission mode")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        log = server.request_log
    assert [record.headers["authorization"] for record in log] == [f"Bearer {KEY}"]
    seen = screen.getvalue()
    assert "sandbox:" in seen and KEY not in seen and "warning: --api-key" not in seen
    assert files_holding(home, KEY) == []


ENV_DUMP = "env > {dump}; printf '%s' \"$AGENTICA_HOOK_EVENT\" > {dump}.event"


def test_hooks_get_the_users_environment_but_not_a_key_from_a_key_file(home: Path, project: Path,
                                                                       tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    dump = tmp_path / "hook-env.txt"
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": ENV_DUMP.format(dump=dump)}]}]}
    (home / "settings.json").write_text(json.dumps({"hooks": hooks}))
    # The user's own keys are their environment: a hook (as in Claude Code) gets them
    env = cli_env(home, OPENAI_API_KEY="sk-users-own-openai", GITHUB_TOKEN="ghp-users-own")
    with ScriptedModelServer([turns.text("hi")]) as server:
        proc = run_cli(["-p", "hello", "--api-key-file", str(key_file), *server_args(server)], cwd=project,
                       home=home, env=env)
        log = server.request_log
    assert proc.returncode == 0, proc.stderr
    assert {record.headers["authorization"] for record in log} == {f"Bearer {KEY}"}  # the file's key is used
    assert (tmp_path / "hook-env.txt.event").read_text() == "UserPromptSubmit"  # the hook ran
    hook_env = dump.read_text()
    assert KEY not in hook_env
    assert "OPENAI_API_KEY=sk-users-own-openai\n" in hook_env and "GITHUB_TOKEN=ghp-users-own\n" in hook_env


def test_a_withheld_key_stays_out_of_hooks_even_when_a_library_exported_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli import child_env
    from agentica_cli.extensions.hook_config import HookSpec
    from agentica_cli.extensions.hooks import CommandHooks

    monkeypatch.setattr(child_env, "_withheld", set())
    child_env.withhold(KEY)  # what build_model does with a key from a flag, a file or the config
    monkeypatch.setenv("SOME_SDK_API_KEY", KEY)  # an SDK that exports the key it was given
    monkeypatch.setenv("SOME_SDK_AUTH", f"Bearer {KEY}")
    monkeypatch.setenv("USERS_OWN_TOKEN", "mine")
    dump = tmp_path / "env.txt"
    hooks = CommandHooks([HookSpec("SessionStart", ENV_DUMP.format(dump=dump))], tmp_path)
    asyncio.run(hooks.hook_event("SessionStart", {"source": "startup"}))
    hook_env = dump.read_text()
    assert KEY not in hook_env and "SOME_SDK_API_KEY" not in hook_env
    assert "USERS_OWN_TOKEN=mine\n" in hook_env and f"CLAUDE_PROJECT_DIR={tmp_path}\n" in hook_env
    users_path = os.environ["PATH"]
    child_env.withhold(users_path)  # a value the user's environment held at start is theirs: it stays
    assert child_env.command_environment()["PATH"] == users_path
