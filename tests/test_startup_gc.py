"""The garbage collector held off while `agentica -p` starts (app/startup_gc.py): off from the
entry point to the session's start, then on again with the start-up's objects frozen."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from first_request_probe import noted_at_first_request

from agentica_cli.app import startup_gc


@pytest.fixture
def collector() -> Iterator[None]:
    """Leave the test process's collector as it was found."""
    was_on = gc.isenabled()
    startup_gc._held = False
    try:
        yield
    finally:
        startup_gc._held = False
        gc.unfreeze()
        (gc.enable if was_on else gc.disable)()


def test_hold_turns_the_collector_off_and_release_freezes_and_turns_it_on(collector: None) -> None:
    gc.enable()
    startup_gc.hold()
    assert not gc.isenabled()
    before = gc.get_freeze_count()
    kept = [object() for _ in range(10)]  # tracked objects alive at release (lists are tracked)
    startup_gc.release()
    assert gc.isenabled()
    assert gc.get_freeze_count() > before
    assert kept


def test_a_collector_the_caller_turned_off_stays_off(collector: None) -> None:
    gc.disable()
    startup_gc.hold()
    startup_gc.release()
    assert not gc.isenabled()  # not ours to turn on


def test_release_without_hold_changes_nothing(collector: None) -> None:
    gc.enable()
    count = gc.get_freeze_count()
    startup_gc.release()
    assert gc.isenabled() and gc.get_freeze_count() == count


def test_only_the_agentica_process_itself_holds_it(monkeypatch: pytest.MonkeyPatch, collector: None) -> None:
    """`main()` as the console script runs it (argv None) holds the collector for `-p`; a
    caller's `main(argv)` (a test, a zygote's child, an embedding program) and other commands
    leave it as they found it."""
    from agentica_cli.cli import app

    seen: list[bool] = []
    monkeypatch.setattr(app, "_main", lambda args: seen.append(gc.isenabled()) or 0)
    monkeypatch.setattr(app, "_exits_without_teardown", lambda args: False)
    gc.enable()
    app.main(["-p", "hi"])
    monkeypatch.setattr(sys, "argv", ["agentica", "doctor"])
    app.main()
    monkeypatch.setattr(sys, "argv", ["agentica", "-p", "hi"])
    app.main()
    assert seen == [True, True, False]


def test_a_print_run_sends_its_first_request_with_the_collector_on_and_the_start_frozen(tmp_path: Path) -> None:
    """The real `agentica -p`: by its first model request the collector is on again (a long
    session collects its garbage) and the start-up's objects are in the permanent generation."""
    noted = noted_at_first_request(tmp_path, """
    def noted():
        import gc
        return {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
    """, "read notes.txt")
    assert noted["enabled"] is True
    assert noted["frozen"] > 10_000  # the modules' objects: functions, classes, dicts
