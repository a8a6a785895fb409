"""Create, list and remove agentica's git worktrees: `<repo>/.worktrees/NAME` on branch
`agentica/NAME`, started from the HEAD of the folder the session was started in.

Inside the repository (as Claude Code's `.claude/worktrees/`) so a worktree is found next to
its project, but not under `.agentica/`: every path there is agentica's config, which a session
may never edit unasked, and the whole worktree would be. Git ignores the folder through
`.git/info/exclude`, and the project-file lookup
stops at the worktree's own `.git` file, so a session there reads the worktree's files only.
The commit a worktree started from is kept in its git folder (`agentica-base`), so its changes
are known without guessing a merge base. Git runs as a subprocess with LC_ALL=C (its porcelain
output is parsed) and without prompts.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shlex
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentica_cli.git_files import checkout_head, git_dir_of

BRANCH_PREFIX = "agentica/"
WORKTREES_FOLDER = Path(".worktrees")
_EXCLUDE_LINE = "/.worktrees/"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
# Whoever runs agentica may have no git identity configured (CI, containers): commits made for
# them say agentica made them instead of failing.
_FALLBACK_IDENTITY = {"GIT_AUTHOR_NAME": "agentica", "GIT_AUTHOR_EMAIL": "agentica@localhost",
                      "GIT_COMMITTER_NAME": "agentica", "GIT_COMMITTER_EMAIL": "agentica@localhost"}


class WorktreeError(Exception):
    """A worktree could not be made, found or removed; the message says why, for the user."""


@dataclass(frozen=True)
class Worktree:
    name: str
    path: Path
    branch: str
    base: str  # the commit it started from
    repository: Path  # the main checkout

    @property
    def head(self) -> str:
        return _git(self.path, "rev-parse", "HEAD").strip()


@dataclass(frozen=True)
class WorktreeState:
    """What `agentica worktrees list` shows of one worktree."""

    worktree: Worktree
    uncommitted: int  # paths `git status` lists
    commits: int  # commits on the branch since its base


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None,
         text: bool = True) -> subprocess.CompletedProcess[Any]:
    full = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=text, env=full,
                              stdin=subprocess.DEVNULL, timeout=120)
    except FileNotFoundError:
        raise WorktreeError("git is not installed (worktrees need git)") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} took more than 120 s in {cwd}") from None


def _git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    done = _run(cwd, *args, env=env)
    if check and done.returncode != 0:
        raise _failed(cwd, args[0], done)
    return done.stdout


def _failed(cwd: Path, command: str, done: subprocess.CompletedProcess[str]) -> WorktreeError:
    detail = (done.stderr or done.stdout).strip().splitlines()
    return WorktreeError(f"git {command} failed in {cwd}: {detail[-1] if detail else f'exit {done.returncode}'}")


@dataclass(frozen=True)
class Repository:
    """What a new worktree needs to know of the repository a folder is in, from one git process."""

    root: Path  # the main checkout (also when asked from inside one of its worktrees)
    base: str  # the commit the asked-for base names there ("": none, e.g. no commit yet)
    post_checkout: Path  # where git looks for the post-checkout hook (core.hooksPath honoured)


def open_repository(start: Path, base: str = "HEAD") -> Repository:
    """The repository `start` is in, its commit `base` and its post-checkout hook's path: one
    `git rev-parse` (a batch makes a worktree per task, inside a lock its workers share)."""
    if not start.is_dir():
        raise WorktreeError(f"{start}: no such folder")
    probe = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-path",
                            "hooks/post-checkout", "--verify", "--quiet", f"{base}^{{commit}}"], cwd=start,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env={**os.environ, "LC_ALL": "C"})
    lines = probe.stdout.splitlines()
    if probe.returncode not in (0, 1) or len(lines) < 2:  # 1 with both paths: no such commit
        raise WorktreeError(f"{start} is not in a git repository (--worktree needs one)")
    common = Path(lines[0].strip())
    if common.name != ".git":
        raise WorktreeError(f"{common} is a bare repository: worktrees need a checkout")
    commit = lines[2].strip() if probe.returncode == 0 and len(lines) > 2 else ""
    return Repository(root=Path(os.path.realpath(common.parent)), base=commit, post_checkout=Path(lines[1].strip()))


def repository_root(start: Path) -> Path:
    """The main checkout of the repository `start` is in (also from inside one of its worktrees)."""
    return open_repository(start).root


def _common_dir(root: Path) -> Path:
    return root / ".git"


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One worktree change at a time per repository: parallel batch workers add theirs at once,
    and `git worktree add` plus the exclude line are not one atomic step. Nor is `git worktree add`
    safe beside another: it reads every worktree's files, and one half made dies it ("fatal:
    failed to read .git/worktrees/NAME/commondir", seen in a batch of 8 with the set-up unlocked)."""
    with open(_common_dir(root) / "agentica-worktrees.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name) or name.endswith(".lock") or ".." in name:
        raise WorktreeError(f"invalid worktree name {name!r}: use letters, digits, '.', '_' and '-' "
                            "(at most 80, starting with a letter or digit)")


def new_name() -> str:
    """A name nobody typed: the time and a random suffix, e.g. 1202-0107-3fa9."""
    return f"{time.strftime('%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def _ignore_folder(root: Path) -> None:
    exclude = _common_dir(root) / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text() if exclude.exists() else ""
    if _EXCLUDE_LINE not in text.splitlines():
        with open(exclude, "a") as handle:
            handle.write(("" if not text or text.endswith("\n") else "\n") + _EXCLUDE_LINE + "\n")


def git_dir(path: Path) -> Path:
    """A worktree's own git folder, from its `.git` file (`gitdir: ...`): no git process
    (git's own answer only for a folder that is not the top of a checkout)."""
    found = git_dir_of(path)
    return found if found is not None else Path(_git(path, "rev-parse", "--path-format=absolute", "--git-dir").strip())


def create_worktree(start: Path, name: str | None = None, *, base: str = "HEAD",
                    repository: Repository | None = None) -> Worktree:
    """A new worktree of the repository `start` is in (`repository`: open_repository(start,
    base), when the caller has it), on a new branch agentica/NAME from `base` (as `start` sees
    it: from inside a worktree, that worktree's HEAD)."""
    start = Path(os.path.realpath(start))
    repository = repository or open_repository(start, base)
    root = repository.root
    name = name or new_name()
    _check_name(name)
    probe = repository.base
    if not probe:
        raise WorktreeError(f"{start}: no commit to start a worktree from ({base}); commit something first")
    path = root / WORKTREES_FOLDER / name
    branch = BRANCH_PREFIX + name
    if path.exists():  # (asked again under the lock: this only spares a branch made for nothing)
        raise WorktreeError(f"worktree {name} exists ({path}); pick another name or `agentica worktrees rm {name}`")
    # The branch first, outside the lock (what `git worktree add -b` runs as a process of its
    # own, inside it): making a ref is safe beside other git processes, and every git process
    # taken out of the lock shortens the line a wave of parallel batch workers waits in. git
    # refuses an existing branch itself: no process of our own to ask first.
    made = _run(root, "branch", "--quiet", "--no-track", branch, probe)
    if made.returncode != 0:
        if f"a branch named '{branch}' already exists" in made.stderr:
            raise WorktreeError(f"branch {branch} exists; pick another name or delete it (git branch -D {branch})")
        raise _failed(root, "branch", made)
    try:
        with _locked(root):
            if path.exists():
                raise WorktreeError(f"worktree {name} exists ({path}); pick another name or "
                                    f"`agentica worktrees rm {name}`")
            _ignore_folder(root)
            path.parent.mkdir(parents=True, exist_ok=True)
            # Only the worktree's set-up is made here; its files below, outside the lock.
            added = _run(root, "worktree", "add", "--quiet", "--no-checkout", str(path), branch)
            if added.returncode != 0:
                raise _failed(root, "worktree", added)
    except BaseException:
        _run(root, "branch", "-D", branch)  # made whole or not at all
        raise
    tree = Worktree(name=name, path=path, branch=branch, base=probe, repository=root)
    _check_out(tree, repository.post_checkout)
    (git_dir(path) / "agentica-base").write_text(probe + "\n")
    return tree


def _check_out(tree: Worktree, hook: Path) -> None:
    """The new worktree's files, as `git worktree add` checks them out after its set-up (`reset
    --hard`, then the post-checkout hook), but outside the repository's lock: a worktree has an
    index of its own, so parallel batch workers check out at once instead of one after another
    (in a 3,000-file repository a checkout is ~0.45 s). If it fails, the worktree and its
    branch are removed: a worktree is made whole or not at all."""
    done = _run(tree.path, "reset", "--hard", "--quiet", "--no-recurse-submodules")
    if done.returncode == 0:
        if not os.access(hook, os.X_OK):  # git runs only an executable hook: no process to ask it
            return
        ran = _run(tree.path, "hook", "run", "--ignore-missing", "post-checkout", "--", "0" * len(tree.base),
                   tree.base, "1")
        if ran.returncode == 0 or "is not a git command" in ran.stderr:  # git before 2.36: no hooks to run
            return
        done = ran
    failure = _failed(tree.path, "worktree add (check-out)", done)
    with _locked(tree.repository):
        _run(tree.repository, "worktree", "remove", "--force", str(tree.path))
        _run(tree.repository, "branch", "-D", tree.branch)
    raise failure


def _from_entry(root: Path, path: Path, branch: str) -> Worktree:
    base_file = git_dir(path) / "agentica-base" if path.is_dir() else None
    base = base_file.read_text().strip() if base_file is not None and base_file.exists() else ""
    return Worktree(name=path.name, path=path, branch=branch, base=base, repository=root)


def _entries(root: Path) -> list[tuple[Path, str]]:
    """(path, branch) of every worktree of `root` that agentica made."""
    folder = root / WORKTREES_FOLDER
    found: list[tuple[Path, str]] = []
    path: Path | None = None
    for line in [*_git(root, "worktree", "list", "--porcelain").splitlines(), ""]:
        if line.startswith("worktree "):
            path = Path(line[len("worktree "):])
        elif line.startswith("branch ") and path is not None:
            branch = line[len("branch refs/heads/"):]
            if path.parent == folder and branch == BRANCH_PREFIX + path.name:
                found.append((path, branch))
        elif not line:
            path = None
    return found


def matching_names(start: Path, pattern: str) -> list[str]:
    """The names of agentica's worktrees in this repository that the shell-style `pattern`
    matches (`batch-*`: every batch task's), sorted; no git process beyond the listing."""
    import fnmatch

    return sorted(path.name for path, _branch in _entries(repository_root(start))
                  if fnmatch.fnmatchcase(path.name, pattern))


def list_worktrees(start: Path) -> list[WorktreeState]:
    root = repository_root(start)
    states = []
    for path, branch in _entries(root):
        tree = _from_entry(root, path, branch)
        if not path.is_dir():  # deleted by hand: `git worktree prune` forgets it
            states.append(WorktreeState(tree, 0, 0))
            continue
        status = _git(path, "status", "--porcelain", "--untracked-files=all")
        commits = int(_git(path, "rev-list", "--count", f"{tree.base}..HEAD").strip() or 0) if tree.base else 0
        states.append(WorktreeState(tree, len(status.splitlines()), commits))
    return states


def find_worktree(start: Path, name: str) -> Worktree:
    root = repository_root(start)
    for path, branch in _entries(root):
        if path.name == name:
            return _from_entry(root, path, branch)
    raise WorktreeError(f"no agentica worktree named {name!r} in {root} (agentica worktrees list)")


def remove_worktree(start: Path, name: str, *, force: bool = False) -> str:
    """Remove worktree `name` and its branch; what was done, in a sentence. Uncommitted changes
    or commits on the branch stop it unless `force`: nothing is lost by accident. Its
    checkpoints go with it: nothing can be restored into it any more."""
    tree = find_worktree(start, name)
    try:
        with _locked(tree.repository):
            return _remove(tree, force)
    finally:
        if not tree.path.exists():  # gone (also when its branch could not be deleted)
            from agentica_cli.checkpoints.prune import forget_folder

            forget_folder(tree.path)  # outside the lock a batch's workers share: it scans ~/.agentica/checkpoints


def _remove(tree: Worktree, force: bool) -> str:
    root, name = tree.repository, tree.name
    commits = 0
    if tree.path.is_dir():
        dirty = _git(tree.path, "status", "--porcelain", "--untracked-files=all").strip()
        if dirty and not force:
            raise WorktreeError(f"worktree {name} has uncommitted changes ({tree.path}); --force removes them")
        if tree.base:
            commits = int(_git(tree.path, "rev-list", "--count", f"{tree.base}..HEAD").strip() or 0)
        _git(root, "worktree", "remove", "--force", str(tree.path))
    else:
        _git(root, "worktree", "prune")
    merged = _git(root, "branch", "--merged", "HEAD", "--list", tree.branch).strip()
    if commits and not merged and not force:
        return (f"removed worktree {name}; kept branch {tree.branch} ({commits} commit(s) not merged: "
                f"git merge {tree.branch}, or git branch -D {tree.branch})")
    _git(root, "branch", "-D", tree.branch)
    return f"removed worktree {name} and branch {tree.branch}"


def commit_all(tree: Worktree, message: str) -> bool:
    """Commit everything in the worktree (new files too) on its branch; False when nothing
    changed. Hooks do not run: this records the agent's work, it is not a user's commit.
    One `git status` when nothing changed (a batch's read-only tasks), not an add and a diff."""
    if not _git(tree.path, "status", "--porcelain", "-z", "--untracked-files=all"):
        return False
    _git(tree.path, "add", "-A")
    if _run(tree.path, "commit", "--quiet", "--no-verify", "-m", message).returncode != 0:
        # most often no git identity here (CI, containers): agentica signs the commit instead
        _git(tree.path, "commit", "--quiet", "--no-verify", "-m", message, env=_FALLBACK_IDENTITY)
    return True


def worktree_changes(tree: Worktree, *, clean: bool = False) -> tuple[list[str], str]:
    """(files changed, diff) between the worktree's base and its HEAD, from one `git diff`: its
    raw part (-z: the names as they are, not quoted as --name-only quotes a name with a space,
    a quote or a non-ASCII letter) and then its patch, the same text as a plain `git diff
    --binary` (text that is not UTF-8 is shown with replacement characters; the branch has it).
    `clean`: the work tree is known to hold nothing uncommitted (commit_all found nothing); when
    its HEAD, read as files, is still the base, nothing changed and no `git diff` runs (a
    read-only task: a review, a triage, an evaluation's question)."""
    if not tree.base:
        return [], ""
    if clean and checkout_head(tree.path) == tree.base:
        return [], ""
    out = _git_bytes(tree.path, "diff", "--raw", "-z", "--no-renames", "--binary", "-p", tree.base, "HEAD")
    names: list[str] = []
    while out.startswith(b":"):  # ":MODE MODE SHA SHA STATUS\0PATH\0" per file (no renames: one path)
        _header, _, out = out.partition(b"\0")
        path, _, out = out.partition(b"\0")
        names.append(os.fsdecode(path))
    return [n for n in names if n], out.removeprefix(b"\0").decode("utf-8", errors="replace")


def _git_bytes(cwd: Path, *args: str) -> bytes:
    """_git's stdout as bytes (a diff need not be UTF-8; -z names are the file system's)."""
    done = _run(cwd, *args, text=False)
    if done.returncode != 0:
        detail = os.fsdecode(done.stderr).strip().splitlines()
        raise WorktreeError(f"git {args[0]} failed in {cwd}: {detail[-1] if detail else f'exit {done.returncode}'}")
    return done.stdout


def exit_note(tree: Worktree) -> str:
    """What a --worktree session says when it ends: where the work is, how to keep or drop it.
    A worktree the session did not change is removed, with its branch. Never raises: it is said
    on the way out, whatever git does."""
    try:
        return _exit_note(tree)
    except WorktreeError as err:
        return f"agentica: the work is in {tree.path} (branch {tree.branch}); {err}\n"


def _exit_note(tree: Worktree) -> str:
    if not tree.path.is_dir():
        return f"agentica: worktree {tree.name} is gone ({tree.path})\n"
    changed = len(_git(tree.path, "status", "--porcelain", "--untracked-files=all").splitlines())
    commits = int(_git(tree.path, "rev-list", "--count", f"{tree.base}..HEAD").strip() or 0) if tree.base else 0
    where = shlex.quote(str(tree.path))
    if not changed and not commits:  # nothing to keep: no folder and branch left behind
        try:
            remove_worktree(tree.repository, tree.name)
        except WorktreeError:
            return f"agentica: worktree {tree.name} ({tree.path}) has no changes; agentica worktrees rm {tree.name}\n"
        return f"agentica: worktree {tree.name} had no changes: removed it and its branch\n"
    lines = [f"agentica: the work is in {tree.path} (branch {tree.branch}): "
             f"{changed} uncommitted path(s), {commits} commit(s)"]
    if changed:
        lines.append(f"  commit it:  git -C {where} add -A && git -C {where} commit -m 'agentica: {tree.name}'")
    lines.append(f"  merge it:   git merge {tree.branch}   (in {shlex.quote(str(tree.repository))})")
    drop = "  (--force: drop the changes)" if changed else ""
    lines.append(f"  remove it:  agentica worktrees rm {tree.name}{drop}")
    return "\n".join(lines) + "\n"
