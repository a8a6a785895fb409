"""Moved to agentica_cli.tools.local.paths (shared with the toolkits, which never import
builtin_tools); this name stays importable, as the same module object (a monkeypatch of either
name patches both)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentica_cli.tools.local.paths import *  # noqa: F403
else:
    import sys

    from agentica_cli.tools.local import paths

    sys.modules[__name__] = paths
