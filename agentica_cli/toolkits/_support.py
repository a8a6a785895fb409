"""What the code, data and media toolkits share: files read through the path sandbox, outputs
saved under a folder. (Optional imports: `_http.require_module`.)"""

from __future__ import annotations

import os
import time
from pathlib import Path


def read_bytes(sandbox: object, path: str, limit: int = 64 * 1024 * 1024) -> tuple[bytes, str]:
    """The bytes of `path` resolved and opened through the path sandbox (a
    agentica_cli.tools.local.paths.PathSandbox), and how the path is shown; refuses what is not a file."""
    from agentica_cli.tools.local.file_read import FileReadError, open_readable_file

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
