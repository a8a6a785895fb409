"""macOS: a `sandbox-exec` (Seatbelt) profile for a sandbox policy.

Written from Apple's profile language as Codex and others use it; it cannot be tested on
the Linux machines this project is built on, so it is used only on macOS and is marked
untested in docs/security.md.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agentica_cli.sandbox.policy import SandboxPolicy

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def seatbelt_available() -> bool:
    import sys

    return sys.platform == "darwin" and shutil.which(SANDBOX_EXEC) is not None


def _quote(path: Path) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(policy: SandboxPolicy, temp_dir: Path | None) -> str:
    """Allow everything but writes outside the writable folders, reads of the hidden
    paths and (unless allowed) the network."""
    lines = ["(version 1)", "(allow default)", "(deny file-write*)",
             '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))']
    for folder in policy.writable(temp_dir):
        lines.append(f"(allow file-write* (subpath {_quote(folder)}))")
    for path in policy.hidden:
        lines.append(f"(deny file-read* (subpath {_quote(path)}))")
    if not policy.network:
        lines.append("(deny network-outbound (remote ip))")
        lines.append("(deny network-inbound (local ip))")
    return "\n".join(lines) + "\n"


def seatbelt_argv(policy: SandboxPolicy, argv: list[str], temp_dir: Path | None) -> list[str]:
    return [SANDBOX_EXEC, "-p", seatbelt_profile(policy, temp_dir), *argv]
