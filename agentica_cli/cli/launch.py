"""What `agentica [flags] [prompt]` does once its flags are parsed: check them, load the config,
then hand over to --undo, the -p printer or the REPL (each imported only when chosen)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentica_cli.app import exitcodes
from agentica_cli.app.settings.flags import flag_settings


def default_args() -> argparse.Namespace:
    """The flags of a bare `agentica`, without the command-line parser (typer costs ~45 ms of
    imports, and a bare `agentica` is the most common start of the REPL). A test checks that
    they equal what the typer command produces for no arguments."""
    return argparse.Namespace(
        prompt=[], print_mode=False, output_format="text", input_format="text", model=None, provider=None,
        base_url=None, api_key=None, api_key_file=None, request_timeout=None, max_tokens=None, reasoning_effort=None,
        permission_mode=None, yes=False,
        allowed_tools=[], disallowed_tools=[], sandbox=None, system_prompt=None, system_prompt_file=None,
        append_system_prompt=None, append_system_prompt_file=None, trust=False, mcp_config=[],
        strict_mcp_config=False, work_dir=None, add_dir=[], worktree=None, continue_=False, resume=None,
        no_session=False, no_checkpoints=False, undo=False, redo=False, force=False, tools=None, image=[],
        max_turns=None, max_cost=None, version=False,
    )


def fail(message: str, code: int = exitcodes.USAGE_ERROR) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return code


def stream_input_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with --input-format stream-json in these flags, if anything."""
    if getattr(args, "input_format", "text") != "stream-json":
        return None
    if not args.print_mode:
        return "--input-format stream-json needs -p (and --output-format stream-json)"
    if args.output_format != "stream-json":
        return ("--input-format stream-json needs --output-format stream-json: each message's turn is "
                "answered with a stream of events")
    if args.prompt:
        return "--input-format stream-json reads the messages from stdin: give no PROMPT argument"
    if args.image:
        return "--image goes with a PROMPT; with --input-format stream-json send images as content blocks"
    if args.api_key == "-":
        return ("--api-key - reads the key from stdin, which carries the messages with --input-format "
                "stream-json: use --api-key-file PATH or AGENTICA_API_KEY")
    if args.undo or getattr(args, "redo", False):
        return "--undo and --redo take no messages: leave out --input-format stream-json"
    return None


def start_in_worktree(args: argparse.Namespace) -> int:
    """--worktree: the same run in a new git worktree of the project; at the end, where the work is."""
    from agentica_cli.worktrees import WorktreeError, create_worktree, exit_note

    try:
        tree = create_worktree((args.work_dir or Path.cwd()).expanduser(), args.worktree or None)
    except WorktreeError as err:
        return fail(str(err))
    sys.stderr.write(f"agentica: working in worktree {tree.name}: {tree.path} (branch {tree.branch})\n")
    try:
        return start(argparse.Namespace(**{**vars(args), "worktree": None, "work_dir": tree.path}))
    finally:
        sys.stderr.write(exit_note(tree))


def start(args: argparse.Namespace) -> int:
    from agentica_cli.app.process_hardening import harden_process

    harden_process()  # before anything runs a child that could read our environ (~1 ms)
    from agentica_cli.sandbox.descendants import end_descendants_at_exit

    end_descendants_at_exit()  # nothing the session started outlives it (a daemonised `setsid cmd &`)
    import agentica_cli.child_env  # noqa: F401  (notes the user's own environment before any library runs)
    if args.print_mode:  # on threads while the settings load: the model transport, the sandbox's probe
        from agentica_cli.models.warmup import warm_transport
        from agentica_cli.sandbox.sandbox import probe_backends

        warm_transport(args.base_url)  # the CA certificates only when it may be https
        probe_backends()
    if args.yes and args.permission_mode not in (None, "auto"):
        return fail(f"--yes conflicts with --permission-mode {args.permission_mode}")
    if args.continue_ and args.resume is not None:
        return fail("use either --continue or --resume ID, not both")
    if args.resume == "" and (args.print_mode or args.undo or getattr(args, "redo", False) or not sys.stdin.isatty()):
        return fail("--resume without an ID opens a picker in the interactive session; here give the ID "
                    "(agentica sessions list shows them)")
    if args.undo and getattr(args, "redo", False):
        return fail("use either --undo or --redo, not both")
    if args.force and not (args.undo or getattr(args, "redo", False)):
        return fail("--force goes with --undo or --redo")
    if args.max_turns is not None and args.max_turns < 1:
        return fail("--max-turns must be at least 1")
    max_cost = getattr(args, "max_cost", None)
    if max_cost is not None and not max_cost > 0:
        return fail("--max-cost must be more than 0 (US dollars)")
    if max_cost is not None and not args.print_mode:
        return fail("--max-cost goes with -p (the interactive session shows its cost in /cost and the status line)")
    problem = stream_input_problem(args)
    if problem:  # before anything reads stdin (--api-key -)
        return fail(problem)
    if getattr(args, "worktree", None) is not None:
        return start_in_worktree(args)
    work_dir = (args.work_dir or Path.cwd()).expanduser()
    if not work_dir.is_dir():
        return fail(f"--work-dir {work_dir}: no such folder")
    work_dir = Path(os.path.realpath(work_dir))
    for extra in args.add_dir:
        if not extra.expanduser().is_dir():
            return fail(f"--add-dir {extra}: no such folder")
    if args.system_prompt_file is not None or args.append_system_prompt_file is not None:
        from agentica_cli.app.settings.system_prompt_flags import SystemPromptFlagError, resolve_system_prompt_flags

        try:
            resolve_system_prompt_flags(args)
        except SystemPromptFlagError as err:
            return fail(str(err))

    key_in_argv = False
    if args.api_key is not None or args.api_key_file is not None:
        from agentica_cli.app.settings.api_key_input import KeyInputError, resolve_key_flags

        try:
            key_in_argv = resolve_key_flags(args, sys.stdin)
        except KeyInputError as err:
            return fail(str(err))

    from agentica_cli.app.settings.config import ConfigError, load_settings
    from agentica_cli.app.settings.trust import is_trusted, trust

    args.mcp_flags = None  # --mcp-config / --strict-mcp-config, read once (the REPL reloads settings)
    if args.mcp_config or args.strict_mcp_config:
        from agentica_cli.app.settings.mcp_json import McpJsonError, command_line

        try:
            args.mcp_flags = command_line(args.mcp_config, strict=args.strict_mcp_config)
        except McpJsonError as err:
            from agentica_cli.app.safe_text import safe_text

            return fail(safe_text(str(err), keep_newlines=False))
    try:
        if args.trust:
            trust(work_dir)
        settings = load_settings(work_dir, flag_settings(args), trusted=is_trusted(work_dir),
                                 mcp_flags=args.mcp_flags)
        from agentica_cli.app.startup import check_config

        check_config(settings, work_dir, args.add_dir)  # the same checks ACP's session/new makes
    except ConfigError as err:
        return fail(f"config error: {err}")
    if args.print_mode:
        from agentica_cli.models.warmup import endpoint_known

        endpoint_known(settings.base_url)  # a config file's http:// endpoint: no CA certificates to load
    if settings.warnings:  # a broken project .mcp.json: agentica goes on without it
        from agentica_cli.app.safe_text import safe_text

        for problem in settings.warnings:
            sys.stderr.write(f"agentica: warning: {safe_text(problem, keep_newlines=False)}\n")
    if key_in_argv:
        from agentica_cli.app.settings.api_key_input import ARGV_WARNING

        sys.stderr.write(f"agentica: {ARGV_WARNING}\n")
    from agentica_cli.app.sandbox_settings import unconfined_warning

    warning = unconfined_warning(settings.command_sandbox)
    if warning and (args.print_mode or not sys.stdin.isatty()):  # the REPL's banner says it
        sys.stderr.write(f"agentica: warning: {warning}\n")

    if args.undo or getattr(args, "redo", False):
        from agentica_cli.cli.undo_run import run_undo

        return run_undo(args, settings, work_dir)
    prompt = " ".join(args.prompt)
    stdin_is_tty = sys.stdin.isatty()
    if getattr(args, "claude", None) is not None:  # the Claude Agent SDK's protocol (app.main read its flags)
        from agentica_cli.headless.claude_protocol.run import run_claude

        return run_claude(args, settings, work_dir)
    if getattr(args, "input_format", "text") == "stream-json":  # -p is checked above
        from agentica_cli.headless.stream_input_run import run_stream_input

        return run_stream_input(args, settings, work_dir)
    if args.print_mode or not stdin_is_tty:
        from agentica_cli.headless.printers import run_print

        return run_print(args, settings, work_dir, prompt, read_stdin=not stdin_is_tty)
    if args.output_format != "text":
        return fail("--output-format needs -p")
    from agentica_cli.tui.repl import run_repl

    return run_repl(args, settings, work_dir, prompt)
