"""The shadow repository's git files read and written directly, where a git process would do
no more than that: a new bare repository's layout, a commit object, a loose ref, and the
tree an index's cache records for its root.

Each of these was a git process of ~2-4 ms of CPU (the interpreter's fork and exec, git's
start, reading its config). A session's first snapshot ran four of them besides the scan;
a batch of N tasks starts N sessions at once, each in a new worktree, and on a small
machine those processes, not the model, decided when the last first request left.

Only formats git has kept since its first versions are written here (a SHA-1 repository
of format version 0, loose objects, loose refs taken through git's own `.lock` protocol);
the shadow repository is ours, created with that format. Whatever does not fit (a lock in
the way, an index of a format not read here) is left to git, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
import zlib
from pathlib import Path

from agentica_cli.private_files import private_dir

# What `git init --bare --template=` writes (git 2.x), in a form every git reads.
_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
_FOLDERS = ("objects/info", "objects/pack", "refs/heads", "refs/tags")
# A ref name we write ourselves: plain parts, nothing git's check-ref-format could refuse.
_SIMPLE_REF = re.compile(r"refs(/[A-Za-z0-9][A-Za-z0-9_-]*)+")
_OID = re.compile(r"[0-9a-f]{40}")
# An index larger than this is left to `git write-tree` (reading ~60 bytes of entry per file
# in Python costs more than the process, past some hundred thousand files).
MAX_INDEX_BYTES = 8_000_000


def init_bare(git_dir: Path) -> None:
    """A new bare repository at `git_dir` (0700, as private_dir makes folders), as `git init
    --bare --template=` makes one. HEAD is written last, by rename: a repository whose HEAD
    exists is whole (ShadowRepo.ensure tests that), also to a second process doing the same."""
    private_dir(git_dir)
    for folder in _FOLDERS:
        private_dir(git_dir / folder)
    _write_atomically(git_dir / "config", _CONFIG.encode())
    _write_atomically(git_dir / "HEAD", b"ref: refs/heads/master\n")


def _write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def commit_body(tree: str, parent: str | None, message: str, name: str, email: str, when: float | None = None) -> bytes:
    """What `git commit-tree TREE [-p PARENT] -m MESSAGE` stores (author and committer alike,
    the local time zone as git writes it)."""
    seconds = int(time.time() if when is None else when)
    offset = time.localtime(seconds).tm_gmtoff // 60
    zone = f"{'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    person = f"{name} <{email}> {seconds} {zone}"
    lines = [f"tree {tree}", *([f"parent {parent}"] if parent else []), f"author {person}", f"committer {person}"]
    return ("\n".join(lines) + "\n\n" + message + ("" if message.endswith("\n") else "\n")).encode()


def write_object(git_dir: Path, kind: str, body: bytes, level: int = 1) -> str:
    """Store one loose object (zlib at `level`: the shadow config's looseCompression); its id.
    An object that is there already is kept (same id, same content)."""
    data = f"{kind} {len(body)}\0".encode() + body
    oid = hashlib.sha1(data).hexdigest()
    folder = git_dir / "objects" / oid[:2]
    path = folder / oid[2:]
    if not path.exists():
        private_dir(folder)
        _write_atomically(path, zlib.compress(data, level), mode=0o444)  # read-only, as git leaves objects
    return oid


def write_ref(git_dir: Path, name: str, oid: str) -> bool:
    """Point the loose ref `name` at `oid` through git's protocol (create NAME.lock exclusively,
    write, rename over NAME). False, having changed nothing, when the name is not a plain
    one or its lock is taken (another git at work, or one that died): git decides then."""
    if not _SIMPLE_REF.fullmatch(name) or not _OID.fullmatch(oid):
        return False
    path = git_dir / name
    lock = path.with_name(path.name + ".lock")
    try:
        private_dir(path.parent)
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(oid.encode() + b"\n")
        os.replace(lock, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        raise
    return True


def loose_commit_tree(objects: Path, commit: str) -> str | None:
    """The tree commit `commit` records, read from its loose object in `objects` (a SHA-1
    repository's); None when it is not a loose object there (packed, say) or not one read here."""
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    try:
        with open(objects / commit[:2] / commit[2:], "rb") as handle:
            head = zlib.decompressobj().decompress(handle.read(4096), 64)  # "commit SIZE\0tree ID\n"
    except (OSError, zlib.error):
        return None
    found = re.match(rb"commit \d+\0tree ([0-9a-f]{40})\n", head)
    return found.group(1).decode() if found else None


def index_is_commit(index: Path, objects: Path, commit: str) -> bool:
    """Whether the index records exactly `commit`'s tree, known without a git process: an index
    of version 2 (so no entry is intent-to-add or skip-worktree, which need version 3's
    extended flags) whose valid cache-tree names the tree the commit's loose object records.
    False means "not known so" (ask git), not "different"."""
    data = _index_bytes(index)
    if data is None or data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") != 2:
        return False
    try:
        tree = _root_tree(data)
    except (IndexError, ValueError):
        return False
    return tree is not None and tree == loose_commit_tree(objects, commit)


def _index_bytes(index: Path) -> bytes | None:
    """The index file's bytes, or None: missing, unreadable, or over MAX_INDEX_BYTES."""
    try:
        if index.stat().st_size > MAX_INDEX_BYTES:
            return None
        return index.read_bytes()
    except OSError:
        return None


def cached_root_tree(index: Path) -> str | None:
    """The tree the index's cache-tree extension records for the whole index, when it records
    one that is valid: the id `git write-tree` would print without writing anything. None when
    there is none (invalidated by a change), or the index is not one read here."""
    data = _index_bytes(index)
    if data is None:
        return None
    try:
        return _root_tree(data)
    except (IndexError, ValueError):
        return None


def _root_tree(data: bytes) -> str | None:
    if len(data) < 32 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return None
    end = len(data) - 20  # the checksum
    position = 12
    for _ in range(count):
        flags = int.from_bytes(data[position + 60:position + 62], "big")
        name = position + (64 if version >= 3 and flags & 0x4000 else 62)
        if version == 4:  # the path, prefix-compressed: a varint (bytes of the last one dropped), then NUL-ended
            while data[name] & 0x80:
                name += 1
            name += 1
            position = data.index(b"\0", name) + 1
        else:  # NUL-ended, then padded with NULs to a multiple of 8 bytes from the entry's start
            length = data.index(b"\0", name) - name
            position += (name - position + length + 8) & ~7
        if position > end:
            return None
    while position + 8 <= end:
        signature = data[position:position + 4]
        size = int.from_bytes(data[position + 4:position + 8], "big")
        body = position + 8
        if signature == b"TREE":
            # the root first: an empty path, NUL, "ENTRIES SUBTREES\n", then the id unless ENTRIES is -1
            if data[body] != 0:
                return None
            newline = data.index(b"\n", body)
            entries = int(data[body + 1:newline].split(b" ")[0])
            if entries < 0 or newline + 21 > body + size:
                return None
            return data[newline + 1:newline + 21].hex()
        position = body + size
    return None
