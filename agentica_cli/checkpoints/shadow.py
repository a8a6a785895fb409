"""The shadow git repository a project's snapshots live in, and the git plumbing on it.

`git --git-dir=<shadow> --work-tree=<project>`: the project's own `.git` (index, HEAD,
branches, stash, hooks, config) is never written, and nothing is created inside the
project. The environment is rebuilt from scratch for every git call so that no inherited
GIT_* variable, user or system config, hook or attribute filter can redirect it.

When the project is the top of a git checkout, a new shadow repository borrows from it
(`read_checkout`), reading it as files (no git process runs with the project's
config): its object store, as an alternate, so the blobs the project has already are not
stored again (git may refresh their time stamps); and its index, copied as the first
session's stat cache when it matches HEAD, so the first snapshot hashes only what differs
from HEAD (and git's racily clean entries) instead of every file. A batch gives each task a new worktree, each a new
project here: without this, every task's first snapshot hashed and stored the whole
repository again.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentica_cli.checkpoints import shadow_files
from agentica_cli.git_files import common_dir_of, git_dir_of, head_commit
from agentica_cli.private_files import agentica_home, open_private, private_dir

# Left out of every snapshot whatever the project's .gitignore says: git's own folders
# (a nested repository would otherwise become an unrestorable gitlink) and caches that are
# rebuilt anyway and can be large.
DEFAULT_EXCLUDES = """\
.git
.git/
__pycache__/
*.pyc
node_modules/
.venv/
.mypy_cache/
.pytest_cache/
.ruff_cache/
"""

# What git may read from "global" config: only this, written by us (safe.directory so a
# project owned by another user is not refused; the rest makes git's output parseable and
# its behaviour independent of the user's settings).
SHADOW_CONFIG = """\
[safe]
\tdirectory = *
[core]
\thooksPath = /dev/null
\tautocrlf = false
\tfsmonitor = false
\tquotePath = false
\tlogAllRefUpdates = false
\tlooseCompression = 1
\tcompression = 1
\tsymlinks = true
\tfilemode = true
\texcludesFile = /dev/null
\tattributesFile = /dev/null
[gc]
\tauto = 0
[commit]
\tgpgSign = false
[advice]
\taddEmbeddedRepo = false
"""

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
SNAPSHOT_AUTHOR = ("agentica", "agentica@localhost")  # of every snapshot commit: name, email


# git's words when a lock file is in the way: "fatal: Unable to create '<path>.lock': File exists."
_LOCK_IN_THE_WAY = re.compile(r"Unable to create '([^']+\.lock)': File exists")
# A lock no process holds open, older than this, was left by a git that died (killed with
# agentica, a crash, a full disk). Where open files cannot be listed, only the age counts.
STALE_LOCK_SECONDS = 2.0
STALE_LOCK_SECONDS_UNSEEN = 600.0
# `git add --ignore-errors` names each file it could not read this way, and goes on.
_UNREADABLE = re.compile(r"unable to index file '(.+)'")

# "Racily clean" entries: git (built without USE_NSEC, as distributions ship it) compares
# mtimes in whole seconds, so it cannot trust the stat data of a file modified in the same
# second the index was written, and re-reads and re-hashes that file on every scan for as
# long as the index keeps that timestamp (our scans never write it). A snapshot that leaves
# this many racy files (or bytes) behind has the index refreshed (`update-index --refresh`,
# which checks their content and rewrites the index with a later timestamp) at the first
# scan a second later; fewer are cheaper to re-hash than the refresh is.
RACY_REFRESH_FILES = 100
RACY_REFRESH_BYTES = 4_000_000
# The file system's clock is coarse (it may lag time.time() by a tick): wait a bit more.
RACY_MARGIN = 0.05


def racy_mark(git_dir: Path, index_name: str) -> Path:
    """The file beside an index that says it holds many racy entries (ShadowRepo.racy_second)."""
    return git_dir / f"racy-{index_name}"


class CheckpointError(Exception):
    """A git call on the shadow repository failed; str() says which and why."""


def lock_is_held(lock: Path) -> bool | None:
    """Whether some process has `lock` open (git keeps its lock open while it works); None
    when that cannot be known here (no /proc)."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/fd"):
        return None
    target = os.path.realpath(lock)  # /proc/<pid>/fd/<n> links name the real path
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # gone, or another user's (who cannot write our 0700 folder anyway)
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
            except OSError:
                continue
    return False


def stale_lock(lock: Path) -> bool:
    """A lock left behind by a git process that is gone: nobody holds it and it is not brand new."""
    try:
        age = time.time() - lock.lstat().st_mtime
    except FileNotFoundError:
        return False
    held = lock_is_held(lock)
    if held is None:
        return age > STALE_LOCK_SECONDS_UNSEEN
    return not held and age > STALE_LOCK_SECONDS


def git_available() -> bool:
    return shutil.which("git") is not None


def checkpoints_root() -> Path:
    return agentica_home() / "checkpoints"


def shadow_dir_for(project: Path) -> Path:
    """~/.agentica/checkpoints/<hash of the project's real path>/"""
    real = os.path.realpath(project)
    return checkpoints_root() / hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]


@dataclass(frozen=True)
class Checkout:
    """What a shadow repository borrows from the git checkout its project is the top of."""

    index: Path
    objects: Path
    head: str | None  # the commit HEAD names, None when it cannot be read as files


def read_checkout(project: Path) -> Checkout | None:
    """The checkout `project` is the top of (`.git` a folder, or a worktree's `gitdir:` file),
    read as files only: no git process, so nothing of the project's config runs. None when
    it is not one, or uses what a copy of its index would break (a split index)."""
    git_dir = git_dir_of(project)
    if git_dir is None:
        return None
    try:
        common = common_dir_of(git_dir)
        index, objects = git_dir / "index", common / "objects"
        if not (index.is_file() and objects.is_dir()) or any(git_dir.glob("sharedindex.*")):
            return None
        if not (os.access(index, os.R_OK) and os.access(objects, os.R_OK | os.X_OK)):
            return None  # another user's repository: its work tree alone is snapshotted, as before
        return Checkout(index=index, objects=objects, head=head_commit(git_dir, common))
    except (OSError, UnicodeDecodeError):
        return None


@dataclass
class Change:
    """One path that differs between two snapshots: status A (added), D (deleted), M, T."""

    status: str
    path: str


@dataclass
class TreeState:
    """What a snapshot recorded: its commit, and the files left out for their size."""

    commit: str
    tree: str
    skipped: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # could not be read: their old state is kept


class ShadowRepo:
    """Git plumbing for one project; `index_name` keeps one session's stat cache apart from
    another's, so two agentica processes in one project never wait on each other's lock."""

    def __init__(self, project: Path, *, index_name: str = "index", max_file_size: int = 10_000_000,
                 git_dir: Path | None = None):
        self.project = Path(os.path.realpath(project))
        self.git_dir = git_dir or shadow_dir_for(self.project)
        self.index = self.git_dir / index_name
        self.max_file_size = max_file_size
        self._env: dict[str, str] | None = None
        # Beside the index: the second it was written in, while it holds many racy entries
        # (see RACY_REFRESH_FILES); kept in a file, so the next process refreshes it too.
        self.racy_mark = racy_mark(self.git_dir, index_name)
        self._racy_second: int | None = None  # None: not read from racy_mark yet

    # -- set-up -------------------------------------------------------------------------

    def ensure(self) -> None:
        """Create the shadow repository (0700) the first time; cheap afterwards."""
        root = checkpoints_root()
        config = root / "gitconfig"
        if not config.exists():
            with open_private(config, "w") as fh:
                fh.write(SHADOW_CONFIG)
        checkout: Checkout | None = None
        if not (self.git_dir / "HEAD").exists():
            private_dir(self.git_dir)
            shadow_files.init_bare(self.git_dir)  # what `git init --bare --template=` makes, without its process
            private_dir(self.git_dir / "info")
            with open_private(self.git_dir / "info" / "exclude", "w") as fh:
                fh.write(DEFAULT_EXCLUDES)
            with open_private(self.git_dir / "project", "w") as fh:  # which folder this is, for people
                fh.write(str(self.project) + "\n")
            checkout = read_checkout(self.project)
            if checkout is not None:
                private_dir(self.git_dir / "objects" / "info")
                with open_private(self.git_dir / "objects" / "info" / "alternates", "w") as fh:
                    fh.write(str(checkout.objects) + "\n")
        if not self.index.exists():  # start from the latest session's stat cache: no full re-hash
            others = sorted((p for p in self.git_dir.glob("index-*") if not p.name.endswith(".lock")),
                            key=lambda p: p.stat().st_mtime, reverse=True)
            if not others and checkout is not None:
                self._seed_index(checkout)
            elif others:
                # copy2 keeps the index's mtime: git judges which entries it can trust by it, and
                # a copy dated now would make it trust a file edited just after that index was
                # written (same second, same size) and miss the edit.
                shutil.copy2(others[0], self.index)
                racy = racy_mark(self.git_dir, others[0].name)
                if racy.exists():
                    shutil.copy2(racy, self.racy_mark)
        os.utime(self.git_dir / "HEAD")  # "last used", for pruning whole projects

    def _seed_index(self, checkout: Checkout) -> None:
        """The checkout's index as this new repository's first stat cache, kept only when it
        records exactly HEAD's tree: its blobs are then HEAD's, which the project keeps as long
        as that commit is reachable (a blob only staged there could be pruned by its gc)."""
        if checkout.head is None:
            return
        try:
            shutil.copy2(checkout.index, self.index)  # with its mtime: git's racy-entry check reads it
        except OSError:
            self.index.unlink(missing_ok=True)
            return
        if shadow_files.index_is_commit(self.index, checkout.objects, checkout.head):
            return  # a fresh checkout's index (a batch's worktree, a new clone): no git process to ask
        if self.run("diff-index", "--cached", "--quiet", checkout.head, check=False).returncode != 0:
            self.index.unlink(missing_ok=True)  # staged changes, or not an index git reads here

    def env(self) -> dict[str, str]:
        if self._env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(
                GIT_DIR=str(self.git_dir),
                GIT_WORK_TREE=str(self.project),
                GIT_INDEX_FILE=str(self.index),
                GIT_CONFIG_NOSYSTEM="1",
                GIT_CONFIG_GLOBAL=str(checkpoints_root() / "gitconfig"),
                GIT_TERMINAL_PROMPT="0",
                GIT_OPTIONAL_LOCKS="0",
                GIT_AUTHOR_NAME=SNAPSHOT_AUTHOR[0], GIT_AUTHOR_EMAIL=SNAPSHOT_AUTHOR[1],
                GIT_COMMITTER_NAME=SNAPSHOT_AUTHOR[0], GIT_COMMITTER_EMAIL=SNAPSHOT_AUTHOR[1],
                LC_ALL="C",
            )
            env.pop("XDG_CONFIG_HOME", None)
            env["HOME"] = str(self.git_dir)  # no ~/.gitconfig, whatever the git version
            self._env = env
        return self._env

    def git(self, *args: str, input: bytes | None = None, work_tree: bool = True, check: bool = True) -> bytes:
        return self.run(*args, input=input, work_tree=work_tree, check=check).stdout

    def run(self, *args: str, input: bytes | None = None, work_tree: bool = True,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """One git call. A lock file of our shadow repository in the way is removed when it is
        stale (see stale_lock) and the call made again; a live one is an error naming it."""
        env = self.env()
        if not work_tree:
            env = {k: v for k, v in env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
        for attempt in range(2):
            try:
                done = subprocess.run(["git", *args], input=input, env=env, cwd=self.project if work_tree else None,
                                      capture_output=True, check=False)
            except OSError as err:
                raise CheckpointError(f"git could not run: {err}") from None
            if done.returncode == 0:
                return done
            stderr = done.stderr.decode("utf-8", "replace")
            found = _LOCK_IN_THE_WAY.search(stderr)
            if found is None:
                break
            lock = Path(found.group(1))
            if attempt == 0 and self._ours(lock) and stale_lock(lock):
                try:
                    lock.unlink()  # left by a git that died: it guards nothing now
                except FileNotFoundError:
                    pass
                except OSError as err:
                    raise CheckpointError(f"git {args[0]} failed: the stale lock file {lock} could not be "
                                          f"removed ({err.strerror}); remove it") from None
                continue
            raise CheckpointError(f"git {args[0]} failed: the lock file {lock} exists: another agentica (or git) "
                                  "is working on this session's checkpoints. If none is running, remove that file.")
        if check:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
        return done

    def _ours(self, lock: Path) -> bool:
        """A lock inside our shadow repository (never one of the project's own .git)."""
        real = Path(os.path.realpath(lock))
        home = Path(os.path.realpath(self.git_dir))
        return home in real.parents

    # -- snapshots ----------------------------------------------------------------------

    def pending(self) -> list[str]:
        """Paths whose state differs from the index: modified, deleted, or new and not ignored."""
        self.refresh_if_due()
        out = self.git("ls-files", "-z", "--modified", "--others", "--exclude-standard")
        return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})

    def record(self, parent: str | None, message: str, *, max_files: int = 0, parent_tree: str = "") -> TreeState:
        """Bring the index up to date with the work tree and commit its tree (on `parent`).

        Only the paths git reports as changed are added, so an unchanged tree costs one
        `ls-files` scan (the index's stat cache makes it cheap): with `parent_tree` (the
        tree this index wrote last) nothing else runs. Files over the size limit are left
        out (and dropped from the index if an earlier snapshot had them).
        """
        paths = self.pending()
        if not paths and parent and parent_tree:
            return TreeState(parent, parent_tree)
        if max_files and len(paths) > max_files:
            raise CheckpointError(f"{len(paths)} files to snapshot (more than {max_files}); "
                                  "checkpoints are off for this folder")
        skipped: list[str] = []
        add: list[str] = []
        gone: list[str] = []
        folders: dict[str, bool] = {}
        fresh: list[tuple[float, int]] = []  # (mtime, size) of each file added: see _index_written
        for path in paths:
            if self._behind_a_link(path, folders):
                gone.append(path)  # its folder is now a symlink (or a file): not in the work tree any more
                continue
            try:
                st = os.lstat(os.path.join(self.project, path))
            except OSError:
                add.append(path)  # deleted: recorded as such
                continue
            if st.st_size > self.max_file_size:
                skipped.append(path)
            else:
                add.append(path)
                fresh.append((st.st_mtime, st.st_size))
        if gone:
            # `git add` refuses such a path outright ("beyond a symbolic link") and then adds
            # nothing at all; they are taken out of the index instead.
            self.git("update-index", "--force-remove", "-z", "--stdin",
                     input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in gone))
        unreadable: list[str] = []
        if len(add) > 1000:  # git matches each path against every pathspec: for many, add everything
            done = self.run("add", "-A", "--ignore-errors", "--", ".",
                            *(f":(exclude,literal){p}" for p in skipped), *(f":(exclude,literal){p}" for p in gone),
                            check=False)
            unreadable = self._add_failures(done)
        elif add:
            done = self.run("add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
                            input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in add), check=False)
            unreadable = self._add_failures(done)
        if skipped:
            self.git("rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul",
                     input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in skipped), check=False)
        # Nothing added: the index's own record of its tree, when it has one (its objects are in
        # the store: written by our write-tree, or HEAD's, which a seeded index matched).
        tree = (shadow_files.cached_root_tree(self.index) if not paths else None) or self.write_tree()
        self._index_written(fresh)
        if parent is not None and (parent_tree or self.tree_of(parent)) == tree:
            return TreeState(parent, tree, skipped, unreadable)
        body = shadow_files.commit_body(tree, parent, message, SNAPSHOT_AUTHOR[0], SNAPSHOT_AUTHOR[1])
        return TreeState(shadow_files.write_object(self.git_dir, "commit", body), tree, skipped, unreadable)

    def write_tree(self) -> str:
        return self.git("write-tree").decode().strip()

    # -- racily clean entries (see RACY_REFRESH_FILES) ----------------------------------------

    @property
    def racy_second(self) -> int:
        """The second the index was written in while it held many racy entries; 0 if none."""
        if self._racy_second is None:
            try:
                self._racy_second = int(self.racy_mark.read_text(encoding="ascii"))
            except (OSError, ValueError):
                self._racy_second = 0
        return self._racy_second

    def _set_racy_second(self, second: int) -> None:
        if second == self.racy_second:
            return
        self._racy_second = second
        try:
            if second:
                with open_private(self.racy_mark, "w") as fh:
                    fh.write(str(second))
            else:
                self.racy_mark.unlink(missing_ok=True)
        except OSError:
            pass  # only a cost: the next process re-hashes those files until the index is rewritten

    def _index_written(self, fresh: list[tuple[float, int]]) -> None:
        """After git wrote the index with files of these (mtime, size) freshly in it: how
        many of them it cannot trust (modified in the second the index was written), and
        whether that is worth a refresh. Racy entries from before were checked by that write
        (git re-reads them and marks a changed one as such), so only these count now."""
        try:
            written = int(self.index.stat().st_mtime)
        except OSError:
            return
        racy = [size for mtime, size in fresh if int(mtime) >= written]
        due = len(racy) >= RACY_REFRESH_FILES or sum(racy) >= RACY_REFRESH_BYTES
        self._set_racy_second(written if due else 0)

    def refresh_if_due(self) -> None:
        """Rewrite the index once the second its racy entries were written in is over, so
        that git trusts their stat data again. `update-index --refresh` re-reads each racy
        file and updates only the stat data of an unchanged one (a changed one stays
        modified, its old content in the index), so no change can be missed through it."""
        second = self.racy_second
        if not second or time.time() < second + 1 + RACY_MARGIN:
            return
        try:
            before = self.index.stat().st_mtime_ns
            self.run("update-index", "-q", "--refresh", check=False)
            after = self.index.stat().st_mtime_ns
        except (CheckpointError, OSError):
            return  # another git holds the index: the next scan tries again
        # Not rewritten: git found no racy entry left. Rewritten: done unless the file
        # system's clock still said the same second (then the next scan tries again).
        if after == before or after // 1_000_000_000 > second:
            self._set_racy_second(0)

    def _behind_a_link(self, rel: str, folders: dict[str, bool]) -> bool:
        """Whether a folder on the way to `rel` (inside the project) is now a symlink or not a
        folder; `folders` caches the answer per folder."""
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder not in folders:
                try:
                    mode = os.lstat(os.path.join(self.project, folder)).st_mode
                    folders[folder] = not stat.S_ISDIR(mode)
                except FileNotFoundError:
                    folders[folder] = False  # gone: git records what was in it as deleted
                except OSError:
                    folders[folder] = True
            if folders[folder]:
                return True
        return False

    @staticmethod
    def _add_failures(done: subprocess.CompletedProcess[bytes]) -> list[str]:
        """The files `git add --ignore-errors` could not read (it goes on without them); any
        other failure means nothing was added: an error, never a snapshot that looks fine."""
        if done.returncode == 0:
            return []
        text = done.stderr.decode("utf-8", "surrogateescape")
        unreadable = _UNREADABLE.findall(text)
        if unreadable:
            return sorted(set(unreadable))
        lines = text.strip().splitlines()
        raise CheckpointError(f"git add failed: {lines[-1] if lines else done.returncode}")

    def tree_of(self, commit: str) -> str:
        return self.git("rev-parse", f"{commit}^{{tree}}").decode().strip()

    def set_ref(self, name: str, commit: str) -> None:
        """Point `name` at `commit`. A loose ref that already holds it is left as it is: a new
        Checkpoints object (each `-p` run, each session switch) re-saves the journal's last
        commit, and the git process for that was ~2.5 ms of every turn's start."""
        try:
            if (self.git_dir / name).read_text(encoding="ascii").strip() == commit:
                return
        except (OSError, UnicodeDecodeError):
            pass  # packed, missing or unreadable: written below
        if not shadow_files.write_ref(self.git_dir, name, commit):  # its lock taken, or a name of another shape
            self.git("update-ref", name, commit)

    def delete_ref(self, name: str) -> None:
        self.git("update-ref", "-d", name, check=False)

    def refs(self, prefix: str) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)", prefix, check=False).decode()
        pairs = (line.split(" ", 1) for line in out.splitlines() if " " in line)
        return {name: commit for name, commit in pairs}

    # -- comparing and restoring --------------------------------------------------------

    def changes(self, old: str, new: str, paths: list[str] | None = None) -> list[Change]:
        """What differs from `old` to `new` (commits or trees), renames as delete + add."""
        if old == new:
            return []
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new).decode(
            "utf-8", "surrogateescape")
        parts = [p for p in out.split("\0") if p]
        found = [Change(parts[i][0], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if paths is not None:
            wanted = set(paths)
            found = [c for c in found if c.path in wanted]
        return found

    def patch(self, old: str, new: str, paths: list[str] | None = None) -> str:
        args = ["diff-tree", "-p", "-r", "--no-renames", "--no-color", "--no-ext-diff", old, new]
        if paths:
            args += ["--", *paths]
        return self.git(*args).decode("utf-8", "replace")

    def move(self, changes: list[Change], target: str) -> None:
        """Make the work tree hold `target`'s version of each changed path (`changes` goes from
        the present state to `target`): paths absent from `target` are removed, the rest checked
        out with their modes. Removals first, so a folder may become a file again."""
        for change in changes:
            if change.status == "D":
                self._remove(change.path)
        wanted = [c.path for c in changes if c.status != "D"]
        if wanted:
            self.git("checkout", target, "--pathspec-from-file=-", "--pathspec-file-nul",
                     input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in wanted))
            fresh = []
            for path in wanted:  # the files it wrote are as new as the index
                try:
                    st = os.lstat(os.path.join(self.project, path))
                    fresh.append((st.st_mtime, st.st_size))
                except OSError:
                    continue
            self._index_written(fresh)

    def _remove(self, rel: str) -> None:
        path = Path(self.project, rel)
        parent = Path(os.path.realpath(path.parent))
        if parent != self.project and self.project not in parent.parents:
            raise CheckpointError(f"{rel}: its folder now leads outside the project; not removed")
        try:
            if path.is_dir() and not path.is_symlink():
                return  # a folder where the snapshot had a file that went: leave the user's folder alone
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as err:
            raise CheckpointError(f"could not remove {rel}: {err.strerror}") from None
        folder = path.parent
        while folder != self.project and self.project in folder.parents:
            try:
                folder.rmdir()  # only when empty
            except OSError:
                break
            folder = folder.parent
