"""The API key given on the command line: `--api-key KEY`, `--api-key -` or `--api-key-file PATH`.

A process's command line is readable by every local user (`ps`, /proc/PID/cmdline) for as
long as it runs. Once read, the values of both flags are overwritten in it
(process_hardening.blank_argv_values) and the key file is hidden from sandboxed commands, but
the key is in the process list until then, so `--api-key KEY` is kept for compatibility but
warned about; `--api-key -` (stdin, without echo on a terminal) and `--api-key-file PATH` keep
the key out of the process list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

ARGV_WARNING = (
    "warning: --api-key KEY shows the key in the process list (ps), where other users of this "
    "machine can read it; prefer AGENTICA_API_KEY, api_key in ~/.agentica/config.toml, "
    "--api-key-file PATH or --api-key - (read from stdin)"
)


class KeyInputError(Exception):
    """The key could not be read from where the command line said; the message says why."""


def _one_key(text: str, where: str) -> str:
    key = text.strip()
    if not key:
        raise KeyInputError(f"{where}: no key there (empty)")
    if any(ch.isspace() for ch in key):
        raise KeyInputError(f"{where}: the key must be one line without spaces")
    return key


def read_key_file(path: str) -> str:
    where = f"--api-key-file {path}"
    try:
        with open(Path(path).expanduser(), encoding="utf-8") as fh:
            text = fh.read(64 * 1024)  # a key is short; a device or huge file is not read whole
    except OSError as err:
        raise KeyInputError(f"{where}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise KeyInputError(f"{where}: not UTF-8 text") from None
    return _one_key(text, where)


def read_key_stdin(stdin: TextIO) -> str:
    """One line from stdin; on a terminal asked for without echo. With `-p`, what follows the
    first line of piped input is still read as the prompt."""
    if stdin.isatty():
        import getpass

        try:
            text = getpass.getpass("API key: ")
        except (EOFError, KeyboardInterrupt):
            text = ""
    else:
        text = stdin.readline()
    return _one_key(text, "--api-key -")


def resolve_key_flags(args: Any, stdin: TextIO) -> bool:
    """Put the command line's key in `args.api_key`, reading `--api-key-file` or stdin (`-`).
    Returns True when the key was given in plain text on the command line (warn about it,
    once the config has loaded). Raises KeyInputError."""
    path = getattr(args, "api_key_file", None)
    if path is not None and args.api_key is not None:
        raise KeyInputError("use either --api-key or --api-key-file, not both")
    if path is not None:
        args.api_key, args.api_key_file = read_key_file(str(path)), None
        _keep_from_commands(str(path))
        return False
    if args.api_key == "-":
        args.api_key = read_key_stdin(stdin)
        return False
    _keep_from_commands(None)
    return bool(args.api_key)


def _keep_from_commands(key_file: str | None) -> None:
    """The key file hidden from sandboxed commands, and neither the file's path nor a key
    given in plain text left in our command line (/proc/PID/cmdline: commands read it)."""
    from agentica_cli.app.process_hardening import blank_argv_values

    if key_file is not None:
        from agentica_cli.sandbox.policy import hide_from_commands

        hide_from_commands(Path(key_file).expanduser())
    blank_argv_values(("--api-key", "--api-key-file"))
