"""`harden_process` where docs/tools.md has long shown it; the module is agentica_cli.app.process_hardening."""

from agentica_cli.app.process_hardening import harden_process

__all__ = ["harden_process"]
