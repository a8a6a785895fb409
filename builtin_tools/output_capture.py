"""Moved to agentica_cli.tools.local.output_capture (shared with the toolkits, which never import
builtin_tools); this name stays importable, as the same module object (a monkeypatch of either
name patches both)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentica_cli.tools.local.output_capture import *  # noqa: F403
else:
    import sys

    from agentica_cli.tools.local import output_capture

    sys.modules[__name__] = output_capture
