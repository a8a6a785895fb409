"""The command sandbox a run uses, from its settings ([sandbox] table, --sandbox flag).

Built once per run and shared: the execute tool runs commands in it, the permission policy
asks less because of it, the banner and /status describe it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentica_cli.app.settings.config import ConfigError, Settings


def sandbox_for(settings: Settings, work_dir: Path, allowed_dirs: Iterable[str | os.PathLike[str]] = ()) -> Any:
    """The run's Sandbox, built once (app/startup.check_config does it first) and kept as
    `settings.command_sandbox`; a backend the machine lacks is a ConfigError."""
    built = settings.command_sandbox
    if built is not None:
        return built
    from agentica_cli.sandbox import DEFAULT_MODE, Sandbox, SandboxPolicy

    policy = SandboxPolicy.build(
        settings.sandbox.mode or DEFAULT_MODE,
        work_dir,
        extra_dirs=[Path(p).expanduser() for p in allowed_dirs],
        hide=settings.sandbox.hide,
        network=settings.sandbox.network,
        unix_sockets=settings.sandbox.unix_sockets,
    )
    try:
        sandbox = Sandbox(policy, settings.sandbox.backend)
    except ValueError as err:
        where = settings.sources.get("sandbox.backend", "config")
        raise ConfigError(f"{where}: 'sandbox.backend': {err}") from None
    settings.command_sandbox = sandbox
    if sandbox.confines:  # a daemonised command must not outlive the session (issue 25 item 13)
        from agentica_cli.sandbox.descendants import end_descendants_at_exit

        end_descendants_at_exit()
    return sandbox


def sandbox_line(sandbox: Any) -> str:
    """`sandbox: workspace-write (bubblewrap)`, for the banner and /status."""
    return f"sandbox: {sandbox.describe()}"


def unconfined_warning(sandbox: Any) -> str | None:
    """The warning when a sandbox mode is on but nothing can enforce it."""
    if sandbox.policy.active and not sandbox.confines:
        return ("no sandbox backend on this machine (install bubblewrap, or use Linux >= 5.13 for Landlock): "
                "commands run unconfined, with your rights")
    return None
