"""`agentica`: the entry point (console script `agentica_cli.cli.app:main`).

`--version` and `--help` must answer in well under 150 ms and the REPL must be ready in 300:
`--version` alone is answered here with the standard library only, and a bare `agentica` (the
REPL with every default) starts without the parser; everything else goes to the typer command
line (commands.py, ~45 ms of imports). The REPL, the printers, rich, prompt_toolkit and the model client are
imported after the arguments are known, and only the ones the chosen mode needs.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """The command; called by the console script (argv None: this process is agentica) or by
    a caller with `argv` (a test, the batch zygote's child), which then gets the code back."""
    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None and _is_main_command(args):  # this process is `agentica` (a caller's keeps its collector)
        from agentica_cli.app.startup_gc import hold

        hold()  # few garbage collections until the session has started (app/startup_gc.py)
    cached = argv is None and _defines_dataclasses(args)
    if cached:
        from agentica_cli.app import dataclass_code_cache

        dataclass_code_cache.hold()  # dataclasses' methods compiled at an earlier start, reused
    try:
        code = _main(args, own_process=argv is None)
    finally:
        if cached:
            dataclass_code_cache.release()  # the built-in back; what was new written for next time
    if argv is None and _exits_without_teardown(args):
        from agentica_cli.app.fast_exit import exit_now

        exit_now(code)  # ~30-40 ms sooner: app/fast_exit.py
    return code


def _exits_without_teardown(args: list[str]) -> bool:
    """`-p` and `batch`, the commands scripts call in loops, and the stdio servers (`acp`, `mcp
    serve`), which end when their client closes stdin, with their sessions closed: the
    teardown took 125 ms of acp's end and ~240 ms of mcp serve's. And the REPL, whose terminal
    prompt_toolkit has given back by then: under load its teardown, freeing modules while
    daemon threads (the preload, the file index) may still be about, sometimes ended it with
    SIGSEGV after its work was done (seen in the pty tests, 2 cores, -n 4 beside two CPU burners)."""
    return (args[:1] in (["batch"], ["acp"]) or args[:2] == ["mcp", "serve"] or _is_print_mode(args)
            or _is_repl(args))


def _is_repl(args: list[str]) -> bool:
    """The REPL: the main command without -p (and not its help, version or completion)."""
    words = _options(args)
    return (_is_main_command(args) and "_AGENTICA_COMPLETE" not in os.environ
            and not any(w in ("--help", "-h", "--version", "-V") for w in words))


def _defines_dataclasses(args: list[str]) -> bool:
    """Every command but the version and the help, which import no dataclasses (and should not
    import the module for nothing), and `batch`, whose first job is to start its zygote (which
    holds the cache itself): reading the cache first would delay every session of the batch.
    A caller of `main(argv)` keeps its `dataclasses` as it is."""
    return args[:1] != ["batch"] and not any(w in ("--version", "-V", "--help", "-h") for w in _options(args))


def _is_main_command(args: list[str]) -> bool:
    """`-p` or the REPL, not a subcommand: a subcommand's name comes first, the main command's
    first word is a flag (or a prompt word, with -p among the flags)."""
    return not args or args[0].startswith("-") or _is_print_mode(args)


def _is_print_mode(args: list[str]) -> bool:
    words = _options(args)
    return "-p" in words or "--print" in words


def _options(args: list[str]) -> list[str]:
    """The words before `--` (after it, everything is prompt text)."""
    return args[:args.index("--")] if "--" in args else args


def _main(args: list[str], own_process: bool = False) -> int:
    # OpenTelemetry only when the standard variables ask for it: otherwise nothing is imported.
    if "OTEL_TRACES_EXPORTER" in os.environ or "OTEL_METRICS_EXPORTER" in os.environ:
        from agentica_cli import telemetry

        telemetry.install_on_first_run()
        try:
            return _dispatch(args, own_process)
        finally:
            telemetry.shutdown()  # flushed before exit: a short -p run's spans are not lost
    return _dispatch(args, own_process)


def _dispatch(args: list[str], own_process: bool = False) -> int:
    if args in (["--version"], ["-V"]):  # the one answer that needs no parser
        from agentica_cli import __version__

        print(f"agentica {__version__}")
        return 0
    if not args and "_AGENTICA_COMPLETE" not in os.environ:
        from agentica_cli.cli.launch import default_args, start

        return start(default_args())
    if args[:1] == ["batch"] and args[1:2] != ["report"]:  # its zygote imports beside the command line's:
        # first of all, as every ms before it is a ms every batch waits for its first session
        from agentica_cli.batch.zygote_client import start_early

        start_early(args[1:], fork=own_process)  # this process is `agentica`: the zygote may be its fork
        if "_AGENTICA_COMPLETE" not in os.environ:
            from agentica_cli.cli.plain_flags import read_plain_batch_line, run_plain

            plain_batch = read_plain_batch_line(args[1:])  # scripts' and CI's batch lines: no typer
            if plain_batch is not None:
                from agentica_cli.cli.batch_start import run_batch_command

                return run_plain(run_batch_command, plain_batch)
    from agentica_cli.headless.claude_protocol import is_claude_command_line

    if is_claude_command_line(args):  # started by the Claude Agent SDK (cli_path): its flags, not ours
        return _claude_protocol(args)
    if _is_print_mode(args) and "_AGENTICA_COMPLETE" not in os.environ:
        from agentica_cli.cli.plain_flags import read_plain_command_line, start_plain

        plain = read_plain_command_line(args)  # scripts' and the batch's -p lines: no typer
        if plain is not None:
            return start_plain(plain)
    from agentica_cli.cli.commands import run

    return run(resume_without_id(args))


def resume_without_id(args: list[str]) -> list[str]:
    """`--resume` (or `-r`) last, or before another option: the session picker (an empty ID)."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        if arg in ("-r", "--resume") and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = "--resume="
    return out


def _claude_protocol(args: list[str]) -> int:
    """The Claude Agent SDK's command line read into our flags (headless/claude_protocol), then
    the usual start; a flag agentica cannot honour stops it with a result line the SDK reports."""
    from agentica_cli.cli.launch import default_args, start
    from agentica_cli.headless.claude_protocol.flags import ClaudeFlagError, parse_claude_command_line
    from agentica_cli.headless.claude_protocol.messages import StartupErrors, refusal_result

    if "--help" in args or "-h" in args:
        print("agentica --protocol claude: Claude Code's stream-json protocol on stdin and stdout, for programs "
              "written for the Claude Agent SDK (ClaudeAgentOptions(cli_path=...)). The flags the SDK passes, "
              "what they map to and what is not supported: docs/sdk.md. `agentica --help`: agentica's own flags.")
        return 0
    try:
        namespace = parse_claude_command_line(args, default_args())
    except ClaudeFlagError as err:
        sys.stderr.write(f"agentica: {err}\n")
        refusal_result(str(err))
        return 2
    errors = StartupErrors(sys.stderr)  # what stops the start (no key, a bad config) reaches the SDK too
    sys.stderr = errors
    try:
        code = start(namespace)
    finally:
        sys.stderr = errors.stream
    if code != 0 and not namespace.claude.started:
        refusal_result(errors.text() or f"agentica exited with code {code} before the session started")
    return code


if __name__ == "__main__":
    sys.exit(main())
