"""Moved to agentica_cli.tools.local.file_read (shared with the toolkits, which never import
builtin_tools); this name stays importable, as the same module object (a monkeypatch of either
name patches both)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentica_cli.tools.local.file_read import *  # noqa: F403
else:
    import sys

    from agentica_cli.tools.local import file_read

    sys.modules[__name__] = file_read
