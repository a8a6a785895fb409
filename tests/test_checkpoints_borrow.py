"""A new shadow repository borrows from the git checkout its project is the top of
(checkpoints/shadow.py, read_checkout): the checkout's object store as an alternate, and its
index as the first stat cache when it records HEAD. What a snapshot records must not change
by it: each scenario's snapshot tree is checked against a shadow repository that borrows
nothing (the oracle), and the borrowing against what the shadow repository stored itself."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentica_cli.checkpoints import Checkpoints, shadow
from agentica_cli.checkpoints.shadow import read_checkout, shadow_dir_for

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")

FILES = 40


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@x", *args], cwd=cwd,
                          capture_output=True, text=True, check=True).stdout


def make_checkout(path: Path) -> Path:
    path.mkdir()
    for n in range(FILES):
        (path / f"mod_{n}.py").write_text(f"VALUE = {n}\n" * 20)
    (path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (path / "run.sh").chmod(0o755)
    (path / ".gitignore").write_text("build/\n")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", ".")
    git(path, "commit", "-qm", "init")
    return path


def project_for(kind: str, tmp_path: Path) -> Path:
    repo = make_checkout(tmp_path / "repo")
    if kind == "worktree":
        git(repo, "worktree", "add", "-q", "-b", "task", str(tmp_path / "wt"))
        return tmp_path / "wt"
    if kind == "staged":
        (repo / "staged.txt").write_text("staged\n")
        (repo / "mod_1.py").write_text("staged edit\n")
        git(repo, "add", "staged.txt", "mod_1.py")
        (repo / "mod_1.py").write_text("edited again after staging\n")
    if kind == "split index":
        git(repo, "update-index", "--split-index")
    return repo


def edit(project: Path) -> None:
    """What a turn does: an edit, a new file, a deletion, a mode change, an ignored file."""
    (project / "mod_2.py").write_text("changed\n")
    (project / "new.txt").write_text("new\n")
    (project / "mod_3.py").unlink()
    (project / "run.sh").chmod(0o644)
    (project / "build").mkdir()
    (project / "build" / "out.bin").write_bytes(b"\0")


def snapshot_trees(project: Path) -> tuple[str, str]:
    """The trees of a session's turn-start and turn-end snapshots."""
    checkpoints = Checkpoints(project, session_id="s1")
    start = checkpoints.begin_turn("go")
    edit(project)
    end = checkpoints.end_turn()
    assert start is not None and end is not None
    repo = checkpoints.repo
    return repo.tree_of(start.commit), repo.tree_of(end.commit)


def stored_blobs(git_dir: Path) -> int:
    """Blobs in the shadow repository's own object store (not its alternate's)."""
    loose = [f"{d.name}{f.name}" for d in (git_dir / "objects").iterdir() if len(d.name) == 2 for f in d.iterdir()]
    env = {"GIT_DIR": str(git_dir), "PATH": os.environ["PATH"]}
    kinds = subprocess.run(["git", "cat-file", "--batch-check=%(objecttype)"], input="\n".join(loose) + "\n",
                           capture_output=True, text=True, env=env, check=True).stdout.split()
    return kinds.count("blob")


@pytest.mark.parametrize("kind", ["checkout", "worktree", "staged", "split index"])
def test_a_borrowing_shadow_records_the_same_trees_as_one_that_borrows_nothing(
        tmp_path: Path, agentica_home: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    project = project_for(kind, tmp_path)
    pristine = tmp_path / "pristine"
    shutil.copytree(project.parent if kind == "worktree" else project, pristine, symlinks=True)
    trees = snapshot_trees(project)

    # the oracle: the same files, in a home of its own, with borrowing turned off
    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "other-home"))
    monkeypatch.setattr(shadow, "read_checkout", lambda project: None)
    twin = pristine / "wt" if kind == "worktree" else pristine
    if kind == "worktree":  # the copy's .git file still names the original's git folder: same files, no git
        (twin / ".git").unlink()
    assert snapshot_trees(twin) == trees


@pytest.mark.parametrize("kind", ["checkout", "worktree"])
def test_a_clean_checkout_lends_its_objects_and_index_so_nothing_is_hashed_or_stored_again(
        tmp_path: Path, agentica_home: Path, kind: str) -> None:
    project = project_for(kind, tmp_path)
    checkout = read_checkout(project)
    assert checkout is not None and checkout.head == git(project, "rev-parse", "HEAD").strip()
    checkpoints = Checkpoints(project, session_id="s1")
    start = checkpoints.begin_turn("go")
    git_dir = shadow_dir_for(project)
    assert (git_dir / "objects" / "info" / "alternates").read_text() == f"{checkout.objects}\n"
    assert stored_blobs(git_dir) == 0  # every file of HEAD is the checkout's already
    edit(project)
    end = checkpoints.end_turn()
    assert start is not None and end is not None
    assert stored_blobs(git_dir) == 2  # mod_2.py and new.txt: only what the turn wrote
    assert checkpoints.undo().done  # the borrowed blobs restore the files
    assert (project / "mod_3.py").read_text() == "VALUE = 3\n" * 20
    assert (project / "mod_2.py").read_text() == "VALUE = 2\n" * 20
    assert not (project / "new.txt").exists() and (project / "run.sh").stat().st_mode & 0o777 == 0o755


def test_an_index_with_staged_changes_is_not_copied(tmp_path: Path, agentica_home: Path) -> None:
    """A blob only staged in the checkout is not kept by its history (its gc may prune it):
    such an index is not the shadow's stat cache; the shadow hashes the files itself."""
    project = project_for("staged", tmp_path)
    Checkpoints(project, session_id="s1").begin_turn("go")
    git_dir = shadow_dir_for(project)
    assert stored_blobs(git_dir) == 1  # mod_1.py as edited after staging: the checkout has the rest
    listed = subprocess.run(["git", "ls-files", "-s"], capture_output=True, text=True, check=True,
                            env={"GIT_DIR": str(git_dir), "GIT_INDEX_FILE": str(git_dir / "index-s1"),
                                 "PATH": os.environ["PATH"]}).stdout
    assert "staged.txt" in listed  # recorded from the work tree, as without borrowing


def test_what_is_not_the_top_of_a_checkout_lends_nothing(tmp_path: Path) -> None:
    repo = make_checkout(tmp_path / "repo")
    (repo / "sub").mkdir()
    assert read_checkout(repo / "sub") is None  # a folder inside: the index's paths are not its own
    assert read_checkout(tmp_path) is None
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: /nonexistent/place\n")
    assert read_checkout(broken) is None
    git(repo, "update-index", "--split-index")
    assert read_checkout(repo) is None  # a copy would lack its shared index
