"""OS confinement of the commands the agent runs: bubblewrap, Landlock, macOS Seatbelt.

No UI here: the CLI builds a `Sandbox` from its settings and hands it to the execute tool
(and to MCP stdio servers); the tool wraps each command line with `Sandbox.wrap`.
"""

from agentica_cli.sandbox.policy import DEFAULT_MODE, HOME_SECRETS, MODES, SandboxPolicy, default_secret_paths
from agentica_cli.sandbox.sandbox import BACKENDS, Launch, Sandbox, backend_available, best_backend

__all__ = [
    "BACKENDS",
    "DEFAULT_MODE",
    "HOME_SECRETS",
    "MODES",
    "Launch",
    "Sandbox",
    "SandboxPolicy",
    "backend_available",
    "best_backend",
    "default_secret_paths",
]
