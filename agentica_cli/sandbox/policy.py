"""What a sandboxed command may do: the mode, the writable folders, the hidden secrets, the network.

The policy is data only; a backend (bwrap, Landlock, Seatbelt) turns it into confinement.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("workspace-write", "read-only", "off")
DEFAULT_MODE = "workspace-write"

# Credentials a command has no business reading, relative to $HOME. agentica's own folder
# (config with API keys, sessions, history) is added from agentica_home(), wherever it is.
HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".gnupg",
    ".agentica",
)


def default_secret_paths(home: str | os.PathLike[str] | None = None) -> list[Path]:
    """The default unreadable paths for `home` (default: $HOME), plus agentica's home folder."""
    base = Path(os.path.expanduser(os.fspath(home))) if home is not None else Path.home()
    paths = [base / rel for rel in HOME_SECRETS]
    try:
        from agentica_cli.private_files import agentica_home

        paths.append(Path(agentica_home()))
    except Exception:  # agentica's home cannot be determined: the ~/.agentica default stands
        pass
    return paths


@dataclass(frozen=True)
class SandboxPolicy:
    """`mode`: workspace-write (write the work folder, extra folders and a private temp
    folder), read-only (write only the private temp folder) or off. `hidden`: paths that
    are made unreadable (folders become empty, files read as empty). `network`: whether
    the command may open connections."""

    mode: str = DEFAULT_MODE
    work_dir: Path = field(default_factory=Path.cwd)
    extra_dirs: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    network: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, got {self.mode!r}")

    @classmethod
    def build(
        cls,
        mode: str,
        work_dir: str | os.PathLike[str],
        *,
        extra_dirs: Iterable[str | os.PathLike[str]] = (),
        hide: Iterable[str | os.PathLike[str]] = (),
        network: bool = False,
        home: str | os.PathLike[str] | None = None,
    ) -> SandboxPolicy:
        """The policy with the default secrets plus `hide` (`~` expanded) hidden."""
        hidden = [*default_secret_paths(home), *(Path(os.path.expanduser(os.fspath(p))) for p in hide)]
        return cls(
            mode=mode,
            work_dir=_real(work_dir),
            extra_dirs=tuple(_real(d) for d in extra_dirs),
            hidden=tuple(dict.fromkeys(hidden)),
            network=network,
        )

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def writable(self, temp_dir: Path | None) -> list[Path]:
        """The folders a command may write: the work folders (workspace-write) and the temp folder."""
        folders = [self.work_dir, *self.extra_dirs] if self.mode == "workspace-write" else []
        return folders + ([temp_dir] if temp_dir is not None else [])

    def existing_hidden(self) -> list[Path]:
        """The hidden paths that exist, resolved (a symlinked ~/.ssh hides its target)."""
        found: list[Path] = []
        for path in self.hidden:
            if os.path.lexists(path):
                real = _real(path)
                if os.path.exists(real) and real not in found:
                    found.append(real)
        return found


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
