"""SessionStore: append-as-you-go JSON lines, listing per folder, repair after a kill."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentica_cli.app.sessions import INTERRUPTED_TOOL_RESULT, SessionStore, repair_history


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SessionStore:
    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "home"))
    return SessionStore()


def test_messages_are_on_disk_after_each_append(store: SessionStore, tmp_path: Path) -> None:
    session = store.create(tmp_path, "m1")
    assert session.path == tmp_path / "home" / "sessions" / f"{session.id}.jsonl"
    session.append({"role": "user", "content": "hello"})
    lines = session.path.read_text().splitlines()  # read while still open: nothing buffered
    assert json.loads(lines[0])["type"] == "session"
    assert json.loads(lines[0])["cwd"] == str(tmp_path)
    assert json.loads(lines[1]) == {"type": "message", "message": {"role": "user", "content": "hello"}}
    session.append({"role": "assistant", "content": "hi"})
    session.close()
    assert store.open(session.id).messages == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
    ]


def test_latest_is_per_folder_and_newest_first(store: SessionStore, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    first = store.create(a)
    first.append({"role": "user", "content": "in a, first"})
    second = store.create(a)
    second.append({"role": "user", "content": "in a, second"})
    other = store.create(b)
    other.append({"role": "user", "content": "in b"})
    for s in (first, second, other):
        s.close()
    os.utime(first.path, (1_000_000, 1_000_000))
    latest = store.latest(a)
    assert latest is not None and latest.id == second.id
    assert latest.title == "in a, second"
    assert [s.id for s in store.list(a)] == [second.id, first.id]
    assert store.latest(tmp_path / "nowhere") is None


def test_a_lazy_session_has_no_file_until_its_first_message(store: SessionStore, tmp_path: Path) -> None:
    left = store.create(tmp_path, "m1", lazy=True)  # a REPL quit before its first prompt
    left.close()
    assert not left.path.exists() and not left.saved
    assert store.list(tmp_path) == []
    used = store.create(tmp_path, "m1", lazy=True)
    used.append({"role": "user", "content": "hello"})
    assert used.saved
    assert json.loads(used.path.read_text().splitlines()[0])["id"] == used.id
    used.close()
    assert store.open(used.id).messages == [{"role": "user", "content": "hello"}]


def test_latest_skips_sessions_without_a_message(store: SessionStore, tmp_path: Path) -> None:
    real = store.create(tmp_path)
    real.append({"role": "user", "content": "the real one"})
    real.close()
    os.utime(real.path, (1_000_000, 1_000_000))
    store.create(tmp_path).close()  # newer, header only: what an older agentica left when quit at once
    latest = store.latest(tmp_path)
    assert latest is not None and latest.id == real.id


def test_open_by_unique_prefix_and_unknown_id(store: SessionStore, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    session.close()
    assert store.open(session.id[:-2]).id == session.id
    with pytest.raises(FileNotFoundError):
        store.open("no-such-session")


def test_torn_last_line_and_unanswered_tool_calls_are_repaired(store: SessionStore, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    session.append({"role": "user", "content": "fix it"})
    call = {"id": "c1", "type": "function", "function": {"name": "execute", "arguments": "{}"}}
    call2 = {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    session.append({"role": "assistant", "content": "", "tool_calls": [call, call2]})
    session.append({"role": "tool", "tool_call_id": "c2", "content": "file text"})
    session.close()
    with session.path.open("a") as fh:
        fh.write('{"type": "message", "message": {"role": "tool", "tool_c')  # killed mid-write
    messages = store.open(session.id).messages
    assert messages == [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "", "tool_calls": [call, call2]},
        {"role": "tool", "tool_call_id": "c2", "content": "file text"},
        {"role": "tool", "tool_call_id": "c1", "content": INTERRUPTED_TOOL_RESULT},
    ]


def test_repair_drops_orphan_results_and_system_messages() -> None:
    history = [
        {"role": "system", "content": "old prompt"},
        {"role": "tool", "tool_call_id": "zz", "content": "orphan"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    assert repair_history(history) == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]


def test_a_replaced_history_is_where_loading_starts(store: SessionStore, tmp_path: Path) -> None:
    session = store.create(tmp_path)
    for content in ("first", "one", "second", "two"):
        session.append({"role": "user" if content in ("first", "second") else "assistant", "content": content})
    summary = [{"role": "user", "content": "Summary: first/one"}, {"role": "user", "content": "second"},
               {"role": "assistant", "content": "two"}]
    session.replace_history(summary)
    session.append({"role": "user", "content": "third"})
    session.close()
    assert store.open(session.id).messages == [*summary, {"role": "user", "content": "third"}]


def test_usage_is_saved_with_the_message_it_belongs_to_in_one_write(store: SessionStore, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A request's tokens and its cost (two record_usage calls) reach `<id>.usage.json` in one
    replace, with the answer's message line; close saves what no message followed; a reopened
    session counts from the file."""
    from agentica_cli.app.sessions import usage_path

    session = store.create(tmp_path, "m1")
    session.append({"role": "user", "content": "hello"})
    replaced: list[str] = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (replaced.append(str(b)), real_replace(a, b))[1])
    session.record_usage({"input_tokens": 100, "output_tokens": 5, "total_tokens": 105})
    session.record_usage({"cost_micro_usd": 42})
    assert replaced == []  # nothing yet: the answer's line comes with it
    session.append({"role": "assistant", "content": "hi"})
    assert replaced == [str(usage_path(session.path))]
    assert json.loads(usage_path(session.path).read_text()) == {
        "input_tokens": 100, "output_tokens": 5, "total_tokens": 105, "cost_micro_usd": 42}
    session.record_usage({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2})  # no message after it
    session.close()
    assert len(replaced) == 2
    assert store.open(session.id).usage["input_tokens"] == 101
