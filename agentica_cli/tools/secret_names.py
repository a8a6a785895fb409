"""Which environment variables hold secrets, judged by name.

One rule for everything that keeps secrets from what the agent runs: the `execute` tool's
scrubbed environment (agentica_cli.tools.local.execute) and the agent process's own startup environment
(agentica_cli.app.process_hardening). Standard library only: the CLI uses it at startup.
"""

from __future__ import annotations

# Environment variables whose names contain one of these are treated as secrets.
SECRET_NAME_PARTS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS)
