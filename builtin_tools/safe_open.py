"""Moved to agentica_cli.tools.local.safe_open (shared with the toolkits, which never import
builtin_tools); this name stays importable, as the same module object (a monkeypatch of either
name patches both)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentica_cli.tools.local.safe_open import *  # noqa: F403
else:
    import sys

    from agentica_cli.tools.local import safe_open

    sys.modules[__name__] = safe_open
