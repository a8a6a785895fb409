"""A batch asks git for each folder's repository once (task_run.batch_repository): every task and
attempt of one batch starts from the same commit, though the main checkout moves on meanwhile,
and a wave of N workers runs one `git rev-parse`, not N. Another batch asks again."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_support import git, make_repository

import agentica_cli.worktrees as worktrees
from agentica_cli.batch import task_run
from agentica_cli.batch.task_run import RunOptions
from agentica_cli.batch.tasks import Task


def _options(tmp_path: Path, batch: str) -> RunOptions:
    return RunOptions(batch_cwd=str(tmp_path), backoff_file=str(tmp_path / f"{batch}.backoff"),
                      results_path=str(tmp_path / f"{batch}.jsonl"))


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The folders git was asked about (open_repository's calls)."""
    calls: list[Path] = []
    real = worktrees.open_repository

    def counting(start: Path, base: str = "HEAD") -> worktrees.Repository:
        calls.append(start)
        return real(start, base)

    monkeypatch.setattr(worktrees, "open_repository", counting)
    return calls


def test_a_batchs_worktrees_start_from_one_commit_asked_of_git_once(tmp_path: Path, asked: list[Path]) -> None:
    repo = make_repository(tmp_path / "repo")
    first_head = git(repo, "rev-parse", "HEAD").strip()
    batch = _options(tmp_path, "one")
    made = task_run._worktree_for(Task("a", "p"), 1, repo, batch)
    assert made is not None and made[0].base == first_head
    (repo / "shared.txt").write_text("moved on\n")  # the main checkout moves on while the batch runs
    git(repo, "commit", "-q", "-am", "later")
    later_head = git(repo, "rev-parse", "HEAD").strip()
    for task, attempt in ((Task("a", "p"), 2), (Task("b", "p"), 1)):
        made = task_run._worktree_for(task, attempt, repo, batch)
        assert made is not None
        tree, folder = made
        assert tree.base == first_head and git(tree.path, "rev-parse", "HEAD").strip() == first_head
        assert (folder / "shared.txt").read_text() == "original\n"
    assert asked == [repo]  # three worktrees, one question
    another = task_run._worktree_for(Task("c", "p"), 1, repo, _options(tmp_path, "two"))
    assert another is not None and another[0].base == later_head  # another batch asks again
    assert asked == [repo, repo]


def test_a_folder_outside_git_is_asked_about_once_and_runs_without_a_worktree(tmp_path: Path,
                                                                              asked: list[Path]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    batch = _options(tmp_path, "one")
    assert task_run._worktree_for(Task("a", "p"), 1, folder, batch) is None
    assert task_run._worktree_for(Task("b", "p"), 1, folder, batch) is None
    assert asked == [folder]
