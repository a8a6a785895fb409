"""SessionStart hooks fire when a session starts (REPL start, /clear, a resume, a compaction),
not at the first prompt; their context reaches the model with the first prompt."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from cli_support import cli_env, last_user_message, model_args, run_cli
from conftest import collect, scripted_model
from screen_support import started_repls

from agentica_cli.deep import DeepAgent
from agentica_cli.extensions.hook_config import HookSpec
from agentica_cli.extensions.hooks import CommandHooks
from agentica_cli.testing import ScriptedModelServer, turns

RECORD = "{ cat; echo; } >> "  # + the log file: one JSON object a line


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def wait_for_records(path: Path, count: int, timeout: float = 30) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while len(seen := records(path)) < count:
        assert time.monotonic() < deadline, f"only {seen} after {timeout} s"
        time.sleep(0.05)
    return seen


def test_start_session_fires_before_any_prompt_and_its_context_waits_for_the_first(scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    specs = [HookSpec("SessionStart", RECORD + str(log) + "; echo 'Branch: main'"),
             HookSpec("UserPromptSubmit", RECORD + str(log))]
    server = scripted(turns.text("one"), turns.text("Summary."), turns.text("two"), turns.text("three"))
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, hooks=[CommandHooks(specs, tmp_path)],
                      exclude_tools=("web_search", "fetch_url"))

    async def session() -> None:
        await agent.start_session()
        assert [r["source"] for r in records(log)] == ["startup"]  # no prompt yet
        await agent.start_session()  # once per session
        await collect(agent, "hello")
        await agent.compact(keep_messages=0)
        await collect(agent, "after compaction")
        await agent.end_session("clear")
        agent.reset()
        await agent.start_session()
        await collect(agent, "fresh")

    asyncio.run(session())
    seen = records(log)
    assert [(r["hook_event_name"], r.get("source")) for r in seen] == [
        ("SessionStart", "startup"), ("UserPromptSubmit", None), ("SessionStart", "compact"),
        ("UserPromptSubmit", None), ("SessionStart", "clear"), ("UserPromptSubmit", None)]
    prompts = [r["messages"][-1]["content"] for r in server.requests]
    assert prompts[0] == "hello\n\nBranch: main"  # SessionStart's context joined the first prompt only
    # After the compaction the context follows the summary (the history's first message), not the
    # prompt (the two user messages are sent joined)
    assert prompts[2].endswith("Summary.\n\nBranch: main\n\nafter compaction")
    assert json.dumps(server.requests[2]).count("Branch: main") == 1
    assert prompts[3] == "fresh\n\nBranch: main"  # the new session's


def test_a_resumed_history_starts_with_source_resume_and_a_blocked_prompt_keeps_the_context(
        scripted, tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    specs = [HookSpec("SessionStart", RECORD + str(log) + "; echo 'Remember the release.'"),
             HookSpec("UserPromptSubmit", "grep -q secret && { echo 'no secrets' >&2; exit 2; }; exit 0")]
    server = scripted(turns.text("ok"))
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "before"}]
    agent = DeepAgent(scripted_model(server), work_dir=tmp_path, hooks=[CommandHooks(specs, tmp_path)],
                      messages=history, exclude_tools=("web_search", "fetch_url"))

    async def session() -> None:
        await collect(agent, "my secret")  # no UI started it: the first prompt does; it is blocked
        await collect(agent, "go on")

    asyncio.run(session())
    assert [r["source"] for r in records(log)] == ["resume"]
    assert len(server.requests) == 1
    assert server.requests[0]["messages"][-1]["content"] == "go on\n\nRemember the release."


def test_the_repl_fires_session_start_at_start_and_after_clear(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    user_home = tmp_path / "user"
    user_home.mkdir()
    log = tmp_path / "hooks.jsonl"
    hooks = {event: [{"hooks": [{"type": "command", "command": RECORD + str(log)}]}]
             for event in ("SessionStart", "SessionEnd")}
    (home / "settings.json").write_text(json.dumps({"hooks": hooks}))
    with ScriptedModelServer([]) as server:
        with started_repls(home, project) as start:
            repl = start(server, HOME=str(user_home))
            started = wait_for_records(log, 1)  # nothing typed: the session's start fired it
            assert (started[0]["hook_event_name"], started[0]["source"]) == ("SessionStart", "startup")
            assert Path(started[0]["transcript_path"]).name == f"{started[0]['session_id']}.jsonl"
            repl.send_line("/clear")
            repl.expect("Started a new conversation")
            repl.expect_prompt()
            seen = wait_for_records(log, 3)
            assert repl.exit() == 0
        assert server.requests == []  # no prompt was ever sent
    seen = records(log)
    assert [(r["hook_event_name"], r.get("source") or r.get("reason")) for r in seen] == [
        ("SessionStart", "startup"), ("SessionEnd", "clear"), ("SessionStart", "clear"),
        ("SessionEnd", "prompt_input_exit")]
    assert seen[2]["session_id"] == seen[3]["session_id"] != seen[0]["session_id"]


def test_quitting_the_repl_at_once_with_session_start_hooks_saves_no_session(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    user_home = tmp_path / "user"
    user_home.mkdir()
    log = tmp_path / "hooks.jsonl"
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": RECORD + str(log)}]}]}
    (home / "settings.json").write_text(json.dumps({"hooks": hooks}))
    env = cli_env(home, HOME=str(user_home))
    sessions = home / "sessions"
    with ScriptedModelServer([turns.text("Noted: blue."), turns.text("Blue.")]) as server:
        first = run_cli(["-p", "my colour is blue", *model_args(server)], cwd=project, home=home, env=env)
        assert first.returncode == 0, first.stderr
        [saved] = sessions.glob("*.jsonl")
        with started_repls(home, project) as start:
            repl = start(server, env=env)
            started = wait_for_records(log, 2)  # the -p run's, then the REPL's: it has its session id
            assert started[1]["source"] == "startup" and started[1]["session_id"] != saved.stem
            assert repl.exit() == 0
            assert "Session saved" not in repl.child.before  # there is none to resume
        assert sorted(sessions.glob("*.jsonl")) == [saved]  # no empty file beside the real session
        listed = run_cli(["sessions", "list"], cwd=project, home=home, env=env)
        assert listed.returncode == 0 and saved.stem in listed.stdout and "(empty)" not in listed.stdout
        again = run_cli(["-p", "--continue", "what is my colour?", *model_args(server)], cwd=project, home=home,
                        env=env)
        assert again.returncode == 0, again.stderr
        history = json.dumps(server.requests[-1]["messages"])
        assert "my colour is blue" in history  # --continue found the conversation, not an empty one
        assert last_user_message(server.requests[-1]).startswith("what is my colour?")
