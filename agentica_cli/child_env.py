"""The environment of the programs agentica runs for the user rather than for the model:
hooks (command hooks and the headers of http hooks), the status line command, `!command`.

They get the user's own environment, as Claude Code gives its hooks (a hook script may need
the user's GITHUB_TOKEN); `execute` and MCP servers get a scrubbed one instead
(agentica_cli.tools.local.execute). What they must not get is a key agentica obtained from anywhere but
that environment: `--api-key`, `--api-key-file`, a config file, the first-run prompt. agentica
never puts such a key into os.environ, but a library it loads could (some SDKs export their key
for their own subprocesses), so the CLI registers it here (`withhold`) and each of these
commands gets an environment without any variable holding it. A value the user's environment
already held when agentica started stays: it is theirs. Standard library only.
"""

from __future__ import annotations

import os

# The user's environment, as agentica started with it (this module is imported at start-up:
# cli/launch.py), before any library could add to it.
_USER_ENVIRONMENT_VALUES = frozenset(os.environ.values())
_MIN_EMBEDDED = 8  # a shorter key is only matched as a whole value ("ollama" is in many paths)
_withheld: set[str] = set()


def note_user_environment() -> None:
    """Take os.environ, as it is now, for the user's own environment: a process forked from a
    warm one (the batch's zygote) calls this once it has the task's environment."""
    global _USER_ENVIRONMENT_VALUES
    _USER_ENVIRONMENT_VALUES = frozenset(os.environ.values())
    _withheld.clear()


def withhold(secret: str | None) -> None:
    """Keep `secret` out of these commands' environment, unless the user's own had it."""
    if secret and secret not in _USER_ENVIRONMENT_VALUES:
        _withheld.add(secret)


def holds_withheld(value: str) -> bool:
    return any(value == secret or (len(secret) >= _MIN_EMBEDDED and secret in value) for secret in _withheld)


def command_environment(**extra: str) -> dict[str, str]:
    """os.environ without the variables that hold a withheld secret, plus `extra`."""
    env = {name: value for name, value in os.environ.items() if not holds_withheld(value)}
    env.update(extra)
    return env
