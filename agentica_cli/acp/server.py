"""`agentica acp [options]`: parse the options, take stdin/stdout for the protocol, serve.

stdout carries JSON-RPC: a stray print (ours, a library's, a child process's) would corrupt
it. So the protocol gets private duplicates of fds 0 and 1, and fd 1 is pointed at stderr
and fd 0 at /dev/null for everything else.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from agentica_cli.app import exitcodes

DESCRIPTION = """\
Run agentica as an Agent Client Protocol (ACP) agent over stdio, for editors such as Zed and
JetBrains IDEs. The editor starts this command and talks JSON-RPC on stdin/stdout; logs go to
stderr. Settings come from the same config files and environment as `agentica` (the project's
.agentica/config.toml per session folder); the options below override them."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentica acp", description=DESCRIPTION)
    p.add_argument("-m", "--model", help="model id, e.g. gpt-4o, glm-5.1, deepseek-v4-flash")
    p.add_argument("--provider", help="openai, zhipuai, deepseek, moonshot, qwen, openrouter, ollama, openai-like, "
                   "zai, zhipuai-coding, zai-coding, moonshot-intl, qwen-intl, lmstudio, llamacpp, vllm")
    p.add_argument("--base-url", help="an OpenAI-compatible endpoint")
    p.add_argument("--api-key", help="the API key (visible in the process list: prefer --api-key-file, "
                   "the config file or AGENTICA_API_KEY)")
    p.add_argument("--api-key-file", metavar="PATH", help="read the API key from this file")
    p.add_argument("--permission-mode", choices=("default", "accept-edits", "auto", "plan"),
                   help="the mode new sessions start in (the editor can switch it)")
    p.add_argument("--sandbox", choices=("workspace-write", "read-only", "off"), help="confine commands")
    p.add_argument("--add-dir", type=Path, action="append", default=[], help="another folder tools may use")
    p.add_argument("--max-turns", type=int, help="stop a prompt after this many model requests")
    p.add_argument("--no-session", action="store_true", help="do not save conversations")
    return p


def flag_settings(args: argparse.Namespace) -> dict[str, object]:
    """The options as dotted config keys (the top precedence layer), like `agentica`'s."""
    return {
        "model.name": args.model,
        "model.provider": args.provider,
        "model.base_url": args.base_url,
        "model.api_key": args.api_key,
        "permissions.mode": args.permission_mode,
        "tools.max_turns": args.max_turns,
        "sandbox.mode": args.sandbox,
    }


def _protocol_streams() -> tuple[Any, Any]:
    """Private file objects for the protocol's stdin and stdout; fds 0/1 then point elsewhere."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


async def _serve(agent: Any, proto_in: Any, proto_out: Any) -> None:
    from acp import run_agent

    from agentica_cli.acp.protocol_streams import open_protocol_streams

    reader, writer = await open_protocol_streams(proto_in, proto_out)
    try:
        await run_agent(agent, writer, reader)
    finally:
        await agent.shutdown()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.max_turns is not None and args.max_turns < 1:
        sys.stderr.write("agentica acp: --max-turns must be at least 1\n")
        return exitcodes.USAGE_ERROR
    for extra in args.add_dir:
        if not extra.expanduser().is_dir():
            sys.stderr.write(f"agentica acp: --add-dir {extra}: no such folder\n")
            return exitcodes.USAGE_ERROR
    if args.api_key is not None or args.api_key_file is not None:
        from agentica_cli.app.settings.api_key_input import ARGV_WARNING, KeyInputError, resolve_key_flags

        if args.api_key == "-":  # stdin carries the protocol
            sys.stderr.write("agentica acp: --api-key - cannot read stdin (the editor's protocol); "
                             "use --api-key-file PATH\n")
            return exitcodes.USAGE_ERROR
        try:
            if resolve_key_flags(args, sys.stdin):
                sys.stderr.write(f"agentica acp: {ARGV_WARNING}\n")
        except KeyInputError as err:
            sys.stderr.write(f"agentica acp: {err}\n")
            return exitcodes.USAGE_ERROR
    from agentica_cli.app.process_hardening import harden_process

    harden_process()
    from agentica_cli.sandbox.descendants import end_descendants_at_exit

    end_descendants_at_exit()  # nothing the session started outlives it (a daemonised `setsid cmd &`)
    from agentica_cli.acp.schema_import import import_protocol_schema

    import_protocol_schema()  # ~300 ms sooner to `initialize`: acp/schema_import.py
    from agentica_cli.acp.agent import AgenticaAcpAgent

    agent = AgenticaAcpAgent(flag_settings(args), add_dirs=[p.expanduser().resolve() for p in args.add_dir],
                             save_sessions=not args.no_session)
    proto_in, proto_out = _protocol_streams()
    try:
        asyncio.run(_serve(agent, proto_in, proto_out))
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED
    return exitcodes.OK
