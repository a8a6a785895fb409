"""`agentica`: the entry point. Parses the command line with argparse and nothing heavy.

`--version` and `--help` must answer in well under 150 ms, so this module imports only the
standard library; the REPL, the printers, rich, prompt_toolkit and the model client are
imported after the arguments are known, and only the ones the chosen mode needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentica_cli.cli import exitcodes

DESCRIPTION = """\
A terminal coding agent. Without -p, opens an interactive session in the current folder;
with -p, runs one task and exits. Piped stdin is read: `cat err.log | agentica -p "explain"`
sends the prompt plus the text, `echo "task" | agentica -p` uses stdin as the prompt."""

EPILOG = f"""\
examples:
  agentica                                  interactive session in this folder
  agentica -p "fix the failing test" -y     one task, allow edits and commands
  git diff | agentica -p "review this"      piped text is attached to the prompt
  agentica -p "list TODOs" --output-format json
  agentica --continue                       resume this folder's latest session

permission modes (--permission-mode, config permissions.mode, /permissions):
  default       ask before any destructive tool (edits, commands)
  accept-edits  file edits inside the work dir (and --add-dir folders) run without
                asking, and so do commands the workspace-write sandbox confines
                (network off); edits elsewhere and other commands still ask
  auto          never ask (same as --yes)
  plan          read-only; destructive tools are refused and the model presents a plan
  Without a terminal to ask (-p, pipes, CI), a call that needs asking is refused and the
  model is told why.

config (lowest to highest precedence):
  ~/.agentica/config.toml, <project>/.agentica/config.toml, environment
  (AGENTICA_PROVIDER, AGENTICA_MODEL, AGENTICA_BASE_URL, AGENTICA_API_KEY,
  AGENTICA_PERMISSION_MODE, or the provider's own key variable such as OPENAI_API_KEY),
  then flags. AGENTICA_HOME moves ~/.agentica. Every key: config.example.toml.

{exitcodes.HELP_TEXT}
"""


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"agentica: error: {message}\nRun 'agentica --help' for all options.\n")
        sys.exit(exitcodes.USAGE_ERROR)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):  # also NaN
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0 (0: no limit), got {text!r}")
    return value


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="agentica",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("prompt", nargs="*", help="the task (with -p), or a first message for the interactive session")
    p.add_argument("-p", "--print", dest="print_mode", action="store_true", help="run one task, print the answer, exit")
    p.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="with -p: text (final answer only; progress on stderr), json (one object at the end), "
        "stream-json (every event as a JSON line)",
    )
    model = p.add_argument_group("model")
    model.add_argument("-m", "--model", help="model id, e.g. gpt-4o, glm-4.6, deepseek-chat")
    model.add_argument("--provider", help="openai, zhipuai, deepseek, moonshot, qwen, openrouter, ollama, openai-like")
    model.add_argument("--base-url", help="an OpenAI-compatible endpoint")
    model.add_argument("--api-key", help="the API key (prefer the config file or an env var)")
    model.add_argument(
        "--request-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give up on a model request that has no complete answer after SECONDS, retries included "
        "(config model.request_timeout; default 900; 0: no limit)",
    )
    perm = p.add_argument_group("permissions")
    perm.add_argument("--permission-mode", choices=("default", "accept-edits", "auto", "plan"), help="see below")
    perm.add_argument("-y", "--yes", action="store_true", help="run destructive tools without asking (= auto)")
    perm.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="confine commands: workspace-write (default; write only the work folders, no network, "
        "no ~/.ssh ...), read-only, or off (config sandbox.mode)",
    )
    perm.add_argument(
        "--trust", action="store_true", help="trust this project's .agentica/config.toml (MCP servers, ...)"
    )
    where = p.add_argument_group("folders")
    where.add_argument("-C", "--work-dir", type=Path, help="the project folder (default: the current folder)")
    where.add_argument("--add-dir", type=Path, action="append", default=[], help="another folder tools may use")
    sess = p.add_argument_group("sessions")
    sess.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="resume this folder's latest session"
    )
    sess.add_argument("-r", "--resume", metavar="ID", help="resume the session ID")
    sess.add_argument("--no-session", action="store_true", help="do not save this conversation")
    sess.add_argument(
        "--undo", action="store_true",
        help="put back the files the last turn of this folder's latest session (or --resume ID) changed, and exit",
    )
    sess.add_argument(
        "--force", action="store_true", help="with --undo: also overwrite files changed after that turn ended"
    )
    p.add_argument(
        "--tools",
        action="append",
        metavar="NAMES",
        help="add toolkits, comma-separated: arxiv, wikipedia, weather, duckduckgo, crawler, browser, ... "
        "(config tools.enable; /tools shows their state)",
    )
    p.add_argument("--max-turns", type=int, help="stop after this many model requests")
    p.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    return p


def flag_settings(args: argparse.Namespace) -> dict[str, object]:
    """Command-line values as dotted config keys (the top precedence layer)."""
    mode = "auto" if args.yes else args.permission_mode
    from agentica_cli.cli.toolkit_setup import parse_tools_flag

    return {
        "tools.enable": parse_tools_flag(args.tools),
        "model.name": args.model,
        "model.provider": args.provider,
        "model.base_url": args.base_url,
        "model.api_key": args.api_key,
        "model.request_timeout": args.request_timeout,
        "permissions.mode": mode,
        "tools.max_turns": args.max_turns,
        "sandbox.mode": args.sandbox,
    }


def fail(message: str, code: int = exitcodes.USAGE_ERROR) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:
        from agentica_cli import __version__

        print(f"agentica {__version__}")
        return exitcodes.OK
    from agentica_cli.cli.process_hardening import harden_process

    harden_process()  # before anything runs a child that could read our environ (~1 ms)
    if args.yes and args.permission_mode not in (None, "auto"):
        return fail(f"--yes conflicts with --permission-mode {args.permission_mode}")
    if args.continue_ and args.resume:
        return fail("use either --continue or --resume ID, not both")
    if args.force and not args.undo:
        return fail("--force goes with --undo")
    if args.max_turns is not None and args.max_turns < 1:
        return fail("--max-turns must be at least 1")
    work_dir = (args.work_dir or Path.cwd()).expanduser()
    if not work_dir.is_dir():
        return fail(f"--work-dir {work_dir}: no such folder")
    work_dir = Path(os.path.realpath(work_dir))
    for extra in args.add_dir:
        if not extra.expanduser().is_dir():
            return fail(f"--add-dir {extra}: no such folder")

    from agentica_cli.cli.config import ConfigError, check_mcp_servers, load_settings
    from agentica_cli.cli.runtime import check_model_timeouts
    from agentica_cli.cli.trust import is_trusted, trust

    try:
        if args.trust:
            trust(work_dir)
        settings = load_settings(work_dir, flag_settings(args), trusted=is_trusted(work_dir))
        check_mcp_servers(settings)
        from agentica_cli.cli.toolkit_setup import check_toolkits

        check_toolkits(settings)
        check_model_timeouts(settings)
        from agentica_cli.cli.checkpoint_setup import checkpoint_options

        checkpoint_options(settings)
        from agentica_cli.cli.sandbox_settings import sandbox_for, unconfined_warning

        sandbox = sandbox_for(settings, work_dir, args.add_dir)
    except ConfigError as err:
        return fail(f"config error: {err}")
    warning = unconfined_warning(sandbox)
    if warning and (args.print_mode or not sys.stdin.isatty()):  # the REPL's banner says it
        sys.stderr.write(f"agentica: warning: {warning}\n")

    if args.undo:
        from agentica_cli.cli.undo_run import run_undo

        return run_undo(args, settings, work_dir)
    prompt = " ".join(args.prompt)
    stdin_is_tty = sys.stdin.isatty()
    if args.print_mode or not stdin_is_tty:
        from agentica_cli.cli.printers import run_print

        return run_print(args, settings, work_dir, prompt, read_stdin=not stdin_is_tty)
    if args.output_format != "text":
        return fail("--output-format needs -p")
    from agentica_cli.cli.repl import run_repl

    return run_repl(args, settings, work_dir, prompt)


if __name__ == "__main__":
    sys.exit(main())
