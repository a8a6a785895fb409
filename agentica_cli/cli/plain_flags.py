"""`agentica -p` and `agentica batch` command lines read without typer, when every word is one
this reader knows.

Typer (and the click under it) is ~8% of a one-answer `agentica -p` run's instructions (873 M
-> 801 M without it; 10-30 ms of its start) and ~3.5 ms of CPU to parse a command line: at every
`-p` start, and in a batch, where the zygote imported typer before any session could fork and
each forked session parsed its argv again on busy cores (docs/performance.md). The command
lines scripts and the batch write are plain: `-p`, a few flags each given once as `--flag
VALUE`, the prompt words. Those are read here into the same namespace the typer command gives
`launch.start` (a test compares the two on every flag here). A batch's own command line (`agentica
batch TASKS.jsonl --workers N ...`, what scripts and CI write) is read the same way into the
flags cli/batch_commands.py gives cli/batch_start.py: its process then starts its first
worktrees ~45 ms sooner, instead of importing typer beside its zygote's imports.

Anything else returns None and goes to typer, which reads it or says what is wrong, as before:
a flag not listed here, `--flag=value` or a bundle of short flags, a flag given twice, `--`,
a value typer would refuse or might read differently (not one of a choice's values, not a whole
number, one starting with `-`, an empty one, an existing path that cannot be read), help,
version, shell completion.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from agentica_cli.cli.flag_choices import (
    INPUT_FORMATS,
    OUTPUT_FORMATS,
    PERMISSION_MODES,
    REASONING_EFFORTS,
    SANDBOX_MODES,
)

if TYPE_CHECKING:
    from agentica_cli.cli.batch_start import BatchArgs

_Flags = TypeVar("_Flags")
_NOT_READ = object()  # a converter's answer for a value typer is to judge


def _one_of(choices: tuple[str, ...]) -> Callable[[str], object]:
    return lambda value: value if value in choices else _NOT_READ


def _whole_number(value: str) -> object:
    try:
        return int(value)  # what click's INT does (launch.start checks the range)
    except ValueError:
        return _NOT_READ


def _number(value: str) -> object:
    try:
        return float(value)  # what click's FLOAT does (launch.start checks the range)
    except ValueError:
        return _NOT_READ


def _tokens(value: str) -> object:
    number = _whole_number(value)  # commands._positive: a whole number >= 1
    return number if isinstance(number, int) and number >= 1 else _NOT_READ


def _seconds(value: str) -> object:
    number = _number(value)  # commands._seconds: a number >= 0, not infinite
    return number if isinstance(number, float) and 0 <= number < float("inf") else _NOT_READ


def _path(value: str) -> object:
    # typer's Path: any path, but one that exists must be readable
    if os.path.exists(value) and not os.access(value, os.R_OK):
        return _NOT_READ
    return Path(value)


# flag -> (the namespace attribute, how its value is read)
_VALUE_FLAGS: dict[str, tuple[str, Callable[[str], object]]] = {
    "--output-format": ("output_format", _one_of(OUTPUT_FORMATS)),
    "--input-format": ("input_format", _one_of(INPUT_FORMATS)),
    "-m": ("model", str),
    "--model": ("model", str),
    "--provider": ("provider", str),
    "--base-url": ("base_url", str),
    "--api-key": ("api_key", str),  # `--api-key -` (read stdin) starts with "-": typer's
    "--api-key-file": ("api_key_file", _path),
    "--request-timeout": ("request_timeout", _seconds),
    "--max-tokens": ("max_tokens", _tokens),
    "--reasoning-effort": ("reasoning_effort", _one_of(REASONING_EFFORTS)),
    "--permission-mode": ("permission_mode", _one_of(PERMISSION_MODES)),
    "--sandbox": ("sandbox", _one_of(SANDBOX_MODES)),
    "--system-prompt": ("system_prompt", str),
    "--system-prompt-file": ("system_prompt_file", _path),
    "--append-system-prompt": ("append_system_prompt", str),
    "--append-system-prompt-file": ("append_system_prompt_file", _path),
    "-C": ("work_dir", _path),
    "--work-dir": ("work_dir", _path),
    "--max-turns": ("max_turns", _whole_number),
    "--max-cost": ("max_cost", _number),
}
# the repeatable ones: each value appended, in order (typer's list options)
_LIST_FLAGS: dict[str, tuple[str, Callable[[str], object]]] = {
    "--add-dir": ("add_dir", _path),
    "--mcp-config": ("mcp_config", str),
    "--image": ("image", str),
}
_SWITCHES = {"-p": "print_mode", "--print": "print_mode", "-y": "yes", "--yes": "yes", "--trust": "trust",
             "--no-session": "no_session", "--no-checkpoints": "no_checkpoints",
             "--strict-mcp-config": "strict_mcp_config", "-c": "continue_",
             "--continue": "continue_"}


def _read_words(args: list[str], switches: dict[str, str], value_flags: dict[str, tuple[str, Callable[[str], object]]],
                list_flags: dict[str, tuple[str, Callable[[str], object]]] | None = None,
                ) -> tuple[dict[str, object], list[str]] | None:
    """(the flags read, by attribute: a switch True, a value converted, a list flag's values in
    order; the other words, in order) or None: a word or value these tables do not take as
    plain (an unknown flag, one given twice, a value missing, empty, like a flag or refused)."""
    list_flags = list_flags or {}
    fields: dict[str, object] = {}
    others: list[str] = []
    words = iter(args)
    for word in words:
        if not word.startswith("-"):
            others.append(word)
            continue
        if word in switches:
            if switches[word] in fields:
                return None
            fields[switches[word]] = True
            continue
        listed = word in list_flags
        flag = list_flags.get(word) or value_flags.get(word)
        if flag is None or (flag[0] in fields and not listed):
            return None
        attribute, convert = flag
        value = next(words, None)
        if not value or value.startswith("-"):
            return None
        read = convert(value)
        if read is _NOT_READ:
            return None
        if listed:
            values = fields.setdefault(attribute, [])
            assert isinstance(values, list)
            values.append(read)
        else:
            fields[attribute] = read
    return fields, others


def read_plain_command_line(args: list[str]) -> argparse.Namespace | None:
    """The main command's namespace for `args` (a -p command line), or None: typer reads it."""
    from agentica_cli.cli.launch import default_args

    read = _read_words(args, _SWITCHES, _VALUE_FLAGS, _LIST_FLAGS)
    if read is None:
        return None
    fields, prompt = read
    namespace = default_args()
    for attribute, value in fields.items():
        setattr(namespace, attribute, value)
    if not namespace.print_mode:
        return None
    namespace.prompt = prompt
    return namespace


def _count(value: str) -> object:
    from agentica_cli.cli.batch_start import count

    number = count(value)  # what the batch command's own parser takes
    return _NOT_READ if number is None else number


def _price(value: str) -> object:
    from agentica_cli.cli.batch_start import price

    number = price(value)
    return _NOT_READ if number is None else number


# the batch command's flags: flag -> (BatchArgs field, how its value is read)
_BATCH_VALUE_FLAGS: dict[str, tuple[str, Callable[[str], object]]] = {
    "-o": ("output", _path),
    "--output": ("output", _path),
    "-j": ("workers", _count),
    "--workers": ("workers", _count),
    "--attempts": ("attempts", _count),
    "--max-tokens": ("max_tokens", _count),
    "--max-cost": ("max_cost", _price),
    "--price-in": ("price_in", _price),
    "--price-out": ("price_out", _price),
    "--ray": ("ray", str),
    "-m": ("model", str),
    "--model": ("model", str),
    "--provider": ("provider", str),
    "--base-url": ("base_url", str),
    "--api-key-file": ("api_key_file", _path),
    "--sandbox": ("sandbox", str),  # any word: the command itself says which ones it takes
    "--max-turns": ("max_turns", _count),
}
_BATCH_SWITCHES = {"--no-worktrees": "no_worktrees", "--plain": "plain_lines", "--checkpoints": "checkpoints"}


def read_plain_batch_line(args: list[str]) -> BatchArgs | None:
    """The batch command's flags (cli/batch_start.BatchArgs) for `args` (the words after
    `batch`), or None: typer reads them. One TASKS.jsonl word, each flag at most once."""
    from agentica_cli.cli.batch_start import BatchArgs

    read = _read_words(args, _BATCH_SWITCHES, _BATCH_VALUE_FLAGS)
    if read is None:
        return None
    fields, tasks = read
    if len(tasks) != 1 or not tasks[0]:
        return None
    tasks_file = _path(tasks[0])
    if tasks_file is _NOT_READ:
        return None
    return BatchArgs(tasks_file=tasks_file, **fields)  # type: ignore[arg-type]


def start_plain(namespace: argparse.Namespace) -> int:
    """launch.start(namespace), ended as typer's main ends its command (commands.run)."""
    from agentica_cli.cli.launch import start

    return run_plain(start, namespace)


def run_plain(command: Callable[[_Flags], int], flags: _Flags) -> int:
    """command(flags), ended as typer's main ends a command (commands.run): Ctrl-C exits 130,
    the end of stdin where an answer was awaited says "aborted" (130), and a closed stdout
    (`| head`) ends the process with 1 and no traceback."""
    import sys

    from agentica_cli.app import exitcodes

    try:
        return command(flags)
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED
    except EOFError:
        sys.stderr.write("\nagentica: aborted\n")
        return exitcodes.INTERRUPTED
    except BrokenPipeError:
        sys.stdout = _QuietOnBrokenPipe(sys.stdout)
        sys.stderr = _QuietOnBrokenPipe(sys.stderr)
        raise SystemExit(1) from None


class _QuietOnBrokenPipe:
    """A stream whose flush ignores a reader that went away (as click's wrapper does), so that
    the interpreter's last flush at exit prints no error."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def flush(self) -> None:
        try:
            self._stream.flush()  # type: ignore[attr-defined]
        except BrokenPipeError:
            pass

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
