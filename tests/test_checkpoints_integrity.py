"""Checkpoints that must not lie: a folder replaced by a symlink, a snapshot that fails, a
lock file left by a git that died, files someone else changed while the turn ran, and
`agentica --undo` / `--redo` saying exactly what they did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import model_args, run_cli

from agentica_cli.checkpoints import Checkpoints, shadow_dir_for
from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")

SWAP_TO_A_LINK = "rm -rf src && mv docs docs.v1 && ln -s /usr/share/doc docs"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    project = tmp_path / "tree"
    (project / "src").mkdir(parents=True)
    (project / "src" / "important.py").write_text("KEEP = True\n")
    (project / "docs").mkdir()
    (project / "docs" / "guide.md").write_text("# guide\n")
    (project / "notes.txt").write_text("notes\n")
    return project


def test_a_folder_replaced_by_a_symlink_is_recorded_and_undone(tree, agentica_home):
    checkpoints = Checkpoints(tree, session_id="s1")
    checkpoints.begin_turn("reorganise")
    subprocess.run(SWAP_TO_A_LINK, shell=True, cwd=tree, check=True)
    step = checkpoints.snapshot()
    assert step is not None and set(step.files) == {"src/important.py", "docs", "docs/guide.md", "docs.v1/guide.md"}
    checkpoints.end_turn(take_snapshot=False)
    assert checkpoints.turns()[0].files == ["docs", "docs.v1/guide.md", "docs/guide.md", "src/important.py"]
    assert not checkpoints.disabled

    undone = checkpoints.undo()
    assert undone.done
    assert (tree / "src" / "important.py").read_text() == "KEEP = True\n"
    assert not (tree / "docs").is_symlink() and (tree / "docs" / "guide.md").read_text() == "# guide\n"
    assert not (tree / "docs.v1").exists()
    assert checkpoints.redo().done
    assert (tree / "docs").is_symlink() and not (tree / "src").exists()


class HeldLock:
    """A lock file some live process holds open, as a git at work does."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        self.path = path
        self.proc = subprocess.Popen([sys.executable, "-c", "import sys, time\nf = open(sys.argv[1])\n"
                                      "print('held', flush=True)\ntime.sleep(120)", str(path)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.path.unlink(missing_ok=True)


def test_a_failed_snapshot_is_told_and_the_turn_is_never_reported_undone(tree, agentica_home):
    checkpoints = Checkpoints(tree, session_id="s1")
    checkpoints.begin_turn("first")
    (tree / "notes.txt").write_text("turn 1\n")
    checkpoints.end_turn()
    checkpoints.begin_turn("second")
    (tree / "src" / "important.py").write_text("turn 2\n")
    held = HeldLock(checkpoints.repo.index.with_name(checkpoints.repo.index.name + ".lock"))
    try:
        assert checkpoints.snapshot() is None
        assert "snapshot failed" in checkpoints.disabled and str(held.path) in checkpoints.disabled
    finally:
        held.release()

    again = Checkpoints(tree, session_id="s1")  # as `agentica --undo` would, later
    refused = again.undo()
    assert not refused.done and refused.turn.number == 2
    assert "cannot be undone: its snapshot failed" in refused.reason
    assert (tree / "notes.txt").read_text() == "turn 1\n"  # turn 1 was not undone in its place
    assert not again.rewind(1).done


def test_a_stale_lock_is_removed_and_a_live_one_is_named(tree, agentica_home):
    first = Checkpoints(tree, session_id="s1")
    first.begin_turn("x")
    (tree / "notes.txt").write_text("changed\n")
    first.end_turn()
    lock = first.repo.index.with_name(first.repo.index.name + ".lock")
    lock.write_text("")  # what a git killed with agentica leaves behind
    old = time.time() - 60
    os.utime(lock, (old, old))

    later = Checkpoints(tree, session_id="s1")
    later.begin_turn("y")
    (tree / "notes.txt").write_text("changed again\n")
    later.end_turn()
    assert not later.disabled and not lock.exists()
    assert later.turns()[-1].files == ["notes.txt"]

    held = HeldLock(lock)
    try:
        busy = Checkpoints(tree, session_id="s1")
        (tree / "notes.txt").write_text("a third version\n")
        with pytest.raises(Exception, match=f"the lock file {lock} exists"):
            busy.current()
        assert lock.exists()  # not taken from a live git
    finally:
        held.release()


def test_files_changed_by_someone_else_during_the_turn_are_conflicts_or_left_alone(tree, agentica_home):
    checkpoints = Checkpoints(tree, session_id="s1")
    checkpoints.begin_turn("edit notes")
    # while the model thinks: the user creates a file and edits one the agent will edit too
    (tree / "mine.txt").write_text("the user's new file\n")
    (tree / "notes.txt").write_text("the user's edit\n")
    checkpoints.before_tools()
    (tree / "notes.txt").write_text("the user's edit\nand the agent's line\n")  # the agent's tool step
    (tree / "src" / "important.py").write_text("KEEP = False\n")
    checkpoints.snapshot()
    checkpoints.end_turn(take_snapshot=False)
    turn = checkpoints.turns()[0]
    assert turn.files == ["notes.txt", "src/important.py"] and turn.outside == ["mine.txt", "notes.txt"]

    refused = checkpoints.undo()
    assert not refused.done and refused.conflicts == ["notes.txt"] and refused.during == ["notes.txt"]
    assert (tree / "src" / "important.py").read_text() == "KEEP = False\n"  # nothing touched

    forced = checkpoints.undo(force=True)
    assert forced.done and forced.left_alone == ["mine.txt"]
    assert (tree / "notes.txt").read_text() == "notes\n"
    assert (tree / "src" / "important.py").read_text() == "KEEP = True\n"
    assert (tree / "mine.txt").read_text() == "the user's new file\n"  # not the turn's: still there


def test_the_loop_tells_the_users_edits_while_the_model_thinks_from_the_agents(scripted, tree, agentica_home):
    """A real turn: the agent's commands in two steps; while the model prepares the second
    (the scripted server's turn runs when the request arrives), the user creates a file and
    edits one the agent then edits too."""
    import asyncio

    from conftest import scripted_model

    from agentica_cli.agent import Decision
    from agentica_cli.deep import DeepAgent

    def user_edits_while_the_model_thinks(body):  # type: ignore[no-untyped-def]
        (tree / "mine.txt").write_text("the user's new file\n")
        (tree / "notes.txt").write_text("the user's edit\n")
        return turns.tool_calls(turns.call("execute", {"command": "echo agent >> notes.txt"}, id="x2"))

    server = scripted(
        turns.tool_calls(turns.call("execute", {"command": "echo made > made.txt"}, id="x1")),
        user_edits_while_the_model_thinks,
        turns.text("Done."),
    )
    checkpoints = Checkpoints(tree, session_id="s1")
    agent = DeepAgent(scripted_model(server), work_dir=tree, exclude_tools=("task",),
                      approve=lambda call: Decision.allow(), checkpoints=checkpoints)
    asyncio.run(agent.run("make things"))
    turn = checkpoints.turns()[0]
    assert turn.files == ["made.txt", "notes.txt"] and turn.outside == ["mine.txt", "notes.txt"]

    refused = checkpoints.undo()
    assert not refused.done and refused.conflicts == refused.during == ["notes.txt"]
    assert (tree / "made.txt").exists()
    forced = checkpoints.undo(force=True)
    assert forced.done and forced.files == ["made.txt", "notes.txt"] and forced.left_alone == ["mine.txt"]
    assert not (tree / "made.txt").exists() and (tree / "notes.txt").read_text() == "notes\n"
    assert (tree / "mine.txt").read_text() == "the user's new file\n"


# -- the command line ------------------------------------------------------------------------------


def agent_turn(project: Path, home: Path, command: str) -> dict:
    script = [turns.tool_calls(turns.call("execute", {"command": command}, id="x")), turns.text("Done.")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "do it", "-y", "--output-format", "json", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_undo_restores_a_folder_replaced_by_a_symlink_and_redo_brings_the_change_back(home: Path, tree: Path):
    result = agent_turn(tree, home, SWAP_TO_A_LINK)
    assert result["files_changed"] == ["docs", "docs.v1/guide.md", "docs/guide.md", "src/important.py"]

    undo = run_cli(["--undo"], cwd=tree, home=home)
    assert undo.returncode == 0, undo.stderr
    assert "Undid turn 1" in undo.stdout and "src/important.py" in undo.stdout
    assert (tree / "src" / "important.py").read_text() == "KEEP = True\n"
    assert not (tree / "docs").is_symlink()

    redo = run_cli(["--redo", "--output-format", "json"], cwd=tree, home=home)
    assert redo.returncode == 0, redo.stderr
    payload = json.loads(redo.stdout)
    assert payload["type"] == "redo" and payload["done"] and payload["turn"] == 1
    assert (tree / "docs").is_symlink() and not (tree / "src").exists()
    nothing = run_cli(["--redo"], cwd=tree, home=home)
    assert nothing.returncode == 1 and "nothing to redo" in nothing.stderr
    both = run_cli(["--undo", "--redo"], cwd=tree, home=home)
    assert both.returncode == 2


def test_undo_names_a_live_lock_file_and_refuses_a_turn_whose_snapshot_failed(home: Path, tree: Path,
                                                                               monkeypatch):
    agent_turn(tree, home, "echo one > notes.txt")
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    shadow = shadow_dir_for(tree)
    locks = []
    try:
        index = next(shadow.glob("index-*"))
        locks.append(HeldLock(index.with_name(index.name + ".lock")))
        script = [turns.tool_calls(turns.call("execute", {"command": "echo two > notes.txt"}, id="x")),
                  turns.text("Done.")]
        with ScriptedModelServer(script) as server:
            proc = run_cli(["-p", "again", "-y", "-c", *model_args(server)], cwd=tree, home=home)
        assert proc.returncode == 0, proc.stderr
        assert "checkpoints are off: the snapshot failed" in proc.stderr and str(locks[0].path) in proc.stderr
    finally:
        for held in locks:
            held.release()
    undo = run_cli(["--undo"], cwd=tree, home=home)
    assert undo.returncode == 1
    assert "turn 2 cannot be undone: its snapshot failed" in undo.stderr
    assert "Undid" not in undo.stdout
    assert (tree / "notes.txt").read_text() == "two\n"


def test_a_new_checkpoints_object_keeps_the_sessions_ref_and_moves_it_with_a_new_snapshot(tree, agentica_home,
                                                                                        monkeypatch):
    first = Checkpoints(tree, session_id="s1")
    first.begin_turn("one")
    first.end_turn()
    again = Checkpoints(tree, session_id="s1")  # e.g. the next `-p` run of the session
    calls: list[tuple[str, ...]] = []
    run = type(again.repo).run

    def counted(self, *args, **kwargs):
        calls.append(args)
        return run(self, *args, **kwargs)

    monkeypatch.setattr(type(again.repo), "run", counted)
    ref_file = shadow_dir_for(tree) / "refs" / "agentica" / "s1"
    written = ref_file.stat().st_ino
    again.begin_turn("two, nothing changed")
    assert not [c for c in calls if c[0] == "update-ref"]  # the ref already holds the last snapshot:
    assert ref_file.stat().st_ino == written  # not even rewritten
    before = again.journal["last"]
    (tree / "notes.txt").write_text("changed\n")
    again.snapshot()
    again.end_turn()
    ref = subprocess.run(["git", "--git-dir", str(shadow_dir_for(tree)), "rev-parse", "refs/agentica/s1"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert ref == again.journal["last"] != before  # moved (written as git's loose ref: shadow_files.write_ref)
    assert again.undo().files == ["notes.txt"]
