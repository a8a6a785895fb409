"""Files whose change would let the agent escalate itself, so writing them always asks.

A write to agentica's own config (`.agentica/config.toml` can switch approvals off and add
hooks for the next run), to `.git/` (hooks run on the user's next commit; config can set
`core.fsmonitor` or aliases), to shell start-up files (run at the next login) or to `~/.ssh`
asks in every permission mode but an explicit `--yes`, and the question names why.
Claude Code's folder (`.claude/`: settings, hooks, commands, agents) counts as config too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

SENSITIVE_FOLDERS = {
    ".agentica": "agentica's own config, hooks, commands and agents",
    ".claude": "agent config, hooks, commands and agents",
    ".git": "git's internals (hooks and config run programs)",
    ".ssh": "SSH keys and authorized_keys",
}
SHELL_STARTUP_FILES = frozenset(
    {".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
     ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".inputrc", ".envrc", "config.fish"}
)
# In a command line: the same places, written as paths (`>> ~/.bashrc`, `.git/hooks/x`).
_COMMAND_MARKERS = re.compile(
    r"(?:^|[\s/'\"=<>])(?:\.agentica|\.claude|\.git/(?:hooks|config|info)|\.ssh)(?:/|\b)"
    r"|(?:^|[\s/'\"=<>])(?:" + "|".join(re.escape(n) for n in sorted(SHELL_STARTUP_FILES)) + r")\b"
    r"|\bcore\.hooksPath\b|\bgit\s+config\b",
    re.IGNORECASE,  # `.GIT/config` is `.git/config` on a case-insensitive file system (macOS, Windows)
)


def sensitive_reason(path: str | os.PathLike[str], work_dir: Path | None = None) -> str | None:
    """Why writing `path` needs the user's say, or None. Checks both the path as written
    and where it really leads (a symlink into `.git/` counts)."""
    text = os.path.expanduser(os.fspath(path))
    full = Path(text) if os.path.isabs(text) or work_dir is None else work_dir / text
    candidates = [Path(os.path.normpath(full))]
    try:
        candidates.append(Path(os.path.realpath(full)))
    except (OSError, ValueError):
        pass
    for candidate in candidates:
        # Compared without case: on a case-insensitive file system `.GIT/config` is git's config.
        for part in candidate.parts[:-1]:
            if part.lower() in SENSITIVE_FOLDERS:
                return SENSITIVE_FOLDERS[part.lower()]
        name = candidate.name.lower()
        if name in SENSITIVE_FOLDERS:
            return SENSITIVE_FOLDERS[name]
        if name in SHELL_STARTUP_FILES:
            return "a shell start-up file (it runs at the next login)"
    return None


def command_touches_sensitive(command: str) -> str | None:
    """A command line that names one of those places: no grant covers it."""
    if _COMMAND_MARKERS.search(command):
        return "it names agentica's or git's config, hooks, ~/.ssh or a shell start-up file"
    return None
