"""Checkpoints without git: copies of the files the file tools change (FileBackups)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from cli_support import cli_env, model_args, run_cli
from conftest import scripted_model

from agentica_cli.agent import Decision
from agentica_cli.app.checkpoint_setup import attach_checkpoints
from agentica_cli.checkpoints.backups import NO_GIT_NOTE, FileBackups
from agentica_cli.deep import DeepAgent
from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "home"))
    path = tmp_path / "proj"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (path / "run.sh").write_text("#!/bin/sh\n")
    (path / "run.sh").chmod(0o755)
    return path


def test_file_tool_edits_are_undone_and_redone_and_shell_changes_are_not_covered(scripted, project):
    server = scripted(
        turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "calc.py", "old_string": "a - b",
                                                  "new_string": "a + b"}, id="e"),
                         turns.call("write_file", {"file_path": "pkg/new.py", "content": "x = 1\n"}, id="w")),
        turns.tool_calls(turns.call("execute", {"command": "echo s > shell.txt"}, id="x")),
        turns.text("Done."),
    )
    backups = FileBackups(project, session_id="s1")
    agent = DeepAgent(scripted_model(server), work_dir=project, exclude_tools=("task",),
                      approve=lambda call: Decision.allow())
    attach_checkpoints(agent, backups)

    async def run():
        return [event async for event in agent.run_stream("change")]

    events = asyncio.run(run())
    assert [e.message for e in events if e.type == "notice"] == [NO_GIT_NOTE]
    assert backups.turns()[0].files == ["calc.py", "pkg/new.py"]
    assert "+    return a + b" in backups.diff(1)

    assert backups.undo().done
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert not (project / "pkg" / "new.py").exists()
    assert (project / "shell.txt").exists()  # a shell command's change is not covered without git
    assert backups.redo().done
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (project / "pkg" / "new.py").read_text() == "x = 1\n"

    (project / "calc.py").write_text("mine\n")
    refused = backups.undo()
    assert not refused.done and refused.conflicts == ["calc.py"]
    assert (project / "calc.py").read_text() == "mine\n"


def test_without_git_the_cli_still_undoes_file_edits(tmp_path: Path, home: Path, project: Path) -> None:
    empty = tmp_path / "no-programs"  # a PATH without git
    empty.mkdir()
    env = cli_env(home, PATH=str(empty))
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r")),
              turns.tool_calls(turns.call("write_file", {"file_path": "calc.py", "content": "new\n"}, id="w")),
              turns.text("Rewrote it.")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "rewrite", "-y", "--output-format", "json", *model_args(server)],
                       cwd=project, home=home, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files_changed"] == ["calc.py"]
    assert (project / "calc.py").read_text() == "new\n"
    undo = run_cli(["--undo"], cwd=project, home=home, env=env)
    assert undo.returncode == 0, undo.stderr
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
