"""Plain `-p` command lines read without typer (cli/plain_flags.py): the same namespace typer
gives launch.start for every line the reader takes, typer for every line it does not, and the
same ends (Ctrl-C, end of input, a closed stdout) as typer's main gives the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentica_cli.cli import commands, launch
from agentica_cli.cli.app import _dispatch
from agentica_cli.cli.plain_flags import read_plain_command_line


def _typer_namespace(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, object]:
    seen: list[object] = []
    monkeypatch.setattr(launch, "start", lambda args: seen.append(args) or 0)
    assert commands.run(list(argv)) == 0
    return vars(seen.pop())


READ_PLAINLY = [
    ["-p", "say hi"],
    ["--print", "say", "hi"],
    ["say hi", "-p"],
    ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "-C", "/tmp", "--model", "m1",
     "--provider", "deepseek", "--base-url", "http://127.0.0.1:1/v1", "--api-key-file", "/etc/hostname",
     "--permission-mode", "accept-edits", "--sandbox", "read-only", "--max-turns", "3"],
    ["-p", "-m", "m2", "--work-dir", "relative/folder", "--output-format", "json", "fix", "the", "bug"],
    ["-p", "-y", "--trust", "--no-session", "--no-checkpoints", "--output-format", "text", "--input-format", "text",
     "go"],
    ["-p", "--yes", "--permission-mode", "auto", "--sandbox", "off", "--max-turns", "0", "x"],  # start refuses 0
    ["-p", "--permission-mode", "plan", "--sandbox", "workspace-write", "--max-turns", " 7", ""],
    ["-p", "--model", "café", "--api-key-file", "no/such/file", "ünïcode prompt"],
    ["-p", "--api-key", "sk-x", "--request-timeout", "2.5", "--max-tokens", "64", "--reasoning-effort", "high",
     "--max-cost", "0.5", "q"],
    ["-p", "--request-timeout", "0", "--max-tokens", "1_000", "--max-cost", "1e3", "--reasoning-effort", "none", "q"],
    ["-p", "--system-prompt", "be brief", "--append-system-prompt", "and kind", "--system-prompt-file", "/etc/hostname",
     "--append-system-prompt-file", "no/such/file", "x"],
    ["-p", "--add-dir", "/tmp", "--mcp-config", "{}", "--add-dir", "rel", "--mcp-config", "f.json", "--image", "a.png",
     "--image", "b.png", "--strict-mcp-config", "-c", "x"],
    ["--continue", "-p", "x"],
]


@pytest.mark.parametrize("argv", READ_PLAINLY)
def test_a_plain_line_reads_as_typer_reads_it(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    plain = read_plain_command_line(list(argv))
    assert plain is not None
    assert vars(plain) == _typer_namespace(monkeypatch, argv)


def test_every_flag_the_reader_takes_is_in_a_line_compared_with_typer() -> None:
    from agentica_cli.cli.plain_flags import _LIST_FLAGS, _SWITCHES, _VALUE_FLAGS

    compared = {word for argv in READ_PLAINLY for word in argv}
    assert sorted((set(_VALUE_FLAGS) | set(_LIST_FLAGS) | set(_SWITCHES)) - compared) == []


def test_a_batch_sessions_command_line_is_read_plainly(tmp_path: Path) -> None:
    """The batch's zygote preloads no typer: each session's argv (task_run._session_argv, every
    option a batch passes) must be one the reader takes."""
    from agentica_cli.batch.task_run import RunOptions, _session_argv
    from agentica_cli.batch.tasks import Task

    key = tmp_path / "key"
    key.write_text("k\n")
    options = RunOptions(batch_cwd=str(tmp_path), backoff_file=str(tmp_path / "b"), model="m", provider="ollama",
                         base_url="http://127.0.0.1:1/v1", api_key_file=str(key), sandbox="read-only", max_turns=4)
    task = Task(id="t", prompt="hi", permission_mode="accept-edits")
    argv = _session_argv(task, tmp_path, options, command=("agentica",), in_worktree=True)
    plain = read_plain_command_line(argv[1:])
    assert plain is not None
    assert (plain.model, plain.provider, plain.sandbox, plain.max_turns, plain.permission_mode, plain.work_dir,
            plain.no_checkpoints) == ("m", "ollama", "read-only", 4, "accept-edits", tmp_path, True)


@pytest.mark.parametrize("argv", [
    ["say hi"],  # the REPL with a first prompt
    ["-p", "--worktree", "x"],  # a flag the reader does not know
    ["-p", "--model=m1", "x"],  # --flag=value
    ["-py", "x"],  # short flags bundled
    ["-p", "--model", "a", "--model", "b", "x"],  # twice (typer: the last)
    ["-p", "-p", "x"],
    ["-p", "--", "--not-a-flag"],
    ["-p", "--sandbox", "bogus", "x"],  # typer says what is wrong
    ["-p", "--output-format", "JSON", "x"],
    ["-p", "--max-turns", "three", "x"],
    ["-p", "--model", "-x"],  # a value like a flag
    ["-p", "--max-turns", "-2", "x"],
    ["-p", "--max-tokens", "0", "x"],  # commands._positive refuses it
    ["-p", "--request-timeout", "inf", "x"],  # commands._seconds refuses it
    ["-p", "--reasoning-effort", "huge", "x"],
    ["-p", "--api-key", "-", "x"],  # the key from stdin
    ["-p", "--tools", "code", "x"],
    ["-p", "--allowed-tools", "read_file", "x"],  # rules typer's callback checks
    ["-p", "-c", "--continue", "x"],
    ["-p", "--model"],  # no value
    ["-p", "--model", "", "x"],
    ["-p", "-h"],
    ["-p", "--version"],
    ["-p", "-r"],  # --resume's picker form
    ["-p", "-"],
])
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert read_plain_command_line(list(argv)) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file: typer's readable check passes")
def test_an_existing_path_that_cannot_be_read_is_left_to_typer(tmp_path: Path) -> None:
    locked = tmp_path / "key"
    locked.write_text("k\n")
    locked.chmod(0)
    assert read_plain_command_line(["-p", "--api-key-file", str(locked), "x"]) is None


@pytest.mark.parametrize("raised, message", [(KeyboardInterrupt, ""), (EOFError, "agentica: aborted")])
def test_a_plain_line_ends_as_the_typer_command_does(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str],
                                                     raised: type[BaseException], message: str) -> None:
    def start(_args: object) -> int:
        raise raised()

    monkeypatch.setattr(launch, "start", start)
    through_typer = commands.run(["-p", "--max-cost", "1", "x"])  # not plain: typer's main
    typer_err = capsys.readouterr().err
    plain = _dispatch(["-p", "x"])
    assert plain == through_typer == 130
    assert capsys.readouterr().err == typer_err
    assert message in typer_err


def test_a_plain_p_run_imports_no_typer_and_an_other_one_still_parses(tmp_path: Path) -> None:
    """As a subprocess against the scripted server: a plain line answers without typer loaded;
    a line with a flag the reader does not take goes through typer and answers the same."""
    from cli_support import cli_env

    from agentica_cli.testing import ScriptedModelServer, turns

    key = tmp_path / "key"
    key.write_text("sk-test\n")
    probe = ("import atexit, sys\n"  # at exit: -p ends with os._exit after the atexit functions
             "atexit.register(lambda: sys.stderr.write(f'typer loaded: {\"typer\" in sys.modules}\\n'))\n"
             "sys.argv = ['agentica', *sys.argv[1:]]\nfrom agentica_cli.cli.app import main\nsys.exit(main())\n")
    with ScriptedModelServer([turns.text("plain"), turns.text("typed")]) as server:
        common = ["--base-url", server.base_url, "--api-key-file", str(key), "--model", "m", "--no-session"]
        runs = [subprocess.run([sys.executable, "-c", probe, "-p", *common, *extra, "say it"], cwd=tmp_path,
                               env=cli_env(tmp_path / "home"), stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=120)
                for extra in ([], ["--allowed-tools", "read_file"])]
    assert [(r.returncode, r.stdout.strip()) for r in runs] == [(0, "plain"), (0, "typed")], runs[0].stderr
    assert "typer loaded: False" in runs[0].stderr
    assert "typer loaded: True" in runs[1].stderr


def test_a_closed_stdout_ends_a_plain_line_as_the_typer_command_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """`agentica -p ... | head -1`: the reader went away; both end with 1 and no traceback, their
    streams wrapped so that the last flush at exit says nothing."""
    def start(_args: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(launch, "start", start)
    ends = []
    for run in (lambda: commands.run(["-p", "--worktree", "x"]), lambda: _dispatch(["-p", "x"])):
        monkeypatch.setattr(sys, "stdout", sys.stdout)  # put back after the test, whatever it wraps
        monkeypatch.setattr(sys, "stderr", sys.stderr)
        with pytest.raises(SystemExit) as ended:
            run()
        ends.append(ended.value.code)
        sys.stdout.flush()
    assert ends == [1, 1]


# -- the batch command's own line (cli/batch_start.py) ------------------------------------------


def _typer_batch_args(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, object]:
    import dataclasses

    from agentica_cli.cli import batch_start

    seen: list[object] = []
    monkeypatch.setattr(batch_start, "run_batch_command", lambda args: seen.append(args) or 0)
    assert commands.run(["batch", *argv]) == 0
    return dataclasses.asdict(seen.pop())  # type: ignore[call-overload]


BATCH_READ_PLAINLY = [
    ["tasks.jsonl"],
    ["tasks.jsonl", "--workers", "8", "--output", "out/results.jsonl", "--base-url", "http://127.0.0.1:1/v1",
     "--api-key-file", "/etc/hostname", "--model", "m"],
    ["-j", " 3", "t.jsonl", "-o", "r.jsonl", "-m", "café", "--attempts", "2", "--max-tokens", "1_000",
     "--max-cost", "1e1", "--price-in", "0.5", "--price-out", "2", "--provider", "ollama"],
    ["t.jsonl", "--ray", "auto", "--sandbox", "read-only", "--max-turns", "4", "--no-worktrees", "--plain",
     "--checkpoints"],
    ["t.jsonl", "--sandbox", "bogus"],  # the command itself refuses it, the same either way
    ["no/such/tasks.jsonl", "--max-cost", "0", "--price-in", "0"],
]


@pytest.mark.parametrize("argv", BATCH_READ_PLAINLY)
def test_a_plain_batch_line_reads_as_typer_reads_it(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    import dataclasses

    from agentica_cli.cli.plain_flags import read_plain_batch_line

    plain = read_plain_batch_line(list(argv))
    assert plain is not None
    assert dataclasses.asdict(plain) == _typer_batch_args(monkeypatch, argv)


def test_every_batch_flag_the_reader_takes_is_in_a_line_compared_with_typer() -> None:
    from agentica_cli.cli.plain_flags import _BATCH_SWITCHES, _BATCH_VALUE_FLAGS

    compared = {word for argv in BATCH_READ_PLAINLY for word in argv}
    assert sorted((set(_BATCH_VALUE_FLAGS) | set(_BATCH_SWITCHES)) - compared) == []


@pytest.mark.parametrize("argv", [
    [],  # no tasks file: typer says so
    ["a.jsonl", "b.jsonl"],
    ["t.jsonl", "--workers", "0"],  # _count refuses it
    ["t.jsonl", "--workers", "two"],
    ["t.jsonl", "--max-cost", "-1"],
    ["t.jsonl", "--max-cost", "inf"],
    ["t.jsonl", "--workers=2"],
    ["t.jsonl", "--workers", "2", "--workers", "3"],
    ["t.jsonl", "--plain", "--plain"],
    ["t.jsonl", "--model"],
    ["t.jsonl", "--model", ""],
    ["t.jsonl", "--help"],
    ["t.jsonl", "--no-such-flag"],
    ["t.jsonl", "--", "x"],
    ["-"],
])
def test_any_other_batch_line_is_left_to_typer(argv: list[str]) -> None:
    from agentica_cli.cli.plain_flags import read_plain_batch_line

    assert read_plain_batch_line(list(argv)) is None


def test_a_plain_batch_imports_no_typer_and_an_other_one_still_runs(tmp_path: Path) -> None:
    """As a subprocess against the scripted server: the batch process (and its zygote, a fork of
    it) never loads typer for a plain line; a line with `--workers=1` goes through typer, and
    both run their task to the same result."""
    import json

    from batch_support import make_repository
    from cli_support import cli_env

    from agentica_cli.testing import ScriptedModelServer, turns

    key = tmp_path / "key"
    key.write_text("sk-test\n")
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "t", "prompt": "say done"}) + "\n")
    probe = ("import atexit, os, sys\n"
             "atexit.register(lambda: sys.stderr.write(f'typer loaded: {\"typer\" in sys.modules}\\n'))\n"
             "sys.argv = ['agentica', *sys.argv[1:]]\nfrom agentica_cli.cli.app import main\nsys.exit(main())\n")
    with ScriptedModelServer([turns.text("done"), turns.text("done")]) as server:
        runs = []
        for n, workers in enumerate((["--workers", "1"], ["--workers=1"])):
            runs.append(subprocess.run(
                [sys.executable, "-c", probe, "batch", str(tmp_path / "tasks.jsonl"), *workers, "--output",
                 str(tmp_path / f"r{n}.jsonl"), "--base-url", server.base_url, "--api-key-file", str(key),
                 "--model", "m", "--plain"], cwd=make_repository(tmp_path / f"repo{n}"),
                env=cli_env(tmp_path / f"home{n}"), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=120))
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr[-2000:]
    statuses = [json.loads((tmp_path / f"r{n}.jsonl").read_text())["status"] for n in range(2)]
    assert statuses == ["done", "done"]
    assert "typer loaded: True" not in runs[0].stderr and "typer loaded: False" in runs[0].stderr
    assert "typer loaded: True" in runs[1].stderr
