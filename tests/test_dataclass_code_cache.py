"""The compiled code of dataclasses' generated methods, kept between starts (app/dataclass_code_cache.py):
classes made through it are the classes `dataclasses` makes, a second start compiles nothing,
and a file that is not this user's own, this Python's, or whole is never used."""

from __future__ import annotations

import dataclasses
import inspect
import marshal
import os
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from first_request_probe import noted_at_first_request

from agentica_cli.app import dataclass_code_cache
from agentica_cli.app.dataclass_code_cache import HEADER, hold, load, release


@pytest.fixture(autouse=True)
def unheld() -> Iterator[None]:
    """Each test starts and ends with `dataclasses` as Python made it."""
    dataclass_code_cache._held = None
    yield
    dataclass_code_cache._held = None
    vars(dataclasses).pop("exec", None)


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "code.marshal"


def make_classes() -> tuple[type, type]:
    """A frozen class with defaults, a factory and a field left out of repr; and a mutable ordered
    one. Made anew at each call."""

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        name: str
        size: int = 3
        tags: list[str] = dataclasses.field(default_factory=list, hash=False)
        secret: str = dataclasses.field(default="", repr=False)

    @dataclasses.dataclass(order=True)
    class Ordered:
        rank: int
        label: str | None = None

    return Frozen, Ordered


def behaviour(frozen: type, ordered: type) -> dict[str, object]:
    a, b = frozen("a", tags=["x"], secret="s"), frozen("a", tags=["x"], secret="s")
    try:
        a.name = "changed"
        refused = ""
    except dataclasses.FrozenInstanceError as err:
        refused = str(err)
    return {
        "repr": repr(a), "eq": a == b, "hash": hash(a) == hash(b), "refused": refused,
        "replace": repr(dataclasses.replace(a, size=9)),
        "signature": str(inspect.signature(frozen)), "hints": typing.get_type_hints(ordered.__init__),
        "init annotations": {k: v for k, v in ordered.__init__.__annotations__.items()},
        "order": sorted([ordered(2), ordered(1, "b"), ordered(1, "a")]),
        "fields": [(f.name, f.repr) for f in dataclasses.fields(frozen)],
    }


def test_classes_made_through_the_cache_behave_as_dataclasses_makes_them(cache_file: Path) -> None:
    plain = behaviour(*make_classes())
    hold(cache_file)
    assert "exec" in vars(dataclasses)
    through_cache = behaviour(*make_classes())
    cold = dataclass_code_cache.held()
    assert cold is not None and cold.compiled >= 8  # __init__, __repr__, __eq__, __setattr__, ... of two
    release()
    hold(cache_file)  # a second start, from the file
    from_file = behaviour(*make_classes())
    warm = dataclass_code_cache.held()
    assert warm is not None and warm.compiled == 0 and len(warm.used) == cold.compiled
    release()
    # The orderings hold instances of different classes (made anew): compare them as text.
    assert {k: repr(v) for k, v in through_cache.items()} == {k: repr(v) for k, v in plain.items()}
    assert {k: repr(v) for k, v in from_file.items()} == {k: repr(v) for k, v in plain.items()}
    # The class's annotation (a string in this module), not the name of the generated code's
    # variable: what a compilation that inherited `from __future__ import annotations` gives.
    assert through_cache["init annotations"]["label"] == "str | None"


def test_release_puts_the_builtin_back_and_writes_a_private_file(cache_file: Path) -> None:
    hold(cache_file)
    first = dataclass_code_cache.held()
    hold(cache_file)  # held already: the same cache
    assert dataclass_code_cache.held() is first
    make_classes()
    release()
    assert "exec" not in vars(dataclasses) and dataclass_code_cache.held() is None
    assert cache_file.stat().st_mode & 0o777 == 0o600
    assert cache_file.parent.stat().st_mode & 0o777 == 0o700
    assert len(load(cache_file)) == first.compiled
    assert not list(cache_file.parent.glob("*.tmp"))
    release()  # nothing held: nothing done


def test_nothing_new_means_nothing_written(cache_file: Path) -> None:
    hold(cache_file)
    make_classes()
    release()
    written = cache_file.stat().st_mtime_ns
    os.utime(cache_file, ns=(written - 10**9, written - 10**9))
    hold(cache_file)
    make_classes()
    release()
    assert cache_file.stat().st_mtime_ns == written - 10**9


def test_another_exec_put_into_dataclasses_is_left_alone(cache_file: Path) -> None:
    def theirs(*args: object) -> None:
        exec(*args)

    dataclasses.exec = theirs  # type: ignore[attr-defined]
    hold(cache_file)
    assert dataclass_code_cache.held() is None and vars(dataclasses)["exec"] is theirs


def written_by_us(cache_file: Path) -> None:
    hold(cache_file)
    make_classes()
    release()
    assert load(cache_file)


def test_a_file_others_can_write_is_not_used(cache_file: Path) -> None:
    written_by_us(cache_file)
    cache_file.chmod(0o622)
    assert load(cache_file) == {}
    cache_file.chmod(0o600)
    cache_file.parent.joinpath("link.marshal").symlink_to(cache_file)
    assert load(cache_file.parent / "link.marshal") == {}  # O_NOFOLLOW


@pytest.mark.parametrize("damage", ["truncated", "not marshal", "another python", "not a dict"])
def test_a_damaged_or_foreign_file_means_an_empty_cache(cache_file: Path, damage: str) -> None:
    written_by_us(cache_file)
    data = cache_file.read_bytes()
    _, entries = marshal.loads(data)
    cache_file.write_bytes({
        "truncated": data[:len(data) // 2],
        "not marshal": b"\x00garbage" * 10,
        "another python": marshal.dumps((HEADER.replace(sys.version, "3.99.0 (other)"), entries)),
        "not a dict": marshal.dumps((HEADER, list(entries))),
    }[damage])
    assert load(cache_file) == {}
    hold(cache_file)
    plain = behaviour(*make_classes())  # compiled afresh, and right
    assert dataclass_code_cache.held().compiled > 0  # type: ignore[union-attr]
    release()
    assert len(load(cache_file)) == len(entries)  # and the file rewritten whole
    assert plain["eq"] is True


def test_an_entry_that_is_not_code_is_compiled_again(cache_file: Path) -> None:
    written_by_us(cache_file)
    entries = load(cache_file)
    cache_file.write_bytes(marshal.dumps((HEADER, dict.fromkeys(entries, "print('not code')"))))
    hold(cache_file)
    behaviour(*make_classes())
    assert dataclass_code_cache.held().compiled == len(entries)  # type: ignore[union-attr]


def test_python_told_not_to_write_bytecode_reads_but_never_writes(cache_file: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    hold(cache_file)
    make_classes()
    release()
    assert not cache_file.exists()


def test_what_another_process_wrote_meanwhile_is_kept(cache_file: Path) -> None:
    # A batch and its zygote start together, read the same (empty) file, define different classes.
    hold(cache_file)
    ours = dataclass_code_cache.held()
    make_classes()
    dataclass_code_cache._held = None  # the other process, which wrote first
    vars(dataclasses).pop("exec")
    hold(cache_file)

    @dataclasses.dataclass
    class TheirsOnly:
        other: bytes = b""

    release()
    theirs = set(load(cache_file))
    dataclass_code_cache._held = ours
    dataclasses.exec = ours.exec  # type: ignore[union-attr, attr-defined]
    release()
    assert set(load(cache_file)) == theirs | ours.entries.keys()  # type: ignore[union-attr]
    assert theirs - ours.entries.keys()  # type: ignore[union-attr]


def test_past_max_entries_only_this_starts_are_kept(cache_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written_by_us(cache_file)
    stale = {f"def stale_{i}(): pass": compile("pass", "<string>", "exec") for i in range(20)}
    cache_file.write_bytes(marshal.dumps((HEADER, {**load(cache_file), **stale})))
    monkeypatch.setattr(dataclass_code_cache, "MAX_ENTRIES", 10)
    hold(cache_file)

    @dataclasses.dataclass
    class New:
        fresh: int = 0

    used = set(dataclass_code_cache.held().used)  # type: ignore[union-attr]
    release()
    assert set(load(cache_file)) == used


def test_a_caller_of_main_with_argv_keeps_dataclasses_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from agentica_cli.cli.app import main

    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path))
    seen: list[object] = []
    monkeypatch.setattr(dataclass_code_cache, "hold", lambda path=None: seen.append(path))
    main(["config", "path"])
    assert seen == [] and "exec" not in vars(dataclasses)


def test_a_real_second_start_compiles_none_of_its_dataclasses(tmp_path: Path) -> None:
    """The real `agentica -p`, twice with one home: at its first request the first run has
    compiled the methods of every dataclass imported so far, the second none of them."""
    noted = """
    def noted():
        import dataclasses
        from agentica_cli.app import dataclass_code_cache
        held = dataclass_code_cache.held()
        return {"compiled": held.compiled, "used": len(held.used), "shim": "exec" in vars(dataclasses)}
    """
    home = tmp_path / "home"
    # Python's setting not to write bytecode (set on some machines) would keep the file unwritten.
    first = noted_at_first_request(tmp_path / "1", noted, "read notes.txt", home=home,
                                   drop_env=("PYTHONDONTWRITEBYTECODE",))
    second = noted_at_first_request(tmp_path / "2", noted, "read notes.txt", home=home,
                                    drop_env=("PYTHONDONTWRITEBYTECODE",))
    assert first["shim"] and second["shim"]
    assert first["compiled"] > 200  # ~120 dataclasses (ours, anyio's, h11's, httpx2's) by then
    assert second["compiled"] == 0 and second["used"] == first["used"]
    assert (home / "cache" / dataclass_code_cache.FILE_NAME).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("argv", "held"), [(["config", "path"], True), (["-p", "hi"], True), (["--version"], False),
                                            (["config", "path", "--help"], False), (["batch", "t.jsonl"], False)])
def test_the_agentica_process_holds_it_for_its_commands_but_the_version_the_help_and_batch(
        argv: list[str], held: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.cli import app

    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["agentica", *argv])
    calls: list[str] = []
    monkeypatch.setattr(dataclass_code_cache, "hold", lambda path=None: calls.append("hold"))
    monkeypatch.setattr(dataclass_code_cache, "release", lambda: calls.append("release"))
    monkeypatch.setattr(app, "_dispatch", lambda args, own_process=False: 0)  # the command itself is not what is tested
    monkeypatch.setattr(app, "_exits_without_teardown", lambda args: False)  # nor its exit
    from agentica_cli.app import startup_gc

    monkeypatch.setattr(startup_gc, "hold", lambda: None)  # this test process keeps its collector
    assert app.main() == 0
    assert calls == (["hold", "release"] if held else [])
