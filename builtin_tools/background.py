"""Moved to agentica_cli.tools.local.background (shared with the toolkits, which never import
builtin_tools); this name stays importable, as the same module object (a monkeypatch of either
name patches both)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentica_cli.tools.local.background import *  # noqa: F403
else:
    import sys

    from agentica_cli.tools.local import background

    sys.modules[__name__] = background
