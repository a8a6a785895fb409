"""What every part of `agentica mcp serve` reports with, importing nothing heavy: the server
answers `initialize` before a session's runtime is loaded (its first tools/call loads it)."""

from __future__ import annotations

import sys

from agentica_cli.app.safe_text import safe_text


class ServeError(Exception):
    """A request the server cannot serve (bad folder, config, unknown session): its message is
    the tool result the client reads."""


def log(text: str) -> None:
    sys.stderr.write(f"agentica mcp serve: {safe_text(text)}\n")
    sys.stderr.flush()
