"""The command line on typer: `agentica [flags] [PROMPT]...` and its subcommands
`agentica acp`, `agentica mcp list|add|remove`, `agentica sessions list|show|rm`, `agentica models`,
`agentica doctor`.

The main command takes free words (the prompt), so it cannot also be a group whose first word
names a subcommand; `run` picks one of two typer apps by the first word instead. The main
command's flags go to `launch.start` as an argparse-style namespace, the same attributes the
printers and the REPL have always read. Usage errors print argparse's wording
(`agentica: error: argument --flag: ...`) and exit 2, as the tests and users' scripts expect.
Nothing heavy is imported here: the subcommands import their modules when they run.

No `from __future__ import annotations` here, nor in subcommands.py and batch_commands.py: typer
reads the flags off the annotations, and as strings it would evaluate (compile) each of them
again at every start, ~50 M instructions (~12 ms) of `agentica -p` before its first request.
"""

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from agentica_cli.app import exitcodes
from agentica_cli.cli.flag_choices import (
    INPUT_FORMATS,
    OUTPUT_FORMATS,
    PERMISSION_MODES,
    REASONING_EFFORTS,
    SANDBOX_MODES,
)

SUBCOMMANDS = ("acp", "mcp", "sessions", "models", "doctor", "worktrees", "batch", "batch-report")

DESCRIPTION = """\
A terminal coding agent. PROMPT is the task (with -p), or a first message. Without -p, opens
an interactive session in the current folder; with -p, runs one task and exits.
Piped stdin is read: `cat err.log | agentica -p "explain"` sends the prompt plus the text,
`echo "task" | agentica -p` uses stdin as the prompt."""

EPILOG = f"""\
examples:
  agentica                                  interactive session in this folder
  agentica -p "fix the failing test" -y     one task, allow edits and commands
  git diff | agentica -p "review this"      piped text is attached to the prompt
  agentica -p "list TODOs" --output-format json
  agentica -p "fix the tests" --allowed-tools "execute(pytest *)"
  agentica -p --input-format stream-json --output-format stream-json
                                            a conversation: messages on stdin, events on stdout
  agentica --protocol claude                Claude Code's stream-json protocol, for programs written for
                                            the Claude Agent SDK (their cli_path; docs/sdk.md)
  agentica --continue                       resume this folder's latest session

commands (agentica COMMAND --help for each):
  agentica acp                              serve an editor over the Agent Client Protocol
  agentica mcp list|add|remove              the MCP servers in your config
  agentica mcp serve [--port N]             agentica as an MCP server (stdio, or HTTP with --port)
  agentica sessions list|show|rm            saved conversations
  agentica models                           the models the configured endpoint serves
  agentica doctor                           what is found, loaded and skipped here, and why
  agentica worktrees list|rm                the git worktrees --worktree made
  agentica batch TASKS.jsonl                many tasks, each in its own worktree (docs/batch.md)
  agentica --install-completion             shell completion (bash, zsh, fish, PowerShell)

permission modes (--permission-mode, config permissions.mode, /permissions):
  default       ask before any destructive tool (edits, commands)
  accept-edits  file edits inside the work dir (and --add-dir folders) run without
                asking, and so do commands the workspace-write sandbox confines
                (network off); edits elsewhere and other commands still ask
  auto          never ask (same as --yes)
  plan          read-only; destructive tools are refused and the model presents a plan
  Without a terminal to ask (-p, pipes, CI), a call that needs asking is refused and the
  model is told why. --allowed-tools / --disallowed-tools add [permissions] rules for one run.

config (lowest to highest precedence):
  ~/.agentica/config.toml, <project>/.agentica/config.toml, environment
  (AGENTICA_PROVIDER, AGENTICA_MODEL, AGENTICA_BASE_URL, AGENTICA_API_KEY,
  AGENTICA_PERMISSION_MODE, or the provider's own key variable such as OPENAI_API_KEY),
  then flags. AGENTICA_HOME moves ~/.agentica. Every key: config.example.toml.

{exitcodes.HELP_TEXT}
"""


def _verbatim(text: str) -> str:
    """Click rewraps help paragraphs; a `\\b` line before each keeps its own line breaks."""
    return "\n\n".join("\b\n" + block for block in text.split("\n\n"))


def _choice(choices: tuple[str, ...]) -> Any:
    def parse(value: str) -> str:
        if value not in choices:
            listed = ", ".join(repr(c) for c in choices)
            raise typer.BadParameter(f"invalid choice: {value!r} (choose from {listed})")
        return value

    return parse


def _complete(choices: tuple[str, ...]) -> Any:
    return lambda incomplete: [c for c in choices if c.startswith(incomplete)]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):  # also NaN
        raise typer.BadParameter(f"expected a number of seconds >= 0 (0: no limit), got {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise typer.BadParameter(f"expected a whole number of tokens >= 1, got {text!r}")
    return value


def _rules(values: Optional[list[str]]) -> list[str]:
    """--allowed-tools / --disallowed-tools: each value a list of rules (commas or spaces
    between them); every rule is checked here, so a typo stops the run before anything starts."""
    if not values:
        return []
    from agentica_cli.app.permissions.permission_rules import RuleError, split_rule_list

    rules: list[str] = []
    for value in values:
        try:
            rules += split_rule_list(value)
        except RuleError as err:
            raise typer.BadParameter(str(err)) from None
    return rules


def _show_version(value: bool) -> bool:
    if value:
        from agentica_cli import __version__

        typer.echo(f"agentica {__version__}")
        raise typer.Exit(exitcodes.OK)
    return value


def agentica(
    prompt: Annotated[Optional[list[str]], typer.Argument(
        metavar="PROMPT", show_default=False, hidden=True)] = None,  # described in DESCRIPTION
    print_mode: Annotated[bool, typer.Option("-p", "--print", help="run one task, print the answer, exit")] = False,
    output_format: Annotated[str, typer.Option(
        "--output-format", parser=_choice(OUTPUT_FORMATS), autocompletion=_complete(OUTPUT_FORMATS),
        metavar="text|json|stream-json",
        help="with -p: text (final answer only; progress on stderr), json (one object at the end), "
        "stream-json (every event as a JSON line)")] = "text",
    input_format: Annotated[str, typer.Option(
        "--input-format", parser=_choice(INPUT_FORMATS), autocompletion=_complete(INPUT_FORMATS),
        metavar="text|stream-json",
        help="with -p --output-format stream-json: stream-json reads user messages from stdin, one JSON "
        "line each, each a turn of the same session, until stdin ends")] = "text",
    model: Annotated[Optional[str], typer.Option(
        "-m", "--model", metavar="ID", help="model id, e.g. gpt-4o, glm-5.1, deepseek-v4-flash (`agentica models` "
        "lists them)")] = None,
    provider: Annotated[Optional[str], typer.Option(
        "--provider", metavar="NAME",
        help="openai, deepseek, zhipuai (zai, zhipuai-coding, zai-coding), moonshot (moonshot-intl), qwen "
        "(qwen-intl), openrouter, ollama, lmstudio, llamacpp, vllm, openai-like")] = None,
    base_url: Annotated[Optional[str], typer.Option(
        "--base-url", metavar="URL", help="an OpenAI-compatible endpoint")] = None,
    api_key: Annotated[Optional[str], typer.Option(
        "--api-key", metavar="KEY", help="the API key; `-` reads it from stdin (a KEY here is visible "
        "in the process list: prefer --api-key-file, the config file or AGENTICA_API_KEY)")] = None,
    api_key_file: Annotated[Optional[Path], typer.Option(
        "--api-key-file", metavar="PATH", help="read the API key from this file")] = None,
    request_timeout: Annotated[Optional[float], typer.Option(
        "--request-timeout", parser=_seconds, metavar="SECONDS",
        help="give up on a model request that has no complete answer after SECONDS, retries included "
        "(config model.request_timeout; default 900; 0: no limit)")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(
        "--max-tokens", parser=_positive, metavar="N",
        help="the longest answer the model may write, in tokens (config model.max_tokens)")] = None,
    reasoning_effort: Annotated[Optional[str], typer.Option(
        "--reasoning-effort", parser=_choice(REASONING_EFFORTS), autocompletion=_complete(REASONING_EFFORTS),
        metavar="LEVEL", help="how hard a reasoning model thinks: " + ", ".join(REASONING_EFFORTS)
        + " (sent as reasoning_effort; which ones a model takes is the provider's; config model.reasoning_effort)"
        )] = None,
    permission_mode: Annotated[Optional[str], typer.Option(
        "--permission-mode", parser=_choice(PERMISSION_MODES), autocompletion=_complete(PERMISSION_MODES),
        metavar="default|accept-edits|auto|plan", help="see below")] = None,
    yes: Annotated[bool, typer.Option("-y", "--yes", help="run destructive tools without asking (= auto)")] = False,
    allowed_tools: Annotated[Optional[list[str]], typer.Option(
        "--allowed-tools", "--allowedTools", metavar="RULES", callback=_rules,
        help="permission rules whose calls run without asking, for this run (besides the config's "
        "[permissions] allow; never saved): e.g. 'Read, execute(pytest *) Bash(git diff:*)'; commas or "
        "spaces between rules; repeatable")] = None,
    disallowed_tools: Annotated[Optional[list[str]], typer.Option(
        "--disallowed-tools", "--disallowedTools", metavar="RULES", callback=_rules,
        help="permission rules whose calls are refused in every mode, --yes included, for this run "
        "(besides the config's [permissions] deny); same form; repeatable")] = None,
    sandbox: Annotated[Optional[str], typer.Option(
        "--sandbox", parser=_choice(SANDBOX_MODES), autocompletion=_complete(SANDBOX_MODES),
        metavar="workspace-write|read-only|off",
        help="confine commands: workspace-write (default; write only the work folders, no network, "
        "no ~/.ssh ...), read-only, or off (config sandbox.mode)")] = None,
    system_prompt: Annotated[Optional[str], typer.Option(
        "--system-prompt", metavar="TEXT",
        help="replace agentica's base instructions with TEXT for this run (AGENTS.md, config "
        "instructions, the tools' notes and the environment block stay; not kept by --continue)")] = None,
    system_prompt_file: Annotated[Optional[Path], typer.Option(
        "--system-prompt-file", metavar="PATH", help="--system-prompt, read from a file")] = None,
    append_system_prompt: Annotated[Optional[str], typer.Option(
        "--append-system-prompt", metavar="TEXT",
        help="add TEXT at the end of the system prompt for this run (not kept by --continue)")] = None,
    append_system_prompt_file: Annotated[Optional[Path], typer.Option(
        "--append-system-prompt-file", metavar="PATH", help="--append-system-prompt, read from a file")] = None,
    trust: Annotated[bool, typer.Option(
        "--trust", help="trust this project's .agentica/config.toml and .mcp.json (MCP servers, ...)")] = False,
    mcp_config: Annotated[Optional[list[str]], typer.Option(
        "--mcp-config", metavar="FILE|JSON",
        help="MCP servers for this run, from a file or a JSON string in Claude Code's format "
        "({\"mcpServers\": {...}}); repeatable")] = None,
    strict_mcp_config: Annotated[bool, typer.Option(
        "--strict-mcp-config", help="use only the --mcp-config servers, ignoring every other MCP configuration "
        "(config files, .mcp.json)")] = False,
    work_dir: Annotated[Optional[Path], typer.Option(
        "-C", "--work-dir", metavar="DIR", help="the project folder (default: the current folder)")] = None,
    add_dir: Annotated[Optional[list[Path]], typer.Option(
        "--add-dir", metavar="DIR", help="another folder tools may use (repeatable)")] = None,
    worktree: Annotated[Optional[str], typer.Option(
        "-w", "--worktree", metavar="[NAME]",
        help="run in a new git worktree (<repo>/.worktrees/NAME, branch agentica/NAME, from HEAD) so "
        "parallel sessions never touch each other's files; NAME is optional (give it as --worktree=NAME or "
        "before another flag); `agentica worktrees list|rm`")] = None,
    continue_: Annotated[bool, typer.Option(
        "-c", "--continue", help="resume this folder's latest session")] = False,
    resume: Annotated[Optional[str], typer.Option(
        "-r", "--resume", metavar="ID", help="resume the session ID")] = None,
    no_session: Annotated[bool, typer.Option("--no-session", help="do not save this conversation")] = False,
    no_checkpoints: Annotated[bool, typer.Option(
        "--no-checkpoints", help="take no checkpoints of the files this session changes (nothing for --undo; "
        "a batch's sessions in its worktrees run so, their work committed on their branches)")] = False,
    undo: Annotated[bool, typer.Option(
        "--undo", help="put back the files the last turn of this folder's latest session (or --resume ID) "
        "changed, and exit")] = False,
    redo: Annotated[bool, typer.Option(
        "--redo", help="bring back the files the last --undo (or /undo) of this folder's latest session "
        "(or --resume ID) put back, and exit")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="with --undo/--redo: also overwrite files someone else changed during or after "
        "that turn")] = False,
    tools: Annotated[Optional[list[str]], typer.Option(
        "--tools", metavar="NAMES",
        help="add toolkits, comma-separated: arxiv, wikipedia, weather, duckduckgo, crawler, browser, "
        "code, sql, ocr, ... (config tools.enable; options in [toolkits.NAME]; /tools shows their state)")] = None,
    image: Annotated[Optional[list[str]], typer.Option(
        "--image", metavar="PATH",
        help="send an image (PNG, JPEG, GIF, WebP) with the prompt; repeatable (config model.vision)")] = None,
    max_turns: Annotated[Optional[int], typer.Option(
        "--max-turns", metavar="N", help="stop after this many model requests")] = None,
    max_cost: Annotated[Optional[float], typer.Option(
        "--max-cost", metavar="USD",
        help="with -p: stop once the run has cost this many US dollars (prices: [prices] in config.toml, "
        "or what the provider reports)")] = None,
    version: Annotated[bool, typer.Option(
        "-V", "--version", is_eager=True, callback=_show_version, help="print the version and exit")] = False,
) -> int:
    values = dict(locals())  # every flag, by the attribute names launch and the REPL read
    values.update(prompt=list(prompt or ()), add_dir=list(add_dir or ()), image=list(image or ()),
                  allowed_tools=list(allowed_tools or ()), disallowed_tools=list(disallowed_tools or ()),
                  mcp_config=list(mcp_config or ()))
    from agentica_cli.cli.launch import start

    return start(argparse.Namespace(**values))


def _root_app() -> typer.Typer:
    root = typer.Typer(add_completion=True, rich_markup_mode=None, pretty_exceptions_enable=False)
    root.command(help=DESCRIPTION, epilog=_verbatim(EPILOG), context_settings={"help_option_names": ["-h", "--help"]})(
        agentica
    )
    return root


def _commands_app() -> typer.Typer:
    from agentica_cli.cli import subcommands

    app = typer.Typer(
        add_completion=True, rich_markup_mode=None, pretty_exceptions_enable=False, no_args_is_help=True,
        help="agentica's subcommands; `agentica --help` shows the main command's flags.",
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    subcommands.register(app)
    return app


@functools.cache
def click_command(subcommand: bool) -> Any:
    """The click command of the subcommands' app or of the root one, built once a process (~25 ms
    of typer reading the signatures). Click makes a new context at every `main()`, so one command
    parses any number of command lines. (A batch's sessions do not come here: their command lines
    are plain, read by plain_flags.py.)"""
    return typer.main.get_command(_commands_app() if subcommand else _root_app())


def _completing_a_subcommand() -> bool:
    # bash sends COMP_WORDS; typer's zsh, fish and PowerShell scripts send _TYPER_COMPLETE_ARGS.
    words = (os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS") or "").split()
    if len(words) < 2 or words[1] in SUBCOMMANDS:  # no word yet: offer the subcommands
        return True
    return len(words) == 2 and any(name.startswith(words[1]) for name in SUBCOMMANDS)  # `agentica se<TAB>`


def _worktree_name_optional(argv: list[str]) -> list[str]:
    """`--worktree` / `-w` take an optional NAME (typer has no optional option values): one
    followed by nothing or by another flag becomes `--worktree=` (a name made up later)."""
    out = list(argv)
    for i, word in enumerate(out):
        if word == "--":
            break
        if word in ("--worktree", "-w") and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = "--worktree="
    return out


def run(argv: list[str]) -> int:
    if argv[:2] == ["batch", "report"]:  # `batch TASKS.jsonl` and `batch report RESULTS.jsonl`: one word
        argv = ["batch-report", *argv[2:]]
    first = argv[0] if argv else ""
    completing = "_AGENTICA_COMPLETE" in os.environ
    subcommand = first in SUBCOMMANDS or (completing and _completing_a_subcommand())
    if not subcommand:
        argv = _worktree_name_optional(argv)
    command = click_command(subcommand)
    try:
        code = command.main(args=argv, prog_name="agentica", standalone_mode=False)
    except _usage_error_class() as err:
        context = getattr(err, "ctx", None)
        if type(err).__name__ == "NoArgsIsHelpError" and context is not None:  # `agentica mcp`: its help
            sys.stdout.write(context.get_help() + "\n")
            return exitcodes.OK
        return _usage_error(err)
    except typer.Abort:
        sys.stderr.write("agentica: aborted\n")
        return exitcodes.INTERRUPTED
    return code if isinstance(code, int) else exitcodes.OK


def _usage_error_class() -> type[Exception]:
    # typer may vendor click or use the installed one: find its UsageError through a public name.
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _usage_error(err: Any) -> int:
    """argparse's wording: `agentica: error: argument --flag: problem`, usage above, exit 2."""
    ctx = getattr(err, "ctx", None)
    if ctx is not None:
        sys.stderr.write(ctx.get_usage() + "\n")
    message = err.message if isinstance(getattr(err, "message", None), str) else str(err)
    param = getattr(err, "param", None)
    if param is not None and getattr(param, "opts", None) and isinstance(err, typer.BadParameter):
        flags = "/".join(param.opts) if getattr(param, "param_type_name", "") == "option" else param.name
        message = f"argument {flags}: {message}"
    command = ctx.command_path if ctx is not None else "agentica"
    sys.stderr.write(f"agentica: error: {message}\nRun '{command} --help' for all options.\n")
    return exitcodes.USAGE_ERROR
