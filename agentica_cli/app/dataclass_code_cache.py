"""Compiled code of the methods `dataclasses` writes, kept from one start of `agentica` to the next.

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__` (and, frozen, `__setattr__`,
`__delattr__`, `__hash__`) as Python source and compiles it with `exec`. Before its first
model request a `-p` run defines ~120 dataclasses (ours, anyio's, h11's, httpx2's): ~430
compilations, ~240 M instructions under callgrind, a fifth of the whole one-answer run
(1115 -> 872 M with the cache warm), ~40 ms of its wall time. That source is the same at every
start, so while agentica runs, the name `exec` in the `dataclasses` module is pointed at
`_CodeCache.exec`, which looks the source up in a dict of code objects loaded from
~/.agentica/cache and compiles only what it has not seen; the built-in `exec` then runs the
code, exactly as it would have run the source. `release()` puts the built-in back (the name
is deleted, so `dataclasses` finds the built-in again) and writes the file if anything new
was compiled: the first start after an install or an upgrade (and the first that defines a
class no start before it did), and never again after it.

The hold is scoped to the process that is `agentica` (cli/app.py, the console script's
`main()`, for every command but `--version`, `--help` and `batch`, which starts its zygote
first), from the start of `main()` to its end, and to the batch's zygote while it preloads
(batch/zygote.py, released before it forks). A program that imports agentica as a library, or
calls `main(argv)`, keeps `dataclasses` as it is.

The file is marshal data: code objects run in this process, so it is read only if it is this
user's and nobody else can write it (like the rest of ~/.agentica, 0600), only if it was
written by this very Python (its version and bytecode tag head the file), and any problem
reading it means an empty cache. It is keyed by the whole source text, so it cannot go stale:
a changed class is a new key. It holds what the starts have used, up to MAX_ENTRIES; past
that only the last start's. Python's own setting not to write bytecode
(PYTHONDONTWRITEBYTECODE, `-B`) is honoured: the file is then read, never written.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

MAX_ENTRIES = 3000
FILE_NAME = f"dataclass-code-{sys.implementation.cache_tag}.marshal"
# Code from another interpreter (a patch release can change the bytecode) is never used.
HEADER = f"agentica dataclass code 1|{sys.version}|{sys.implementation.cache_tag}|O{sys.flags.optimize}"

_held: _CodeCache | None = None


def default_path() -> Path:
    from agentica_cli.private_files import agentica_home

    return agentica_home() / "cache" / FILE_NAME


class _CodeCache:
    def __init__(self, path: Path, entries: dict[str, CodeType]) -> None:
        self.path = path
        self.entries = entries
        self.used: set[str] = set()
        self.compiled = 0

    def exec(self, source: Any, /, *args: Any, **kwargs: Any) -> None:
        """`exec` as `dataclasses` calls it, with the source's compiled code where it is known."""
        if type(source) is str:
            code = self.entries.get(source)
            if type(code) is not CodeType:
                # dont_inherit: no `from __future__` flags of this module's, as the built-in
                # exec called from dataclasses (which has none) compiles with none.
                code = self.entries[source] = compile(source, "<string>", "exec", dont_inherit=True)
                self.compiled += 1
            self.used.add(source)
            source = code
        builtins.exec(source, *args, **kwargs)

    def save(self) -> None:
        """Write the entries atomically, with those another process wrote since this one read the
        file (a batch and its zygote start together and define different classes); past
        MAX_ENTRIES, this start's only. A failure is ignored: the next start compiles again."""
        from agentica_cli.private_files import FILE_MODE, private_dir

        kept = {**load(self.path), **self.entries}
        if len(kept) > MAX_ENTRIES:
            kept = {k: self.entries[k] for k in self.used}
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            data = marshal.dumps((HEADER, kept))
            private_dir(self.path.parent)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, self.path)
        except (OSError, ValueError):
            try:
                temporary.unlink(missing_ok=True)
            except OSError:
                pass


def load(path: Path) -> dict[str, CodeType]:
    """The entries in path, or none: missing, unreadable, another user's, writable by others,
    written by another Python, or not what this module writes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            return {}
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read()
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        header, entries = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return {}
    return entries if header == HEADER and type(entries) is dict else {}


def hold(path: Path | None = None) -> None:
    """Serve `dataclasses`' compilations from the cache until `release()` (nothing if held, or if
    something else has put its own `exec` into `dataclasses`)."""
    global _held
    import dataclasses

    if _held is not None or "exec" in vars(dataclasses):
        return
    target = path if path is not None else default_path()
    _held = _CodeCache(target, load(target))
    dataclasses.exec = _held.exec  # type: ignore[attr-defined]


def release() -> None:
    """The built-in `exec` back in `dataclasses`, and the file written if anything was new."""
    global _held
    if _held is None:
        return
    cache, _held = _held, None
    import dataclasses

    if vars(dataclasses).get("exec") == cache.exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    if cache.compiled and not sys.dont_write_bytecode:
        cache.save()


def held() -> _CodeCache | None:
    return _held
