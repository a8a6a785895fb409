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
# Build configuration that builds read (~/.m2/settings.xml, ~/.gradle/gradle.properties) is
# left readable on purpose: hiding it breaks builds (docs/security.md lists it as not protected).
HOME_SECRETS = (
    # keys and agents
    ".ssh",
    ".gnupg",
    ".1password",
    ".password-store",
    ".vault-token",
    # cloud and cluster CLIs
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".oci",
    ".kube",
    ".docker/config.json",
    ".terraform.d/credentials.tfrc.json",
    ".boto",
    ".s3cfg",
    # package registries and git hosts
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    # other coding agents (the agentica process itself still reads ~/.claude: only commands are kept out)
    ".codex",
    ".claude",
    ".claude.json",
    ".gemini",
    # shell and REPL histories (typed passwords, tokens on command lines)
    ".bash_history",
    ".zsh_history",
    ".history",
    ".sh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".lesshst",
    ".agentica",
)

# Inside each writable folder these stay read-only for commands (on every backend): writing them
# plants something that runs later, unconfined: git's hooks and config (core.fsmonitor, aliases) on
# the user's next `git status`, agentica's / Claude Code's project config and hooks on the next
# run, MCP servers, editors' tasks, direnv's .envrc, shell start-up files. A command that must
# write one asks to run outside the sandbox (sandbox=false: the user is always asked).
PROTECTED_NAMES = (
    ".git", ".agentica", ".claude", ".mcp.json", ".vscode", ".idea", ".husky", ".envrc",
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
    ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".inputrc",
)

# Environment variables that lead a command to an agent holding the user's keys (ssh-agent,
# gpg-agent, 1Password, GNOME Keyring): dropped from a confined command's environment, and the
# sockets they name are hidden (see agent_socket_paths).
AGENT_VARIABLES = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNOME_KEYRING_CONTROL",
                   "GNOME_KEYRING_PID", "GPG_TTY")

# Files hidden from commands for this process only, e.g. the file --api-key-file named.
_registered_hidden: list[Path] = []


def hide_from_commands(path: str | os.PathLike[str]) -> None:
    """Hide `path` from the commands of every sandbox built from now on in this process."""
    real = _real(path)
    if real not in _registered_hidden:
        _registered_hidden.append(real)


def agent_socket_paths(environ: dict[str, str] | None = None, uid: int | None = None) -> list[Path]:
    """Where this user's key agents listen: the sockets the environment names, and the usual
    per-user agent folders under /run/user/UID."""
    env = os.environ if environ is None else environ
    uid = os.getuid() if uid is None else uid
    paths: list[Path] = []
    if env.get("SSH_AUTH_SOCK"):
        paths.append(Path(env["SSH_AUTH_SOCK"]))
    if env.get("GPG_AGENT_INFO"):
        paths.append(Path(env["GPG_AGENT_INFO"].split(":", 1)[0]))
    if env.get("GNOME_KEYRING_CONTROL"):
        paths.append(Path(env["GNOME_KEYRING_CONTROL"]))
    run = Path(f"/run/user/{uid}")
    paths += [run / "gnupg", run / "keyring", run / "ssh-agent.socket", run / "gcr", run / "openssh_agent"]
    return [p for p in paths if p.is_absolute()]


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
    the command may open connections. `unix_sockets`: whether it may create Unix sockets
    (off: it cannot connect to a local service's socket, an agent's or docker's; seccomp.py)."""

    mode: str = DEFAULT_MODE
    work_dir: Path = field(default_factory=Path.cwd)
    extra_dirs: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    network: bool = False
    unix_sockets: bool = False

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
        unix_sockets: bool = False,
        home: str | os.PathLike[str] | None = None,
    ) -> SandboxPolicy:
        """The policy with the default secrets plus `hide` (`~` expanded) hidden."""
        hidden = [*default_secret_paths(home), *agent_socket_paths(), *_registered_hidden,
                  *(Path(os.path.expanduser(os.fspath(p))) for p in hide)]
        return cls(
            mode=mode,
            work_dir=_real(work_dir),
            extra_dirs=tuple(_real(d) for d in extra_dirs),
            hidden=tuple(dict.fromkeys(hidden)),
            network=network,
            unix_sockets=unix_sockets,
        )

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def writable(self, temp_dir: Path | None) -> list[Path]:
        """The folders a command may write: the work folders (workspace-write) and the temp folder."""
        folders = [self.work_dir, *self.extra_dirs] if self.mode == "workspace-write" else []
        return folders + ([temp_dir] if temp_dir is not None else [])

    def protected(self, temp_dir: Path | None = None) -> list[Path]:
        """The protected entries (PROTECTED_NAMES) that exist at the top of each writable
        folder but the private temp folder, resolved when they lead to another place inside
        a writable folder (a symlinked .git); one that leads outside is read-only anyway."""
        roots = self.writable(None)
        found: list[Path] = []
        for root in roots:
            for name in PROTECTED_NAMES:
                path = root / name
                if not os.path.lexists(path):
                    continue
                real = _real(path)
                for candidate in (path, real):
                    inside = any(candidate == r or r in candidate.parents for r in roots)
                    if inside and os.path.exists(candidate) and not os.path.islink(candidate) \
                            and candidate not in found:
                        found.append(candidate)
        return found

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
