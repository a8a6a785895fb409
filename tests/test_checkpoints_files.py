"""The shadow repository's files written without git (checkpoints/shadow_files.py), each
checked against git itself: the repository `git init` makes, the commit object `git
commit-tree` writes, a ref `git update-ref` would write, and the tree `git write-tree` prints.
Then a session's first snapshot, with git's fsck over what it wrote."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentica_cli.checkpoints import Checkpoints, shadow, shadow_files
from agentica_cli.checkpoints.shadow import shadow_dir_for

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need the git program")

IDENTITY = {"GIT_AUTHOR_NAME": "agentica", "GIT_AUTHOR_EMAIL": "agentica@localhost",
            "GIT_COMMITTER_NAME": "agentica", "GIT_COMMITTER_EMAIL": "agentica@localhost"}


def git(cwd: Path | None, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, **(env or {}))
    return subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@x", *args], cwd=cwd, env=full,
                          input=input, capture_output=True, text=True, check=True).stdout


def make_repo(path: Path, files: int = 30) -> Path:
    (path / "src" / "deep" / "er").mkdir(parents=True)
    for n in range(files):
        (path / "src" / f"m{n}.py").write_text(f"N = {n}\n")
        (path / "src" / "deep" / "er" / f"name with spaces {n}.txt").write_text("x" * n)
    (path / "top.txt").write_text("top\n")
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-qm", "start")
    return path


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) + ("/" if p.is_dir() else "") for p in folder.rglob("*"))


def test_a_repository_made_by_hand_is_what_git_init_makes_and_git_works_in_it(tmp_path: Path) -> None:
    git(None, "init", "--quiet", "--bare", "--template=", str(tmp_path / "by-git"))
    shadow_files.init_bare(tmp_path / "by-hand")
    assert listing(tmp_path / "by-hand") == listing(tmp_path / "by-git")
    for name in ("HEAD", "config"):
        assert (tmp_path / "by-hand" / name).read_text() == (tmp_path / "by-git" / name).read_text()
    assert (tmp_path / "by-hand").stat().st_mode & 0o777 == 0o700  # private, as the shadow's folders are
    env = {"GIT_DIR": str(tmp_path / "by-hand")}
    assert git(None, "rev-parse", "--is-bare-repository", env=env).strip() == "true"
    blob = git(None, "hash-object", "-w", "--stdin", env=env, input="content\n").strip()
    assert git(None, "cat-file", "-p", blob, env=env) == "content\n"
    git(None, "fsck", "--strict", env=env)


@pytest.mark.parametrize("zone", ["UTC0", "IST-5:30", "EST5", "NPT-5:45"])
def test_a_commit_written_by_hand_is_byte_for_byte_the_one_git_commit_tree_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        repo = make_repo(tmp_path / "repo")
        git_dir = repo / ".git"
        tree = git(repo, "write-tree").strip()
        parent = git(repo, "rev-parse", "HEAD").strip()
        when = 1796322804
        for message, parents in (("turn_start 1 of s1", []), ("step 2 of s1\n", [parent])):
            expected = git(repo, "commit-tree", tree, *[a for p in parents for a in ("-p", p)], "-m", message,
                           env={**IDENTITY, "TZ": zone, "GIT_AUTHOR_DATE": f"@{when}",
                                "GIT_COMMITTER_DATE": f"@{when}"}).strip()
            body = shadow_files.commit_body(tree, parents[0] if parents else None, message, "agentica",
                                            "agentica@localhost", when=when)
            (git_dir / "objects" / expected[:2] / expected[2:]).unlink()  # git's own copy gone: ours alone
            assert shadow_files.write_object(git_dir, "commit", body) == expected
            assert git(repo, "cat-file", "-t", expected).strip() == "commit"
        git(repo, "fsck", "--strict")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_ref_written_by_hand_is_read_by_git_and_a_taken_lock_is_left_to_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD").strip()
    git_dir = repo / ".git"
    assert shadow_files.write_ref(git_dir, "refs/agentica/s-1", head)
    assert git(repo, "rev-parse", "refs/agentica/s-1").strip() == head
    assert not (git_dir / "refs" / "agentica" / "s-1.lock").exists()
    lock = git_dir / "refs" / "agentica" / "s-2.lock"
    lock.write_text("")  # another git is writing it
    assert not shadow_files.write_ref(git_dir, "refs/agentica/s-2", head)
    assert lock.read_text() == "" and not (git_dir / "refs" / "agentica" / "s-2").exists()
    assert not shadow_files.write_ref(git_dir, "refs/agentica/../../HEAD", head)  # not a plain name: git's
    assert not shadow_files.write_ref(git_dir, "refs/agentica/s-3", "not an id")


def test_the_cached_root_tree_is_what_git_write_tree_prints_in_every_index_version(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index = repo / ".git" / "index"
    written = git(repo, "write-tree").strip()
    assert shadow_files.cached_root_tree(index) == written
    (repo / "src" / "m1.py").write_text("changed\n")
    git(repo, "add", "src/m1.py")
    assert shadow_files.cached_root_tree(index) is None  # the change invalidated it: write-tree's turn
    written = git(repo, "write-tree").strip()
    for version in ("4", "3", "2"):
        git(repo, "update-index", "--index-version", version)
        assert shadow_files.cached_root_tree(index) == written, version
    (repo / "later.txt").write_text("later\n")
    git(repo, "add", "--intent-to-add", "later.txt")  # an extended-flags entry (index version 3)
    git(repo, "write-tree")
    assert git(repo, "ls-files", "--debug", "later.txt")
    found = shadow_files.cached_root_tree(index)
    assert found is None or found == git(repo, "write-tree").strip()
    (tmp_path / "not-an-index").write_bytes(b"DIRC\0\0\0\x09" + b"\0" * 40)
    assert shadow_files.cached_root_tree(tmp_path / "not-an-index") is None
    assert shadow_files.cached_root_tree(tmp_path / "missing") is None


def _git_says_index_is_head(repo: Path) -> bool:
    return subprocess.run(["git", "diff-index", "--cached", "--quiet", "HEAD"], cwd=repo).returncode == 0


def test_an_index_is_known_to_be_its_commit_without_git_only_when_git_agrees(tmp_path: Path) -> None:
    """index_is_commit against `git diff-index --cached --quiet HEAD` in each state of a
    checkout: True only where git says the same; True for a fresh commit's and a fresh worktree's
    index; "not known" (ask git) for a staged change, an intent-to-add entry, index version 4 and a
    packed commit."""
    repo = make_repo(tmp_path / "repo")
    objects, index = repo / ".git" / "objects", repo / ".git" / "index"

    def known() -> bool:
        found = shadow_files.index_is_commit(index, objects, git(repo, "rev-parse", "HEAD").strip())
        assert not found or _git_says_index_is_head(repo)
        return found

    assert known()  # `git commit` leaves a valid cache-tree
    git(repo, "worktree", "add", "-q", "-b", "task", str(tmp_path / "wt"))
    wt_index = repo / ".git" / "worktrees" / "wt" / "index"
    assert shadow_files.index_is_commit(wt_index, objects, git(tmp_path / "wt", "rev-parse", "HEAD").strip())
    (repo / "top.txt").write_text("staged\n")
    git(repo, "add", "top.txt")
    assert not known() and not _git_says_index_is_head(repo)
    git(repo, "reset", "-q", "--hard")
    assert known()
    (repo / "new.txt").write_text("new\n")
    git(repo, "add", "--intent-to-add", "new.txt")  # an extended flag: index version 3
    assert not known()
    git(repo, "reset", "-q", "--hard")  # (it removes new.txt, which it took for an added file)
    git(repo, "update-index", "--index-version", "4")
    assert not known()
    git(repo, "update-index", "--index-version", "2")
    git(repo, "write-tree")  # the cache-tree valid again
    assert known()
    git(repo, "gc", "-q")  # the commit packed: not read here, git is asked
    assert not known() and _git_says_index_is_head(repo)
    assert shadow_files.loose_commit_tree(objects, "not an id") is None


def test_a_first_snapshot_in_a_clean_worktree_runs_one_git_process_and_git_fsck_finds_it_whole(
        tmp_path: Path, agentica_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch task's session: a new worktree, a new shadow repository borrowing from it. Its
    first snapshot runs only the scan (ls-files): the worktree's index is its commit, read from
    the files (index_is_commit); the tree it records is HEAD's; a changed turn and its undo
    work; fsck finds every object and ref."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "worktree", "add", "-q", "-b", "task", str(tmp_path / "wt"))
    project = tmp_path / "wt"
    calls: list[str] = []
    run = shadow.ShadowRepo.run

    def counted(self: shadow.ShadowRepo, *args: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        calls.append(args[0])
        return run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shadow.ShadowRepo, "run", counted)
    checkpoints = Checkpoints(project, session_id="s1")
    start = checkpoints.begin_turn("go")
    checkpoints.save_journal()
    assert start is not None
    assert calls == ["ls-files"]
    git_dir = shadow_dir_for(project)
    env = {"GIT_DIR": str(git_dir)}
    assert git(None, "rev-parse", f"{start.commit}^{{tree}}", env=env).strip() == \
        git(project, "rev-parse", "HEAD^{tree}").strip()
    assert git(None, "rev-parse", "refs/agentica/s1", env=env).strip() == start.commit
    (project / "top.txt").write_text("edited\n")
    end = checkpoints.end_turn()
    assert end is not None and end.files == ["top.txt"]
    assert git(None, "rev-parse", f"{end.commit}^", env=env).strip() == start.commit  # the parent line
    git(None, "fsck", "--strict", "--no-dangling", env=env)
    assert checkpoints.undo().done
    assert (project / "top.txt").read_text() == "top\n"
