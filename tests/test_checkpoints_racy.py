"""Checkpoints and git's "racily clean" files: git compares mtimes in whole seconds, so it
re-reads every file modified in the second its index was written, on every scan. After a
snapshot that leaves many of them, the shadow index is refreshed a second later so that
scans trust the stat data again; and a change made in that same second, one that stat data
alone cannot show (same size, same inode, same mtime second), is still never missed: not by
the next turn's snapshot after the refresh, not by a new session starting from the index."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from agentica_cli.checkpoints import Checkpoints
from agentica_cli.checkpoints.shadow import RACY_REFRESH_FILES

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")

MANY = RACY_REFRESH_FILES + 20


def at_the_start_of_a_second() -> int:
    """Sleep until a new second has just begun (so that what follows fits in it); that second."""
    time.sleep(1.0 - time.time() % 1.0 + 0.01)
    return int(time.time())


def index_second(checkpoints: Checkpoints) -> int:
    return int(checkpoints.repo.index.stat().st_mtime)


def edit_in_place(path: Path, text: str) -> None:
    """Rewrite the same inode with text of the same size: only the content differs."""
    assert len(text) == len(path.read_text())
    with open(path, "r+") as fh:
        fh.write(text)


def racy_turn(checkpoints: Checkpoints, project: Path, *, files: int = MANY, edit: int | None = None) -> int:
    """A turn whose end snapshot adds `files` files modified in the second that snapshot's
    index is written in (as an agent's or a generator's fresh files are); that second. With
    `edit`, file number `edit` is then edited in place in that same second (by the user,
    between turns): same size, same inode, so only git's racy rule can see the change.
    Tried again when the machine is too slow (a busy one) to do it all within one second;
    the files are written first and only touched in that second, to keep it short."""
    names = [project / "gen" / f"mod_{i}.py" for i in range(files)]
    (project / "gen").mkdir(exist_ok=True)
    for attempt in range(10):
        checkpoints.begin_turn("generate")
        for i, path in enumerate(names):
            path.write_text(f"VALUE = {i:05d}  # try {attempt}\n")
        second = at_the_start_of_a_second()
        for path in names:
            os.utime(path)
        checkpoints.end_turn()
        if edit is not None:
            edit_in_place(names[edit], f"VALUE = {edit * 11111:05d}  # try {attempt}\n")
        seconds = {index_second(checkpoints), int(names[0].stat().st_mtime), int(names[-1].stat().st_mtime)}
        if edit is not None:
            seconds.add(int(names[edit].stat().st_mtime))
        if seconds == {second}:
            return second
    pytest.fail("could not touch the files, snapshot them and edit one within one second in 10 tries")


def test_many_racy_files_are_refreshed_a_second_later_and_stay_trusted(project, agentica_home):
    checkpoints = Checkpoints(project, session_id="s1")
    second = racy_turn(checkpoints, project)
    repo = checkpoints.repo
    assert repo.racy_second == second and repo.racy_mark.read_text() == str(second)
    # Still the same second: a refresh now would leave them racy, so none is made.
    repo.refresh_if_due()
    assert index_second(checkpoints) == second and repo.racy_second == second
    time.sleep(max(0.0, second + 1.1 - time.time()))
    info = checkpoints.begin_turn("next")
    assert info is not None and info.files == []
    # The index now carries a later second than every file in it: git trusts their stat data.
    newest = max(int(p.stat().st_mtime) for p in (project / "gen").iterdir())
    assert index_second(checkpoints) > newest
    assert repo.racy_second == 0 and not repo.racy_mark.exists()


def test_a_few_racy_files_are_left_to_be_re_read(project, agentica_home):
    checkpoints = Checkpoints(project, session_id="s1")
    racy_turn(checkpoints, project, files=3)  # cheaper to re-hash than to rewrite the index for
    assert checkpoints.repo.racy_second == 0 and not checkpoints.repo.racy_mark.exists()


def test_the_refresh_is_still_due_in_the_next_process(project, agentica_home):
    first = Checkpoints(project, session_id="s1")
    second = racy_turn(first, project)
    again = Checkpoints(project, session_id="s1")  # e.g. the next `agentica -p -c`
    assert again.repo.racy_second == second
    time.sleep(max(0.0, second + 1.1 - time.time()))
    again.begin_turn("next")
    assert index_second(again) > second and again.repo.racy_second == 0


def test_an_edit_in_the_same_second_as_the_snapshot_is_captured_after_the_refresh_and_undone(
        project, agentica_home):
    checkpoints = Checkpoints(project, session_id="s1")
    second = racy_turn(checkpoints, project, edit=7)
    edited = project / "gen" / "mod_7.py"
    time.sleep(max(0.0, second + 1.1 - time.time()))
    info = checkpoints.begin_turn("the agent's turn")  # the refresh runs first, then the scan
    assert checkpoints.repo.racy_second == 0 and index_second(checkpoints) > second  # it ran
    assert info is not None and info.files == ["gen/mod_7.py"]
    edited.write_text("the agent's version\n")
    checkpoints.end_turn()
    assert checkpoints.undo().done
    assert edited.read_text().startswith("VALUE = 77777  #")  # the user's edit, not the older text
    # And scanning the refreshed index still finds nothing else to record.
    assert checkpoints.repo.pending() == []


def test_a_new_session_copying_a_racy_index_still_sees_an_edit_made_in_that_second(project, agentica_home):
    first = Checkpoints(project, session_id="a")
    second = racy_turn(first, project, files=3, edit=1)  # few: no refresh due, the copy must stay racy itself
    time.sleep(max(0.0, second + 1.1 - time.time()))
    other = Checkpoints(project, session_id="b")  # starts from session a's index
    assert int(other.repo.index.stat().st_mtime) == second  # copied with its date: git still re-reads
    assert other.repo.pending() == ["gen/mod_1.py"]
    info = other.begin_turn("first turn of b")
    assert info is not None
    other.end_turn()
    assert other.repo.git("show", f"{info.commit}:gen/mod_1.py").decode().startswith("VALUE = 11111  #")


def test_a_new_session_never_starts_from_a_lock_file(project, agentica_home):
    first = Checkpoints(project, session_id="a")
    first.begin_turn("x")
    first.end_turn()
    shadow = first.repo.git_dir
    lock = shadow / "index-a.lock"
    lock.write_bytes(b"half an index")
    future = time.time() + 60
    os.utime(lock, (future, future))  # the newest index-* file there
    other = Checkpoints(project, session_id="b")
    assert other.repo.index.read_bytes() == (shadow / "index-a").read_bytes()
    (project / "notes.txt").write_text("changed\n")
    assert other.repo.pending() == ["notes.txt"]


def test_pruning_a_session_removes_its_racy_mark(project, agentica_home):
    old = Checkpoints(project, session_id="old", keep_sessions=1)
    racy_turn(old, project)
    assert old.repo.racy_mark.exists()
    mark = old.repo.racy_mark
    journal = old.repo.git_dir / "sessions" / "old.json"
    os.utime(journal, (time.time() - 100,) * 2)
    current = Checkpoints(project, session_id="new", keep_sessions=1)
    current.begin_turn("x")
    current.end_turn()
    assert current.prune() == ["old"]
    assert not mark.exists()
