"""Checkpoints on real git repositories: snapshots in a shadow repo, undo / redo / rewind,
conflicts, and the user's own repository left byte-for-byte alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import collect, scripted_model

from agentica_cli.agent import Decision
from agentica_cli.checkpoints import Checkpoints, conversation_cut, shadow_dir_for
from agentica_cli.deep import DeepAgent
from agentica_cli.testing import turns
from agentica_cli.tools import tool

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def user_repo(tmp_path, agentica_home):
    """A project that is a git repository with a commit, a stash, a branch and a staged change."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "old.txt").write_text("old\n")
    (project / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (project / "run.sh").chmod(0o755)
    (project / ".gitignore").write_text("build/\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "-c", "user.name=u", "-c", "user.email=u@x", "add", ".")
    git(project, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "init")
    git(project, "branch", "feature")
    (project / "old.txt").write_text("stashed\n")
    git(project, "-c", "user.name=u", "-c", "user.email=u@x", "stash", "-q")
    (project / "staged.txt").write_text("staged\n")
    git(project, "add", "staged.txt")
    return project


def repo_state(project: Path) -> dict[str, object]:
    """What the user's repository looks like, byte for byte where it matters. The index is
    read first and `git status` is told not to refresh it, so only our code could change it."""
    index = (project / ".git" / "index").read_bytes()
    return {
        "index": index,
        "status": git(project, "--no-optional-locks", "status", "--porcelain"),
        "stash": git(project, "stash", "list"),
        "head": git(project, "rev-parse", "HEAD"),
        "branches": git(project, "branch", "-a"),
        "git_files": sorted(str(p.relative_to(project / ".git")) for p in (project / ".git").rglob("*")),
    }


def change_files(project: Path) -> None:
    """What a turn does: an edit, a new file, a deletion, a mode change."""
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "sub").mkdir()
    (project / "sub" / "new.txt").write_text("x\n")
    (project / "old.txt").unlink()
    (project / "run.sh").chmod(0o644)


def files_of(project: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(project)): (p.read_bytes(), p.stat().st_mode & 0o777)
            for p in project.rglob("*") if p.is_file() and ".git" not in p.relative_to(project).parts}


def test_undo_and_redo_a_turn_leave_the_users_repository_alone(user_repo):
    before_repo, before_files = repo_state(user_repo), files_of(user_repo)
    checkpoints = Checkpoints(user_repo, session_id="s1")
    start = checkpoints.begin_turn("fix it", 0)
    assert start is not None and start.label == "turn_start"
    change_files(user_repo)
    step = checkpoints.snapshot()
    assert step is not None and set(step.files) == {"calc.py", "sub/new.txt", "old.txt", "run.sh"}
    checkpoints.end_turn(take_snapshot=False)
    after_files = files_of(user_repo)
    assert checkpoints.turns()[0].files == ["calc.py", "old.txt", "run.sh", "sub/new.txt"]

    undone = checkpoints.undo()
    assert undone.done and undone.conflicts == []
    assert files_of(user_repo) == before_files  # content and modes
    assert not (user_repo / "sub").exists()  # the folder the turn made went with its file
    assert repo_state(user_repo) == before_repo

    redone = checkpoints.redo()
    assert redone.done
    assert files_of(user_repo) == after_files
    assert not checkpoints.redo().done  # nothing more to redo

    # The project got no new file of ours, and the shadow repository is private.
    assert sorted(p.name for p in user_repo.iterdir()) == [".git", ".gitignore", "calc.py", "run.sh",
                                                            "staged.txt", "sub"]
    shadow = shadow_dir_for(user_repo)
    assert shadow.is_dir() and shadow.stat().st_mode & 0o777 == 0o700


def test_an_inherited_git_dir_cannot_redirect_the_snapshots(user_repo, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(user_repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(user_repo / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(user_repo))
    before = repo_state(user_repo)
    checkpoints = Checkpoints(user_repo, session_id="s1")
    checkpoints.begin_turn("x")
    change_files(user_repo)
    checkpoints.end_turn()
    assert checkpoints.undo().done
    for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        monkeypatch.delenv(name)
    assert repo_state(user_repo) == before


def test_a_file_the_user_changed_after_the_turn_is_a_conflict(user_repo):
    checkpoints = Checkpoints(user_repo, session_id="s1")
    checkpoints.begin_turn("edit")
    (user_repo / "calc.py").write_text("agent's version\n")
    checkpoints.end_turn()
    (user_repo / "calc.py").write_text("the user's version\n")

    refused = checkpoints.undo()
    assert not refused.done and refused.conflicts == ["calc.py"]
    assert (user_repo / "calc.py").read_text() == "the user's version\n"  # nothing lost

    forced = checkpoints.undo(force=True)
    assert forced.done and forced.conflicts == ["calc.py"]
    assert (user_repo / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_a_folder_that_is_not_a_git_repository_works_the_same(tmp_path, agentica_home):
    project = tmp_path / "plain"
    project.mkdir()
    (project / "calc.py").write_text("v1\n")
    (project / "old.txt").write_text("old\n")
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o755)
    before = files_of(project)
    checkpoints = Checkpoints(project, session_id="s1")
    checkpoints.begin_turn("go")
    change_files(project)
    checkpoints.end_turn()
    assert checkpoints.undo().done
    assert files_of(project) == before
    assert sorted(p.name for p in project.iterdir()) == ["calc.py", "old.txt", "run.sh"]


def test_ignored_and_oversized_files_are_left_out(user_repo):
    checkpoints = Checkpoints(user_repo, session_id="s1", max_file_size=1000)
    checkpoints.begin_turn("build")
    (user_repo / "build").mkdir()
    (user_repo / "build" / "out.bin").write_bytes(b"\0" * 10)
    (user_repo / "big.log").write_bytes(b"x" * 5000)
    (user_repo / "calc.py").write_text("changed\n")
    info = checkpoints.snapshot()
    checkpoints.end_turn(take_snapshot=False)
    assert info is not None and info.skipped == ["big.log"]
    assert "big.log" in info.note and "larger than 1,000 bytes" in info.note
    again = checkpoints.snapshot()
    assert again is not None and again.skipped == ["big.log"] and again.note == ""  # told once
    assert checkpoints.turns()[0].files == ["calc.py"]
    assert "big.log" not in checkpoints.diff() and "changed" in checkpoints.diff(1)
    assert checkpoints.undo().done
    assert (user_repo / "big.log").exists() and (user_repo / "build" / "out.bin").exists()


def test_rewind_restores_every_later_turn_and_finds_the_conversation_cut(user_repo):
    checkpoints = Checkpoints(user_repo, session_id="s1")
    messages: list[dict[str, str]] = []
    for number, text in enumerate(["one\n", "two\n", "three\n"], 1):
        checkpoints.begin_turn(f"prompt {number}", len(messages))
        messages += [{"role": "user", "content": f"prompt {number}"}, {"role": "assistant", "content": "ok"}]
        (user_repo / "calc.py").write_text(text)
        (user_repo / f"file{number}.txt").write_text(text)
        checkpoints.end_turn()
    second = checkpoints.turns()[1]
    result = checkpoints.rewind(2)
    assert result.done and result.files == ["calc.py", "file2.txt", "file3.txt"]
    assert (user_repo / "calc.py").read_text() == "one\n"
    assert not (user_repo / "file2.txt").exists() and not (user_repo / "file3.txt").exists()
    assert conversation_cut(messages, second) == 2
    # after a compaction the recorded index is stale: the prompt is found by its text
    assert conversation_cut([{"role": "user", "content": "summary"}, *messages[2:]], second) == 1
    assert conversation_cut(messages[4:], second) is None
    # a resumed session (a new Checkpoints object) sees the same turns; redo brings turn 2 back
    again = Checkpoints(user_repo, session_id="s1")
    assert [t.undone for t in again.turns()] == [False, True, True]
    assert again.redo().done and (user_repo / "calc.py").read_text() == "two\n"
    # a new turn drops the turns that were undone
    again.begin_turn("prompt 4")
    assert [t.number for t in again.turns()] == [1, 2, 3]


def test_pruning_forgets_old_sessions_and_their_snapshots(user_repo):
    for number in range(4):
        checkpoints = Checkpoints(user_repo, session_id=f"s{number}", keep_sessions=2)
        checkpoints.begin_turn("x")
        (user_repo / "calc.py").write_text(f"version {number}\n")
        checkpoints.end_turn()
        journal = shadow_dir_for(user_repo) / "sessions" / f"s{number}.json"
        os.utime(journal, (time.time() - 100 + number,) * 2)  # s3 newest
    gone = checkpoints.prune()
    assert sorted(gone) == ["s0", "s1"]
    shadow = shadow_dir_for(user_repo)
    assert sorted(p.name for p in (shadow / "sessions").iterdir()) == ["s2.json", "s3.json"]
    refs = subprocess.run(["git", "--git-dir", str(shadow), "for-each-ref", "--format=%(refname)"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert refs == ["refs/agentica/s2", "refs/agentica/s3"]
    assert not (shadow / "index-s0").exists()


def test_a_deep_agent_turn_with_edit_file_and_shell_commands_is_undone_and_redone(scripted, user_repo):
    before_repo, before_files = repo_state(user_repo), files_of(user_repo)
    server = scripted(
        turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r0")),
        turns.tool_calls(turns.call("edit_file", {"file_path": "calc.py", "old_string": "a - b",
                                                  "new_string": "a + b"}, id="e")),
        turns.tool_calls(turns.call("execute", {"command": "echo x > new.txt"}, id="x1")),
        turns.tool_calls(turns.call("execute", {"command": "rm old.txt"}, id="x2")),
        turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r")),
        turns.text("Done."),
    )
    checkpoints = Checkpoints(user_repo, session_id="s1")
    agent = DeepAgent(scripted_model(server), work_dir=user_repo, exclude_tools=("task",),
                      approve=lambda call: Decision.allow(), checkpoints=checkpoints)
    events = []

    async def run():
        async for event in agent.run_stream("fix add, add new.txt, drop old.txt"):
            events.append(event)

    import asyncio

    asyncio.run(run())
    marks = [(e.label, e.files) for e in events if e.type == "checkpoint"]
    # a snapshot at the start and after each step with a call that is not read-only (not after read_file)
    assert marks == [("turn_start", []), ("step", ["calc.py"]), ("step", ["new.txt"]), ("step", ["old.txt"])]
    after_files = files_of(user_repo)
    assert (user_repo / "new.txt").read_text() == "x\n" and not (user_repo / "old.txt").exists()
    assert checkpoints.turns()[0].files == ["calc.py", "new.txt", "old.txt"]

    assert checkpoints.undo().done
    assert files_of(user_repo) == before_files
    assert repo_state(user_repo) == before_repo
    assert checkpoints.redo().done
    assert files_of(user_repo) == after_files


def test_a_new_session_starts_from_the_latest_sessions_index(user_repo):
    first = Checkpoints(user_repo, session_id="a")
    first.begin_turn("x")
    first.end_turn()
    second = Checkpoints(user_repo, session_id="b")
    repo = second.repo  # set up, no snapshot yet
    assert repo.index.read_bytes() == (repo.git_dir / "index-a").read_bytes()
    assert repo.pending() == []  # nothing to hash again: the stat cache came along
    (user_repo / "calc.py").write_text("changed\n")
    assert repo.pending() == ["calc.py"]


def test_undo_never_removes_a_file_through_a_folder_swapped_for_a_symlink(user_repo, tmp_path):
    from agentica_cli.checkpoints import CheckpointError

    checkpoints = Checkpoints(user_repo, session_id="s1")
    checkpoints.begin_turn("make sub/new.txt")
    (user_repo / "sub").mkdir()
    (user_repo / "sub" / "new.txt").write_text("x\n")
    checkpoints.end_turn()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "new.txt").write_text("x\n")  # the same content: only the folder differs
    shutil.rmtree(user_repo / "sub")
    (user_repo / "sub").symlink_to(outside)

    assert checkpoints.undo().conflicts == ["sub/new.txt"]  # asked first
    assert checkpoints.undo(force=True).done
    assert (outside / "new.txt").read_text() == "x\n"  # git sees a symlink, not a folder to empty
    assert (user_repo / "sub").is_symlink()
    with pytest.raises(CheckpointError, match="leads outside the project"):
        checkpoints.repo._remove("sub/new.txt")  # and the removal itself refuses to follow it
    assert (outside / "new.txt").read_text() == "x\n"


def test_pruning_removes_projects_not_used_for_keep_days(user_repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "f.txt").write_text("x\n")
    old = Checkpoints(other, session_id="s")
    old.begin_turn("x")
    old_shadow = shadow_dir_for(other)
    os.utime(old_shadow / "HEAD", (time.time() - 40 * 86400,) * 2)  # last used 40 days ago

    current = Checkpoints(user_repo, session_id="s", keep_days=30)
    current.begin_turn("y")
    current.prune()
    assert not old_shadow.exists()
    assert shadow_dir_for(user_repo).is_dir()


def test_the_turns_first_snapshot_runs_during_the_first_request_and_ends_before_any_tool(user_repo):
    """The snapshot at a turn's start does not hold the first request back (git work in the
    model's waiting time), yet no tool of the turn runs before it is complete."""
    import asyncio
    import threading

    from agentica_cli.agent import Agent
    from agentica_cli.testing import ScriptedModelServer

    request_arrived = threading.Event()
    seen: dict[str, bool] = {}

    class WatchedCheckpoints(Checkpoints):
        def begin_turn(self, prompt, message_index=0, **options):
            # Old order (snapshot, then request): the request cannot arrive while this waits.
            seen["request_during_snapshot"] = request_arrived.wait(10)
            time.sleep(0.3)  # still busy when the answer is in: the loop must wait here
            info = super().begin_turn(prompt, message_index, **options)
            seen["snapshot_done"] = True
            return info

    def first_answer(body):
        request_arrived.set()
        return turns.tool_calls(turns.call("touch", {"name": "made.txt"}, id="t1"))

    def touch(name: str) -> str:
        """Create a file.

        Args:
            name: the file
        """
        seen["snapshot_done_when_tool_ran"] = seen.get("snapshot_done", False)
        (user_repo / name).write_text("made\n")
        return "ok"

    with ScriptedModelServer([first_answer, turns.text("Done.")]) as server:
        checkpoints = WatchedCheckpoints(user_repo, session_id="overlap")
        agent = Agent(scripted_model(server), tools=[touch], checkpoints=checkpoints)
        events = asyncio.run(collect(agent, "make a file"))
    assert seen == {"request_during_snapshot": True, "snapshot_done": True, "snapshot_done_when_tool_ran": True}
    marks = [(e.label, e.files) for e in events if e.type == "checkpoint"]
    assert marks == [("turn_start", []), ("step", ["made.txt"])]
    assert checkpoints.undo().done and not (user_repo / "made.txt").exists()


def test_the_journal_file_holds_each_turn_as_written_and_the_turns_put_into_it_are_copies(user_repo):
    import json

    checkpoints = Checkpoints(user_repo, session_id="s1")
    checkpoints.begin_turn("修复 add ✓", message_index=3)
    (user_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    checkpoints.end_turn()
    raw = (shadow_dir_for(user_repo) / "sessions" / "s1.json").read_text(encoding="utf-8")
    assert "修复 add ✓" in raw  # the prompt as typed, not \\u escapes
    [turn] = json.loads(raw)["turns"]
    assert turn["prompt"] == "修复 add ✓" and turn["message_index"] == 3 and turn["number"] == 1
    assert turn["files"] == ["calc.py"] and turn["outside"] == [] and turn["after"] and not turn["undone"]
    listed = checkpoints.turns()
    listed[0].files = ["calc.py", "put back"]
    checkpoints._put_turns(listed)
    listed[0].files.append("changed after it was put back")
    assert checkpoints.journal["turns"][0]["files"] == ["calc.py", "put back"]


def test_the_turn_start_journal_is_on_disk_before_a_tool_that_may_change_files_runs(user_repo):
    """The loop waits for the turn-start scan only and the journal is written after it on the
    worker: still before any tool that is not read-only, so a crash in that tool leaves a
    journal from which /undo can put the turn back."""
    import asyncio
    import json

    from agentica_cli.agent import Agent
    from agentica_cli.testing import ScriptedModelServer

    journal = shadow_dir_for(user_repo) / "sessions" / "durable.json"
    seen: dict[str, object] = {}

    def on_disk() -> list[dict]:
        return json.loads(journal.read_text(encoding="utf-8"))["turns"] if journal.exists() else []

    def look(name: str) -> str:
        """Read a file.

        Args:
            name: the file
        """
        return (user_repo / name).read_text()

    def touch(name: str) -> str:
        """Create a file.

        Args:
            name: the file
        """
        seen["turns_on_disk"] = [(t["number"], t["prompt"], bool(t["before"]), t["after"]) for t in on_disk()]
        (user_repo / name).write_text("made\n")
        return "ok"

    script = [turns.tool_calls(turns.call("look", {"name": "calc.py"}, id="l1")),
              turns.tool_calls(turns.call("touch", {"name": "made.txt"}, id="t1")),
              turns.text("Done.")]
    with ScriptedModelServer(script) as server:
        checkpoints = Checkpoints(user_repo, session_id="durable")
        agent = Agent(scripted_model(server), tools=[tool(name="look", is_read_only=True)(look), touch],
                      checkpoints=checkpoints)
        events = asyncio.run(collect(agent, "make a file"))
    assert seen["turns_on_disk"] == [(1, "make a file", True, "")]  # the running turn, recorded
    marks = [(e.label, e.files) for e in events if e.type == "checkpoint"]
    assert marks == [("turn_start", []), ("step", ["made.txt"])]
    [turn] = on_disk()
    assert turn["after"] and turn["files"] == ["made.txt"]
    assert checkpoints.undo().done and not (user_repo / "made.txt").exists()
