"""The command line's settings as a config layer (the REPL re-reads it after /trust)."""

from __future__ import annotations

from typing import Any


def flag_settings(args: Any) -> dict[str, object]:
    """Command-line values (an argparse-style namespace) as dotted config keys: the top layer."""
    mode = "auto" if args.yes else args.permission_mode
    from agentica_cli.app.toolkit_setup import parse_tools_flag

    return {
        "tools.enable": parse_tools_flag(args.tools),
        "model.name": args.model,
        "model.provider": args.provider,
        "model.base_url": args.base_url,
        "model.api_key": args.api_key,
        "model.request_timeout": args.request_timeout,
        "model.max_tokens": getattr(args, "max_tokens", None),
        "model.reasoning_effort": getattr(args, "reasoning_effort", None),
        "permissions.mode": mode,
        # --allowed-tools / --disallowed-tools: rules for this run, added to every config file's
        # (load_settings keeps them apart from the files' rules, with the flag as their source)
        "permissions.allow": list(args.allowed_tools) or None,
        "permissions.deny": list(args.disallowed_tools) or None,
        "tools.max_turns": args.max_turns,
        "sandbox.mode": args.sandbox,
    }
