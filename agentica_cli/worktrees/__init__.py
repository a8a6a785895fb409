"""Git worktrees for sessions that must not touch each other's files (`agentica --worktree`,
`agentica worktrees list|rm`, and one per task of `agentica batch`).

Application logic only: git through subprocess, results as data; the command line prints them.
"""

from agentica_cli.worktrees.manager import (
    BRANCH_PREFIX,
    Repository,
    Worktree,
    WorktreeError,
    commit_all,
    create_worktree,
    exit_note,
    find_worktree,
    list_worktrees,
    open_repository,
    remove_worktree,
    repository_root,
    worktree_changes,
)

__all__ = [
    "BRANCH_PREFIX",
    "Repository",
    "Worktree",
    "WorktreeError",
    "commit_all",
    "create_worktree",
    "exit_note",
    "find_worktree",
    "list_worktrees",
    "open_repository",
    "remove_worktree",
    "repository_root",
    "worktree_changes",
]
