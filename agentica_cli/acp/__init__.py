"""`agentica acp`: the Agent Client Protocol server that editors (Zed, JetBrains, ...) run.

A consumer of the same Agent event stream as the REPL: the loop's events become ACP session
updates, the permission policy asks through session/request_permission, and file content and
commands go through the editor when it offers fs and terminal capabilities.

Nothing heavy is imported here: the CLI imports `run_acp_server` at start.
"""

from __future__ import annotations


def run_acp_server(argv: list[str] | None = None) -> int:
    """Serve ACP over stdin/stdout until the editor closes the connection; the exit code."""
    from agentica_cli.acp.server import main

    return main(argv or [])


__all__ = ["run_acp_server"]
