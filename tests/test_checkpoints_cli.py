"""Checkpoints headless: `agentica -p` snapshots and reports the files its turn changed;
`agentica --undo` puts them back from a script, refusing to overwrite the user's changes
without --force."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import cli_env, model_args, run_cli

from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text("hello\n")
    (path / "old.txt").write_text("old\n")
    return path


def shell_turn() -> list:
    return [
        turns.tool_calls(turns.call("execute", {"command": "echo x > new.txt; rm old.txt; echo bye > notes.txt"},
                                    id="x")),
        turns.text("Changed."),
    ]


def run_turn(project: Path, home: Path, *extra: str) -> dict:
    with ScriptedModelServer(shell_turn()) as server:
        proc = run_cli(["-p", "change things", "-y", "--output-format", "json", *model_args(server), *extra],
                       cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_result_lists_the_files_the_turn_changed_and_undo_restores_them(home: Path, project: Path) -> None:
    result = run_turn(project, home)
    assert result["turn"] == 1 and result["files_changed"] == ["new.txt", "notes.txt", "old.txt"]
    assert not (project / "old.txt").exists()

    undo = run_cli(["--undo"], cwd=project, home=home)
    assert undo.returncode == 0, undo.stderr
    assert f"Undid turn 1 of session {result['session_id']}" in undo.stdout and "new.txt" in undo.stdout
    assert (project / "notes.txt").read_text() == "hello\n" and (project / "old.txt").read_text() == "old\n"
    assert not (project / "new.txt").exists()
    assert sorted(p.name for p in project.iterdir()) == ["notes.txt", "old.txt"]  # nothing of ours in the project

    again = run_cli(["--undo"], cwd=project, home=home)
    assert again.returncode == 1 and "nothing to undo" in again.stderr


def test_undo_refuses_to_overwrite_a_changed_file_without_force(home: Path, project: Path) -> None:
    first = run_turn(project, home)
    run_turn(project, home, "--no-session")  # a later session elsewhere does not count: --resume picks
    (project / "notes.txt").write_text("my own edit\n")

    refused = run_cli(["--undo", "--resume", first["session_id"], "--output-format", "json"], cwd=project, home=home)
    assert refused.returncode == 1
    assert "notes.txt" in refused.stderr and "--force" in refused.stderr
    payload = json.loads(refused.stdout)
    assert payload["done"] is False and payload["conflicts"] == ["notes.txt"]
    assert (project / "notes.txt").read_text() == "my own edit\n"

    forced = run_cli(["--undo", "--resume", first["session_id"], "--force"], cwd=project, home=home)
    assert forced.returncode == 0, forced.stderr
    assert (project / "notes.txt").read_text() == "hello\n" and (project / "old.txt").exists()


def test_stream_json_has_checkpoint_events(home: Path, project: Path) -> None:
    with ScriptedModelServer(shell_turn()) as server:
        proc = run_cli(["-p", "go", "-y", "--output-format", "stream-json", *model_args(server)],
                       cwd=project, home=home)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    marks = [(e["label"], e["files"]) for e in events if e["type"] == "checkpoint"]
    assert marks == [("turn_start", []), ("step", ["new.txt", "notes.txt", "old.txt"])]
    assert events[-1]["files_changed"] == ["new.txt", "notes.txt", "old.txt"]


def test_checkpoints_can_be_turned_off(home: Path, project: Path) -> None:
    (home / "config.toml").write_text("[checkpoints]\nenabled = false\n")
    result = run_turn(project, home)
    assert result["turn"] is None and result["files_changed"] == []
    assert not (home / "checkpoints").exists()
    undo = run_cli(["--undo"], cwd=project, home=home)
    assert undo.returncode == 2 and "checkpoints are off" in undo.stderr


def test_force_without_undo_and_a_bad_setting_are_usage_errors(home: Path, project: Path) -> None:
    assert run_cli(["--force"], cwd=project, home=home).returncode == 2
    (home / "config.toml").write_text("[checkpoints]\nmax_file_size = -1\n")
    bad = run_cli(["--undo"], cwd=project, home=home)
    assert bad.returncode == 2 and "checkpoints.max_file_size" in bad.stderr


def test_large_files_are_noted_and_without_git_only_file_tools_are_covered(
    home: Path, project: Path, tmp_path: Path
) -> None:
    (home / "config.toml").write_text("[checkpoints]\nmax_file_size = 100\n")
    (project / "big.bin").write_bytes(b"x" * 500)
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0 and "Left out of checkpoints" in proc.stderr and "big.bin" in proc.stderr

    empty = tmp_path / "no-programs"
    empty.mkdir()
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home, env=cli_env(home, PATH=str(empty)))
    assert proc.returncode == 0 and proc.stdout == "ok\n"
    assert "no git program found: checkpoints cover only the file tools' edits" in proc.stderr
