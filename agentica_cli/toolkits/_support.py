"""What several toolkits share: an optional import with a clear error, files read through the
path sandbox, outputs saved under a folder."""

from __future__ import annotations

import os
import time
from importlib import import_module
from pathlib import Path
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the pip extra."""


def require(module: str, extra: str, package: str | None = None) -> ModuleType:
    try:
        return import_module(module)
    except ImportError:
        raise MissingExtra(f"{package or module} is not installed: pip install 'agentica-cli[{extra}]'") from None


def read_bytes(sandbox: object, path: str, limit: int = 64 * 1024 * 1024) -> tuple[bytes, str]:
    """The bytes of `path` resolved and opened through the path sandbox (a
    builtin_tools.paths.PathSandbox), and how the path is shown; refuses what is not a file."""
    from builtin_tools.file_read import FileReadError, open_readable_file

    real = sandbox.resolve(path)  # type: ignore[attr-defined]
    shown = sandbox.display(real)  # type: ignore[attr-defined]
    try:
        dir_fd = sandbox.open_parent(real)  # type: ignore[attr-defined]
    except (FileNotFoundError, NotADirectoryError):
        raise FileReadError(f"{shown} does not exist.") from None
    try:
        f = open_readable_file(dir_fd, real.name, shown, binary_ok=True)
    finally:
        os.close(dir_fd)
    with f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileReadError(f"{shown} is over {limit >> 20} MB.")
    return data, shown


def output_path(folder: str | os.PathLike[str], stem: str, suffix: str) -> Path:
    """A new file name in `folder` (made if missing): `<stem>-<time>[-n]<suffix>`."""
    out = Path(folder).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    base = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, n = out / f"{base}{suffix}", 1
    while path.exists():
        n += 1
        path = out / f"{base}-{n}{suffix}"
    return path
