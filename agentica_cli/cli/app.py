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
    args = sys.argv[1:] if argv is None else list(argv)
    if args in (["--version"], ["-V"]):  # the one answer that needs no parser
        from agentica_cli import __version__

        print(f"agentica {__version__}")
        return 0
    if not args and "_AGENTICA_COMPLETE" not in os.environ:
        from agentica_cli.cli.launch import default_args, start

        return start(default_args())
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


if __name__ == "__main__":
    sys.exit(main())
