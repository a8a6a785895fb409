"""The garbage collector held back while `agentica` starts (app/startup_gc.py): it collects
rarely from the entry point until the session has started, then as usual again, with the
start-up's objects frozen."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from first_request_probe import noted_at_first_request

from agentica_cli.app import startup_gc


@pytest.fixture
def collector() -> Iterator[tuple[int, ...]]:
    """Leave the test process's collector as it was found; gives its thresholds."""
    was_on, thresholds = gc.isenabled(), gc.get_threshold()
    startup_gc._thresholds = None
    try:
        yield thresholds
    finally:
        startup_gc._thresholds = None
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        (gc.enable if was_on else gc.disable)()


def test_hold_raises_the_threshold_and_release_freezes_and_puts_it_back(collector: tuple[int, ...]) -> None:
    gc.enable()
    startup_gc.hold()
    assert gc.isenabled()  # never off: a start that misses release() still collects
    assert gc.get_threshold() == (startup_gc.HELD_THRESHOLD, *collector[1:])
    startup_gc.hold()  # twice: still the first call's thresholds to put back
    before = gc.get_freeze_count()
    kept = [object() for _ in range(10)]
    startup_gc.release()
    assert gc.get_threshold() == collector
    assert gc.get_freeze_count() > before
    assert kept


def test_a_collector_the_caller_turned_off_is_left_alone(collector: tuple[int, ...]) -> None:
    gc.disable()
    startup_gc.hold()
    assert gc.get_threshold() == collector
    startup_gc.release()
    assert not gc.isenabled()


def test_release_without_hold_changes_nothing(collector: tuple[int, ...]) -> None:
    gc.enable()
    count = gc.get_freeze_count()
    startup_gc.release()
    assert gc.get_threshold() == collector and gc.get_freeze_count() == count


def test_only_the_agentica_process_itself_holds_it_for_the_main_command(
        monkeypatch: pytest.MonkeyPatch, collector: tuple[int, ...]) -> None:
    """`main()` as the console script runs it (argv None) holds the collector for `-p` and the
    REPL; a caller's `main(argv)` (a test, a zygote's child, an embedding program) and the
    subcommands leave it as they found it."""
    from agentica_cli.cli import app

    seen: list[bool] = []
    monkeypatch.setattr(app, "_main",
                        lambda args, own_process=False: seen.append(startup_gc.held()) or startup_gc.release() or 0)
    monkeypatch.setattr(app, "_exits_without_teardown", lambda args: False)
    gc.enable()
    app.main(["-p", "hi"])
    for argv in (["doctor"], ["mcp", "serve"], ["-p", "hi"], [], ["--model", "m"]):
        monkeypatch.setattr(sys, "argv", ["agentica", *argv])
        app.main()
    assert seen == [False, False, False, True, True, True]


def test_a_print_run_sends_its_first_request_with_the_usual_collector_and_the_start_frozen(tmp_path: Path) -> None:
    """The real `agentica -p`: by its first model request the collector has its usual
    thresholds again (a long session collects its garbage) and the start-up's objects are in
    the permanent generation."""
    noted = noted_at_first_request(tmp_path, """
    def noted():
        import gc
        return {"enabled": gc.isenabled(), "threshold": gc.get_threshold()[0], "frozen": gc.get_freeze_count()}
    """, "read notes.txt")
    assert noted["enabled"] is True
    assert noted["threshold"] == 700  # CPython's default, which the child started with
    assert noted["frozen"] > 10_000  # the modules' objects: functions, classes, dicts


def test_the_repl_collects_as_usual_once_its_prompt_is_up(start_repl, tmp_path: Path) -> None:
    """The real REPL in a pseudo-terminal: a `sitecustomize` (on PYTHONPATH, run before
    agentica) notes the collector's state as the process ends; by then it has its usual
    thresholds and the start-up's objects are frozen (released at the first paint)."""
    from agentica_cli.testing import ScriptedModelServer, turns

    hook = tmp_path / "hook"
    hook.mkdir()
    noted = tmp_path / "gc.json"
    (hook / "sitecustomize.py").write_text(
        "import atexit, gc, json\n"
        f"atexit.register(lambda: open({str(noted)!r}, 'w').write(json.dumps("
        "{'threshold': gc.get_threshold()[0], 'frozen': gc.get_freeze_count()})))\n")
    with ScriptedModelServer([turns.text("hello")]) as server:
        repl = start_repl(server, PYTHONPATH=str(hook))
        repl.send_line("hi")
        repl.expect("hello")
        repl.expect_prompt()
        assert repl.exit() == 0
    state = json.loads(noted.read_text())
    assert state["threshold"] == 700
    assert state["frozen"] > 10_000


def test_the_repl_and_the_headless_commands_end_without_the_interpreters_teardown() -> None:
    """The REPL, -p, batch and the stdio servers end with fast_exit (finalize, then os._exit):
    the REPL's teardown beside its daemon threads sometimes ended it with SIGSEGV under load.
    Help, version and the other subcommands keep the interpreter's usual end."""
    from agentica_cli.cli import app

    for argv in ([], ["--model", "m"], ["-p", "hi"], ["batch", "t.jsonl"], ["acp"], ["mcp", "serve"]):
        assert app._exits_without_teardown(argv), argv
    for argv in (["--help"], ["--version"], ["doctor"], ["sessions", "list"], ["mcp", "list"]):
        assert not app._exits_without_teardown(argv), argv
