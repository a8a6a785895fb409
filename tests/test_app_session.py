"""AppSession (agentica_cli/app/session.py) driven directly, with the in-process fake model: the
session behaviour every front end gets from it (approvals through the FrontEnd protocol, cancel,
switch_model, set_mode, custom commands, close, usage, start-up problems). One test starts a real
MCP server process; the rest run in-process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentica_cli.app.permissions.approvals import Answer, Question
from agentica_cli.app.session import AppSession, SessionOptions, StartupError
from agentica_cli.app.settings.config import load_settings
from agentica_cli.testing import FunctionModel, ScriptedModel, turns

HERE = Path(__file__).resolve().parent
FEATURES_SERVER = HERE / "mcp_servers" / "features_server.py"


class RecordingFrontEnd:
    """A front end that answers each question from `answers` and records what it was told."""

    can_ask = True

    def __init__(self, answers: list[str] | None = None) -> None:
        self.answers = list(answers or [])
        self.questions: list[Question] = []
        self.reports: list[str] = []
        self.refusals: list[tuple[str, str]] = []
        self.grants: list[tuple[str, bool]] = []

    async def ask_permission(self, call: Any, question: Question) -> Answer:
        self.questions.append(question)
        return Answer(self.answers.pop(0) if self.answers else "no")

    async def elicit(self, request: Any) -> Any:
        from agentica_cli.tools.mcp.client_features import ElicitAnswer

        return ElicitAnswer("decline")

    async def sample(self, request: Any) -> str | None:
        return None

    def report(self, text: str) -> None:
        self.reports.append(text)

    def mcp_failed(self, message: str) -> None:
        self.reports.append(message)

    def refused(self, name: str, mode: str, why: Any) -> None:
        self.refusals.append((name, str(why)))

    async def granted(self, granted: str, mode_changed: bool) -> None:
        self.grants.append((granted, mode_changed))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("AGENTICA_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello from the notes\n")
    return Path(os.path.realpath(path))


def settings_for(project: Path, trusted: bool = True, **flags: Any) -> Any:
    layer: dict[str, Any] = {"sandbox.mode": "off", "checkpoints.enabled": False, **flags}
    return load_settings(project, layer, trusted=trusted)


def open_session(project: Path, model: Any, front: Any, **options: Any) -> AppSession:
    settings = options.pop("settings", None) or settings_for(project)
    return AppSession.open(SessionOptions(project, settings, model=model, **options), front)


async def drain(stream: Any) -> list[Any]:
    return [event async for event in stream]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_a_turn_with_a_tool_call_asks_through_the_front_end_and_applies_the_answer(home: Path,
                                                                                   project: Path) -> None:
    target = project / "out.txt"
    model = ScriptedModel([
        turns.tool_calls(turns.call("write_file", {"file_path": str(target), "content": "made\n"}, id="w1")),
        turns.text("written"),
        turns.tool_calls(turns.call("write_file", {"file_path": str(target), "content": "again\n"}, id="w2")),
        turns.text("written again"),
    ])
    front = RecordingFrontEnd(["always"])

    async def scenario() -> tuple[list[Any], list[Any], str]:
        session = open_session(project, model, front)
        first = await drain(session.turn("write it"))
        mode = session.policy.mode
        second = await drain(session.turn("once more"))  # accept-edits now: no question
        await session.close()
        return first, second, mode

    first, second, mode = run(scenario())
    assert [q.name for q in front.questions] == ["write_file"]  # asked once, by the policy's question
    assert front.questions[0].always == "file edits in this folder (accept-edits)"
    assert mode == "accept-edits"
    assert front.grants == [("file edits inside the work folder, for this session (mode accept-edits)", True)]
    finished = [e for e in first + second if e.type == "tool_call_finished"]
    assert [(e.call_id, e.status) for e in finished] == [("w1", "ok"), ("w2", "ok")]
    assert target.read_text() == "again\n"
    assert [e.content for e in first + second if e.type == "turn_finished"] == ["written", "written again"]


def test_a_front_end_that_cannot_ask_gets_the_call_refused_and_told(home: Path, project: Path) -> None:
    from agentica_cli.app.session import HeadlessFrontEnd

    class Quiet(HeadlessFrontEnd):
        def __init__(self) -> None:
            super().__init__()
            self.refusals: list[str] = []

        def refused(self, name: str, mode: str, why: Any) -> None:
            self.refusals.append(name)

    model = ScriptedModel([
        turns.tool_calls(turns.call("write_file", {"file_path": str(project / "x.txt"), "content": "x"}, id="w1")),
        turns.text("could not"),
    ])
    front = Quiet()

    async def scenario() -> list[Any]:
        session = open_session(project, model, front)
        events = await drain(session.turn("write"))
        await session.close()
        return events

    events = run(scenario())
    assert front.refusals == ["write_file"]
    assert not (project / "x.txt").exists()
    result = next(e for e in events if e.type == "tool_call_finished")
    assert "this run cannot ask" in (result.result or result.error or "")
    assert "this run cannot ask" in model.requests[1]["messages"][-1]["content"]


def test_cancel_mid_turn_ends_it_and_the_next_turn_goes_on(home: Path, project: Path) -> None:
    asked = asyncio.Event()

    def answer(body: dict[str, Any]) -> Any:
        if len(model.requests) == 1:
            return turns.tool_calls(turns.call("execute", {"command": "sleep 30"}, id="s1"))
        return turns.text("after the cancel")

    model = FunctionModel(answer)

    class WaitingFrontEnd(RecordingFrontEnd):
        async def ask_permission(self, call: Any, question: Question) -> Answer:
            asked.set()
            await asyncio.Event().wait()  # the user never answers: the turn is cancelled meanwhile
            raise AssertionError("not reached")

    front = WaitingFrontEnd()

    async def scenario() -> tuple[bool, bool, list[Any], bool]:
        session = open_session(project, model, front)

        async def consume() -> None:
            await drain(session.turn("sleep"))

        task = asyncio.create_task(consume())
        await asyncio.wait_for(asyncio.shield(asked.wait()), 20)
        running = session.running
        cancelled = session.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        after = await drain(session.turn("go on"))
        nothing_left = session.cancel()
        await session.close()
        return running, cancelled, after, nothing_left

    running, cancelled, after, nothing_left = run(scenario())
    assert running and cancelled and not nothing_left
    assert [e.content for e in after if e.type == "turn_finished"] == ["after the cancel"]
    # The fake refuses a history where the cancelled call has no result: it got one.
    calls = [m for m in model.requests[1]["messages"] if m.get("tool_call_id") == "s1"]
    assert len(calls) == 1


def test_switch_model_changes_the_agents_model_and_a_failed_switch_changes_nothing(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AGENTICA_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    model = ScriptedModel([turns.text("one")])
    settings = settings_for(project, **{"model.provider": "deepseek", "model.name": "deepseek-chat"})

    async def scenario() -> tuple[Any, Any, str, str, str]:
        session = open_session(project, model, RecordingFrontEnd(), settings=settings)
        await drain(session.turn("hi"))
        switched = session.switch_model("deepseek-reasoner")
        used = session.agent.model.id
        monkeypatch.delenv("DEEPSEEK_API_KEY")  # the next switch cannot build its client
        failed = session.switch_model("deepseek-chat")
        kept = session.agent.model.id
        await session.close()
        return switched, failed, used, kept, settings.model_name

    switched, failed, used, kept, configured = run(scenario())
    assert switched.ok and used == "deepseek-reasoner"
    assert not failed.ok and failed.problem.startswith("Could not switch to deepseek-chat")
    assert kept == "deepseek-reasoner" and configured == "deepseek-reasoner"


def test_set_mode_plan_refuses_edits_and_tells_the_model_and_an_unknown_mode_is_refused(home: Path,
                                                                                        project: Path) -> None:
    model = ScriptedModel([
        turns.tool_calls(turns.call("write_file", {"file_path": str(project / "p.txt"), "content": "x"}, id="p1")),
        turns.text("here is the plan"),
    ])
    front = RecordingFrontEnd(["once"])

    async def scenario() -> None:
        session = open_session(project, model, front)
        await session.start()
        session.set_mode("plan")
        with pytest.raises(ValueError, match="unknown mode 'sideways'"):
            session.set_mode("sideways")
        await drain(session.turn("change it"))
        await session.close()

    run(scenario())
    assert not (project / "p.txt").exists() and front.questions == []
    assert front.refusals == [("write_file", "plan")]
    assert "Plan mode is on" in model.requests[0]["messages"][0]["content"]  # the system prompt says so


def test_a_custom_command_runs_with_its_model_and_tools_then_the_settings_come_back(home: Path,
                                                                                   project: Path) -> None:
    commands = project / ".agentica" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\nmodel: review-model\nallowed-tools: read_file\n---\n"
                                        "Review $ARGUMENTS carefully.\n")
    from agentica_cli.app.settings.trust import trust

    trust(project)
    model = ScriptedModel([turns.text("reviewed"), turns.text("plain")], id="main-model")

    async def scenario() -> tuple[Any, list[str], str, Any]:
        session = open_session(project, model, RecordingFrontEnd())
        await session.start()
        found = session.find_command("/review app.py")
        assert found is not None
        name = found[0].name
        await drain(session.run_command(name, found[1]))
        during_tools = [t["function"]["name"] for t in model.requests[0].get("tools", [])]
        await drain(session.turn("now plain"))
        after = (session.agent.model.id, session.agent.tool_filter)
        await session.close()
        return found, during_tools, model.requests[0]["model"], after

    found, during_tools, during_model, after = run(scenario())
    assert found[1] == "app.py"
    assert model.requests[0]["messages"][-1]["content"] == "Review app.py carefully."
    assert during_model == "review-model" and during_tools == ["read_file"]
    assert model.requests[1]["model"] == "main-model"
    assert after == ("main-model", None)
    assert "write_file" in [t["function"]["name"] for t in model.requests[1]["tools"]]


def test_a_custom_commands_inline_command_is_asked_through_the_same_front_end(home: Path, project: Path) -> None:
    commands = project / ".agentica" / "commands"
    commands.mkdir(parents=True)
    (commands / "status.md").write_text("State: !`echo all-green`\n")
    from agentica_cli.app.settings.trust import trust

    trust(project)
    model = ScriptedModel([turns.text("noted")])
    front = RecordingFrontEnd(["once"])
    shown: list[str] = []

    async def scenario() -> None:
        session = open_session(project, model, front)
        await drain(session.run_command("status", "", show=shown.append))
        await session.close()

    run(scenario())
    assert [(q.name, q.args) for q in front.questions] == [("execute", {"command": "echo all-green"})]
    assert front.questions[0].always is not None  # a plain command: the policy offers "always"
    assert model.requests[0]["messages"][-1]["content"].startswith("State: all-green")
    assert shown and "echo all-green" in shown[0]


def test_usage_counts_sub_agents_and_is_kept_in_the_stored_session(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("task", {"description": "look", "prompt": "Say hi"}, id="t1"),
                               usage={"prompt_tokens": 100, "completion_tokens": 10}),
              turns.text("hi from the sub-agent", usage={"prompt_tokens": 1000, "completion_tokens": 20}),
              turns.text("done", usage={"prompt_tokens": 200, "completion_tokens": 30})]
    front = RecordingFrontEnd(["once"])

    async def scenario() -> tuple[dict[str, int], int | None, str | None]:
        auto = settings_for(project, **{"permissions.mode": "auto"})
        session = open_session(project, ScriptedModel(script), front, settings=auto)
        await drain(session.turn("go"))
        counted = dict(session.usage)
        context = session.context_tokens
        await session.close()
        return counted, context, session.id

    counted, context, session_id = run(scenario())
    assert counted == {"input_tokens": 1300, "output_tokens": 60, "total_tokens": 1360}
    assert context == 200  # the agent's own last request, not the sub-agent's

    async def later() -> dict[str, int]:  # another process continues the session: /cost counts the earlier tokens
        session = open_session(project, ScriptedModel([]), RecordingFrontEnd(), resume=session_id)
        counted = dict(session.usage)
        await session.close()
        return counted

    assert run(later())["input_tokens"] == 1300


def test_a_session_that_is_not_saved_reads_the_resumed_history_and_writes_nothing(home: Path, project: Path) -> None:
    async def first() -> tuple[str | None, Path]:
        session = open_session(project, ScriptedModel([turns.text("first answer")]), RecordingFrontEnd())
        await drain(session.turn("first question"))
        await session.close()
        return session.id, session.stored.path

    session_id, path = run(first())
    saved = path.read_text()
    model = ScriptedModel([turns.text("second answer")])

    async def second() -> Any:
        session = open_session(project, model, RecordingFrontEnd(), resume=session_id, save=False)
        await drain(session.turn("second question"))
        await session.close()
        return session

    session = run(second())
    assert session.stored is None and session.id is None
    assert [m["content"] for m in model.requests[0]["messages"][1:]] == [
        "first question", "first answer", "second question"]  # the history was read
    assert path.read_text() == saved  # and nothing written


def test_a_config_error_is_data_not_a_traceback(home: Path, project: Path) -> None:
    settings = settings_for(project, **{"checkpoints.keep_days": -1})
    with pytest.raises(StartupError) as raised:
        AppSession.open(SessionOptions(project, settings, model=ScriptedModel([])), RecordingFrontEnd())
    problem = raised.value.problem
    assert problem.kind == "config"
    assert problem.message.startswith("config error: ") and "'checkpoints.keep_days' must be >= 0" in problem.message

    with pytest.raises(StartupError) as missing:
        open_session(project, ScriptedModel([]), RecordingFrontEnd(), resume="no-such-session")
    assert missing.value.problem.kind == "no_session"
    assert "no session 'no-such-session'" in missing.value.problem.message

    bad_mcp = settings_for(project)
    with pytest.raises(StartupError) as mcp:
        AppSession.open(SessionOptions(project, bad_mcp, model=ScriptedModel([]),
                                       client_mcp_servers={"x": {"transport": "carrier-pigeon"}}), RecordingFrontEnd())
    assert mcp.value.problem.kind == "config" and mcp.value.problem.message.startswith("MCP server config:")


def test_an_untrusted_projects_settings_are_told_at_open(home: Path, project: Path) -> None:
    commands = project / ".agentica" / "commands"
    commands.mkdir(parents=True)
    (commands / "hi.md").write_text("Say hi.\n")
    front = RecordingFrontEnd()
    session = AppSession.open(SessionOptions(project, settings_for(project, trusted=False), model=ScriptedModel([]),
                                             how_to_trust="run `agentica --trust` there"), front)
    session.release()
    assert front.reports == ["ignoring this untrusted project's commands (run `agentica --trust` there to use them)"]
    assert session.notices == front.reports


def _children_running(script: Path) -> list[int]:
    """This process's child processes that run `script` (the MCP server's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        state = stat.rsplit(")", 1)[1].split()[0]
        if parent == os.getpid() and str(script) in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts child processes through /proc")
def test_mcp_servers_ask_the_front_end_get_roots_and_stop_at_an_idempotent_close(home: Path, project: Path) -> None:
    (home / "config.toml").write_text(
        f'[mcp_servers.feat]\ncommand = "{sys.executable}"\nargs = ["{FEATURES_SERVER}"]\nprotocol = "legacy"\n')
    model = ScriptedModel([turns.tool_calls(turns.call("feat__register", {}, id="e1"),
                                            turns.call("feat__list_roots", {}, id="r1")),
                           turns.text("registered")])

    class FormFiller(RecordingFrontEnd):
        def __init__(self) -> None:
            super().__init__()
            self.forms: list[Any] = []

        async def elicit(self, request: Any) -> Any:
            from agentica_cli.tools.mcp.client_features import ElicitAnswer

            self.forms.append(request)
            return ElicitAnswer("accept", {"name": "Ada", "age": 36})

    front = FormFiller()

    async def scenario() -> tuple[dict[str, Any], list[str], list[int], list[int], Any]:
        session = open_session(project, model, front, settings=settings_for(project, **{"permissions.mode": "auto"}))
        events = await drain(session.turn("register me"))
        results = {e.call_id: e.result for e in events if e.type == "tool_call_finished"}
        states = [s.state for s in session.mcp.statuses()]
        running = _children_running(FEATURES_SERVER)
        await session.close()
        await session.close()  # nothing the second time
        with pytest.raises(RuntimeError, match="closed"):
            await drain(session.turn("again"))
        for _ in range(100):
            if not _children_running(FEATURES_SERVER):
                break
            await asyncio.sleep(0.05)
        return results, states, running, _children_running(FEATURES_SERVER), session.mcp

    results, states, running, after, mcp = run(scenario())
    assert [f.message for f in front.forms] == ["Who are you?"]  # the server's form went to the front end
    assert "registered Ada, 36" in str(results["e1"])
    assert str(results["r1"]).strip() == project.as_uri()  # roots: the work folder
    assert states == ["ready"] and len(running) == 1
    assert after == [], "the MCP server still runs after close()"
    assert all(s.state != "ready" for s in mcp.statuses())


def test_cost_counts_sub_agents_and_earlier_processes_and_is_recorded_once(home: Path, project: Path) -> None:
    # AppSession.cost is the one place that counts money: the usage file gets each request once
    # (a front end recording it too would double it), and a resumed session goes on from it.
    (home / "config.toml").write_text('[prices]\n"scripted-*" = { input = 1.0, output = 10.0 }\n')
    script = [turns.tool_calls(turns.call("task", {"description": "look", "prompt": "Say hi"}, id="t1"),
                               usage={"prompt_tokens": 100, "completion_tokens": 10}),
              turns.text("hi from the sub-agent", usage={"prompt_tokens": 1000, "completion_tokens": 20}),
              turns.text("done", usage={"prompt_tokens": 200, "completion_tokens": 30})]
    expected = (1300 * 1.0 + 60 * 10.0) / 1_000_000

    async def scenario() -> tuple[float, int, str | None, dict[str, int]]:
        auto = settings_for(project, **{"permissions.mode": "auto"})
        session = open_session(project, ScriptedModel(script), RecordingFrontEnd(), settings=auto)
        await drain(session.turn("go"))
        dollars, requests = session.cost.dollars, session.cost.requests
        await session.close()
        return dollars, requests, session.id, dict(session.stored.usage)  # type: ignore[union-attr]

    dollars, requests, session_id, stored = run(scenario())
    assert dollars == pytest.approx(expected)
    assert requests == 3
    assert stored["priced_requests"] == 3 and stored["cost_microusd"] == round(expected * 1_000_000)

    async def later() -> tuple[float, int]:
        session = open_session(project, ScriptedModel([]), RecordingFrontEnd(), resume=session_id)
        meter = session.cost
        await session.close()
        return meter.dollars, meter.requests

    assert run(later()) == (pytest.approx(expected), 3)


def test_clear_and_resume_are_new_conversations_in_the_same_agent_with_their_own_history_hooks_and_counters(
        home: Path, project: Path) -> None:
    """What the REPL's /clear, /resume and /rewind do, once for every front end: the same agent
    and servers; SessionEnd then SessionStart hooks with the new conversation's source; a new
    stored session (clear) or the resumed one's file, history and counters (resume); the
    conversation's "always" answers forgotten on clear; a rewind shortens the stored file too."""
    import json

    started, ended = project / "started.jsonl", project / "ended.jsonl"
    (home / "settings.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": f"cat >> {started}; echo >> {started}"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": f"cat >> {ended}; echo >> {ended}"}]}],
    }}))
    target = project / "made"
    model = ScriptedModel([
        turns.tool_calls(turns.call("execute", {"command": f"mkdir {target}"}, id="m1"),
                         usage={"prompt_tokens": 100, "completion_tokens": 10}),
        turns.text("first answer", usage={"prompt_tokens": 120, "completion_tokens": 5}),
        turns.text("second answer", usage={"prompt_tokens": 7, "completion_tokens": 1}),
        turns.text("third answer", usage={"prompt_tokens": 9, "completion_tokens": 1}),
    ])
    front = RecordingFrontEnd(["always"])

    async def scenario() -> dict[str, Any]:
        session = open_session(project, model, front)
        await drain(session.turn("first question"))
        first_id, agent = session.id, session.agent
        seen: dict[str, Any] = {"grants_before": len(session.policy.grants)}
        await session.clear()
        await session.wait_session_start()
        seen.update(cleared_id=session.id, same_agent=session.agent is agent, history=session.history,
                    tokens=session.usage.get("total_tokens", 0), grants=len(session.policy.grants),
                    context=session.context_tokens)
        await drain(session.turn("second question"))
        second_id = session.id
        await session.resume(first_id)
        await session.wait_session_start()
        seen.update(resumed_id=session.id, resumed_tokens=session.usage.get("input_tokens", 0),
                    resumed_history=[m.get("content") for m in session.history if m["role"] == "user"])
        await drain(session.turn("third question"))
        session.replace_history(session.history[:1])  # a rewind to before every turn but the first prompt
        stored_path = session.stored.path
        await session.close()
        seen.update(first_id=first_id, second_id=second_id, stored_path=stored_path)
        return seen

    seen = run(scenario())
    assert seen["grants_before"] == 1 and seen["grants"] == 0  # "always" belongs to its conversation
    assert seen["cleared_id"] != seen["first_id"] and seen["same_agent"]
    assert seen["history"] == [] and seen["tokens"] == 0 and seen["context"] is None
    assert seen["second_id"] == seen["cleared_id"]
    assert seen["resumed_id"] == seen["first_id"]
    assert seen["resumed_tokens"] == 220  # the resumed session's own tokens, not the cleared one's
    assert seen["resumed_history"] == ["first question"]
    user_texts = [[m["content"] for m in request["messages"] if m["role"] == "user"] for request in model.requests]
    assert user_texts[2] == ["second question"]  # nothing of the cleared conversation went to the model
    assert user_texts[3][-2:] == ["first question", "third question"][-2:] and "second question" not in user_texts[3]
    sources = [json.loads(line)["source"] for line in started.read_text().splitlines() if line.strip()]
    reasons = [json.loads(line)["reason"] for line in ended.read_text().splitlines() if line.strip()]
    assert sources == ["startup", "clear", "resume"]
    assert reasons == ["clear", "other", "other"]
    from agentica_cli.app.sessions import SessionStore

    assert len(SessionStore.load_messages(seen["stored_path"])) == 1  # the rewind reached the file
