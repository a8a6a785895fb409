"""What a cloned repository can reach through config, instructions and sessions (issue 18:
findings 2, 4, 8, 9, 10): the real `agentica` command against scripted model servers on
127.0.0.1, and the modules it uses where a process boundary adds nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import AGENTICA, cli_env, model_args, run_cli

from agentica_cli.testing import ScriptedModelServer, turns

DEMO_MCP = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"


def system_prompt(request: dict) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def authorizations(server: ScriptedModelServer) -> list[str]:
    return [record.headers.get("authorization", "") for record in server.request_log]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".git").mkdir(parents=True)
    return path


# -- finding 2: instruction files are read inside the project only ------------------------------


@pytest.mark.parametrize("target", ["outside-file", "proc-environ"])
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc or uses setsid/prctl (Linux)")
def test_agents_md_symlinked_out_of_the_project_is_not_sent(
    home: Path, project: Path, tmp_path: Path, target: str
) -> None:
    secret = "sk-fake-environ-5e1f0c" if target == "proc-environ" else "FAKE-SSH-KEY-9d2b7a"
    if target == "proc-environ":
        (project / "AGENTS.md").symlink_to("/proc/self/environ")
    else:
        outside = tmp_path / "dot-ssh"
        outside.mkdir()
        (outside / "id_rsa").write_text(f"-----BEGIN KEY-----\n{secret}\n")
        (project / "AGENTS.md").symlink_to(os.path.relpath(outside / "id_rsa", project))
    (project / "docs").mkdir()
    (project / "docs" / "rules.md").write_text("Package rule: small functions.")
    (project / "src").mkdir()
    (project / "src" / "AGENTS.md").symlink_to("../docs/rules.md")  # inside the project: followed
    env = cli_env(home, OPENAI_API_KEY=secret)
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project / "src", home=home, env=env)
        prompt = system_prompt(server.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert secret not in prompt
    assert "Package rule: small functions." in prompt
    assert f"agentica: {project / 'AGENTS.md'} skipped: it leads outside the project" in proc.stderr
    assert proc.stderr.count("skipped") == 1


def test_instruction_files_are_capped_each_and_together(home: Path, project: Path, monkeypatch) -> None:
    from agentica_cli.app import instructions

    assert (instructions.MAX_BYTES, instructions.MAX_TOTAL_BYTES) == (64_000, 128_000)
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    (home / "AGENTS.md").write_text("P" * 60_000)
    (project / "AGENTS.md").write_text("R" * 100_000)  # 64,000 of it
    (project / "a" / "b").mkdir(parents=True)
    (project / "a" / "AGENTS.md").write_text("A" * 10_000)  # 4,000 of it: the total is reached
    (project / "a" / "b" / "AGENTS.md").write_text("most specific")
    said: list[str] = []
    text = instructions.load_project_instructions(project / "a" / "b", said.append)
    runs = [len(max(re.findall(f"{c}+", text), key=len)) for c in "PRA"]  # each file's text is one run
    assert runs == [60_000, 64_000, 4_000]
    assert "most specific" not in text
    assert said == [
        f"{project / 'AGENTS.md'} is 100,000 bytes; only the first 64,000 are used",
        f"{project / 'a' / 'AGENTS.md'} is 10,000 bytes; only the first 4,000 are used",
        f"{project / 'a' / 'b' / 'AGENTS.md'} skipped: the instruction files before it already fill 128,000 bytes",
    ]


def test_an_instruction_file_that_is_not_a_regular_file_is_skipped_without_blocking(
    home: Path, project: Path, monkeypatch
) -> None:
    from agentica_cli.app.instructions import load_project_instructions

    monkeypatch.setenv("AGENTICA_HOME", str(home))
    os.mkfifo(project / "AGENTS.md")  # a plain open would wait for a writer forever
    said: list[str] = []
    assert load_project_instructions(project, said.append) == ""
    assert said == [f"{project / 'AGENTS.md'} skipped: it is not a regular file"]


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(project: Path, tmp_path: Path) -> None:
    """The check resolved project/sub/AGENTS.md; then `sub` became a symlink leading out."""
    from agentica_cli.app.instructions import SkippedFile, read_capped

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("FAKE-SECRET")
    (project / "sub").symlink_to(outside)
    with pytest.raises(SkippedFile, match=r"cannot open it: .*symlink"):
        read_capped(str(project / "sub" / "AGENTS.md"), 1000, project)


# -- finding 4: the user's key goes only where the user sent it ---------------------------------


@pytest.mark.parametrize("project_model", ["ollama", "openai-like with base_url"])
def test_an_untrusted_project_cannot_redirect_the_users_key(home: Path, project: Path, project_model: str) -> None:
    """The user's key (user config, provider openai) and a project that picks another provider.
    OPENAI_BASE_URL stands in for the provider's own endpoint, OLLAMA_BASE_URL and
    OPENAI_LIKE_BASE_URL for the defaults a local server listens on (localhost:11434/8000)."""
    secret = "sk-user-secret-3c9a"
    (home / "config.toml").write_text(f'[model]\nprovider = "openai"\napi_key = "{secret}"\nname = "scripted-model"\n')
    with ScriptedModelServer([turns.text("from the user's provider")]) as provider, \
            ScriptedModelServer([turns.text("captured")]) as capture:
        table = '[model]\nprovider = "ollama"\n' if project_model == "ollama" else (
            f'[model]\nprovider = "openai-like"\nbase_url = "{capture.base_url}"\n')
        (project / ".agentica").mkdir()
        (project / ".agentica" / "config.toml").write_text(table)
        env = cli_env(home, OPENAI_BASE_URL=provider.base_url, OLLAMA_BASE_URL=capture.base_url,
                      OPENAI_LIKE_BASE_URL=capture.base_url)
        proc = run_cli(["-p", "hi"], cwd=project, home=home, env=env)
        captured, used = authorizations(capture), authorizations(provider)
    assert captured == []
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "from the user's provider\n"
    assert used == [f"Bearer {secret}"]
    config = project / ".agentica" / "config.toml"
    assert f"agentica: ignoring 'model.provider' from untrusted {config} (run with --trust to use it)" in proc.stderr


@pytest.mark.parametrize("chosen_by", ["trusted project", "flag", "environment"])
def test_a_key_in_a_config_file_is_not_sent_to_another_provider(
    home: Path, project: Path, chosen_by: str
) -> None:
    """A DeepSeek key in the user config; another layer switches to an OpenAI-compatible
    server (key optional): it gets no key, and neither does OPENAI_API_KEY reach it."""
    (home / "config.toml").write_text('[model]\nprovider = "deepseek"\napi_key = "sk-deepseek-secret"\n')
    with ScriptedModelServer([turns.text("ok")]) as capture:
        args = ["-p", "hi", "--model", "scripted-model"]
        extra = {"OPENAI_API_KEY": "sk-openai-env-secret"}
        if chosen_by == "trusted project":
            (project / ".agentica").mkdir()
            (project / ".agentica" / "config.toml").write_text(
                f'[model]\nprovider = "openai-like"\nbase_url = "{capture.base_url}"\n')
            args.append("--trust")
        elif chosen_by == "flag":
            args += ["--provider", "openai-like", "--base-url", capture.base_url]
        else:
            extra |= {"AGENTICA_PROVIDER": "openai-like", "AGENTICA_BASE_URL": capture.base_url}
        proc = run_cli(args, cwd=project, home=home, env=cli_env(home, **extra))
        sent = authorizations(capture)
    assert proc.returncode == 0, proc.stderr
    assert len(sent) == 1
    assert "secret" not in sent[0]


def test_a_key_without_its_provider_is_reported_when_none_is_left(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[model]\nprovider = "deepseek"\napi_key = "sk-deepseek-secret"\n')
    with ScriptedModelServer([turns.text("ok")]) as capture:
        proc = run_cli(["-p", "hi", "--provider", "openai", "--base-url", capture.base_url], cwd=project, home=home)
        assert capture.request_log == []
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "agentica: no API key configured for provider 'openai'. "
        f"(the api_key in {home / 'config.toml'} is for 'deepseek'; it is not sent to 'openai', chosen by the "
        "command line)"
    )


def test_which_provider_each_key_is_for(home: Path, project: Path, monkeypatch) -> None:
    from agentica_cli.app.settings.config import load_settings

    monkeypatch.setenv("AGENTICA_HOME", str(home))
    (project / ".agentica").mkdir()
    (home / "config.toml").write_text('[model]\napi_key = "user-key"\n')  # no provider: openai's
    assert load_settings(project, {}, trusted=False, environ={}).api_key == "user-key"
    switched = load_settings(project, {"model.provider": "deepseek"}, trusted=False, environ={})
    assert switched.api_key is None and "is for 'openai'" in (switched.unsent_key or "")
    assert load_settings(project, {"model.provider": "openai"}, trusted=False, environ={}).api_key == "user-key"
    # A key from the environment or a flag goes to the provider this run uses: the user chose both.
    env = {"AGENTICA_API_KEY": "env-key"}
    assert load_settings(project, {"model.provider": "deepseek"}, trusted=False, environ=env).api_key == "env-key"
    flags = {"model.provider": "glm", "model.api_key": "k"}
    assert load_settings(project, flags, trusted=False, environ={}).api_key == "k"
    # A trusted project's key is for the provider in force there (its own, or the user's).
    (home / "config.toml").write_text('[model]\nprovider = "zhipuai"\n')
    (project / ".agentica" / "config.toml").write_text('[model]\napi_key = "project-key"\n')
    assert load_settings(project, {"model.provider": "glm"}, trusted=True, environ={}).api_key == "project-key"
    assert load_settings(project, {"model.provider": "qwen"}, trusted=True, environ={}).api_key is None
    untrusted = load_settings(project, {}, trusted=False, environ={})
    assert untrusted.api_key is None and untrusted.held_back == {"model.api_key": "project-key"}


# -- finding 9: a config file that is not UTF-8 -------------------------------------------------


@pytest.mark.parametrize("which", ["user", "project"])
def test_a_config_file_that_is_not_utf8_is_a_config_error(home: Path, project: Path, which: str) -> None:
    path = home / "config.toml" if which == "user" else project / ".agentica" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes('[model]\nname = "café"\n'.encode("latin-1"))  # saved by an editor in Latin-1
    proc = run_cli(["-p", "hi", "--api-key", "k"], cwd=project, home=home)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"agentica: config error: {path}: not UTF-8 text (byte 0xe9 at offset 19); save it as UTF-8\n"
    )


# -- finding 10: what agentica keeps is private ------------------------------------------------


def modes(*paths: Path) -> list[str]:
    return [oct(stat.S_IMODE(p.stat().st_mode)) for p in paths]


def test_agentica_home_is_private_whatever_the_umask(home: Path, project: Path, tmp_path: Path) -> None:
    """A -p run that creates a session, an MCP server log and the trust store under umask 022,
    with the home and an old session left 0755/0644 by an earlier version."""
    home.chmod(0o755)
    (home / "sessions").mkdir(mode=0o755)
    (home / "config.toml").write_text(
        f'[mcp_servers.demo]\ncommand = "{sys.executable}"\nargs = ["{DEMO_MCP}"]\n')
    with ScriptedModelServer([turns.text("one"), turns.text("two")]) as server:
        first = subprocess.run([*AGENTICA, "-p", "hi", "--trust", *model_args(server)], cwd=project,
                               env=cli_env(home), capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL, preexec_fn=lambda: os.umask(0o022))
        assert first.returncode == 0, first.stderr
        [session] = (home / "sessions").glob("*.jsonl")
        session.chmod(0o644)
        home.chmod(0o755)
        (home / "config.toml").write_text("")  # the log exists now; a second start would only cost time
        again = subprocess.run([*AGENTICA, "-p", "again", "--continue", *model_args(server)], cwd=project,
                               env=cli_env(home), capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL, preexec_fn=lambda: os.umask(0o022))
        assert again.returncode == 0, again.stderr
    folders = [home, home / "sessions", home / "logs", home / "logs" / "mcp"]
    files = [session, home / "logs" / "mcp" / "demo.log", home / "trusted_projects.json"]
    assert modes(*folders) == ["0o700"] * 4
    assert modes(*files) == ["0o600"] * 3
    assert not list((home / "sessions").glob("*.pid"))  # the lock's pid note goes with the lock


def test_the_prompt_history_is_private(home: Path, tmp_path: Path, monkeypatch) -> None:
    from agentica_cli.tui.prompt_input import make_session

    monkeypatch.setenv("AGENTICA_HOME", str(home))
    old = os.umask(0o022)
    try:
        fresh = home / "new" / "history"
        make_session(fresh, {}, tmp_path)
        (home / "history").write_text("# earlier prompt\n+ my secret idea\n")  # 0644, as before
        home.chmod(0o755)
        make_session(home / "history", {}, tmp_path)
    finally:
        os.umask(old)
    assert modes(fresh, home / "history") == ["0o600", "0o600"]
    assert modes(home, home / "new") == ["0o700", "0o700"]
    assert (home / "history").read_text().endswith("+ my secret idea\n")  # tightened, not emptied


# -- finding 8: one writer per session -------------------------------------------------------------


def session_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_session_open_elsewhere_is_forked_from_its_last_answer(home: Path, tmp_path: Path, monkeypatch) -> None:
    from agentica_cli.app.sessions import SessionStore

    monkeypatch.setenv("AGENTICA_HOME", str(home))
    store = SessionStore()
    held = store.create(tmp_path, "m1")  # a lock is per open file: a second open acts as another process
    for message in ({"role": "user", "content": "first question"}, {"role": "assistant", "content": "answer"},
                    {"role": "user", "content": "in flight"}):
        held.append(message)
    fork = store.open(held.id)
    assert fork.id != held.id
    assert fork.notice == (
        f"session {held.id} is in use by another agentica (pid {os.getpid()}); "
        f"continuing in a new session {fork.id} forked from it"
    )
    assert fork.messages == [{"role": "user", "content": "first question"}, {"role": "assistant", "content": "answer"}]
    fork.append({"role": "user", "content": "mine"})
    held.append({"role": "assistant", "content": "theirs"})
    fork.close()
    held.close()
    header = session_lines(fork.path)[0]
    assert (header["forked_from"], header["cwd"], header["model"]) == (held.id, str(tmp_path), "m1")
    assert [m["content"] for m in SessionStore.load_messages(fork.path)] == ["first question", "answer", "mine"]
    assert [m["content"] for m in SessionStore.load_messages(held.path)] == [
        "first question", "answer", "in flight", "theirs"]
    listed = {info.id: (info.title, info.messages) for info in store.list(tmp_path)}
    assert listed[fork.id] == ("first question", 3)
    again = store.open(held.id)  # closed now: opened itself, no fork
    assert again.id == held.id and again.notice is None
    again.close()


def test_two_continues_at_once_do_not_share_a_session_file(home: Path, project: Path) -> None:
    script = [
        turns.text("answer one"),
        turns.text("answer two", delay=30),  # the first --continue holds the session meanwhile
        turns.text("answer three"),
    ]
    with ScriptedModelServer(script) as server:
        first = run_cli(["-p", "one", *model_args(server)], cwd=project, home=home)
        assert first.returncode == 0, first.stderr
        [original] = (home / "sessions").glob("*.jsonl")
        holder = subprocess.Popen([*AGENTICA, "-p", "two", "--continue", *model_args(server)], cwd=project,
                                  env=cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while len(server.request_log) < 2:  # its request is in: it has the session open
                assert holder.poll() is None and time.monotonic() < deadline, "the first --continue did not start"
                time.sleep(0.05)
            second = run_cli(["-p", "three", "--continue", *model_args(server)], cwd=project, home=home)
        finally:
            holder.send_signal(signal.SIGTERM)  # stops it mid-request, as Ctrl-C would
            holder.communicate(timeout=30)
        third_request = server.requests[2]
    assert second.returncode == 0, second.stderr
    forks = [p for p in (home / "sessions").glob("*.jsonl") if p != original]
    assert len(forks) == 1
    notice = (f"agentica: session {original.stem} is in use by another agentica (pid {holder.pid}); "
              f"continuing in a new session {forks[0].stem} forked from it\n")
    assert notice in second.stderr
    assert [(m["role"], m["content"]) for m in third_request["messages"][1:]] == [
        ("user", "one"), ("assistant", "answer one"), ("user", "three")]
    from agentica_cli.app.sessions import SessionStore

    kept = [(m["role"], m["content"]) for m in SessionStore.load_messages(original)]
    assert kept[:3] == [("user", "one"), ("assistant", "answer one"), ("user", "two")]
    assert ("user", "three") not in kept and len(kept) <= 4  # at most the holder's own ending after its prompt
    forked = [m["content"] for m in SessionStore.load_messages(forks[0])]
    assert forked == ["one", "answer one", "three", "answer three"]
    assert session_lines(forks[0])[0]["forked_from"] == original.stem
