"""Users' own extensions, from files: custom slash commands, sub-agents, skills, lifecycle hooks.

The formats are Claude Code's (Markdown with YAML front matter; `hooks` in settings JSON), so
a team's `.claude/` files work here unchanged where the concepts match. This package reads and
interprets them; it knows nothing of the terminal (the CLI wires them in). Only the standard
library and `builtin_tools` are imported, so loading costs no start-up time.

Places, lowest to highest precedence (a later one wins a name clash):
~/.claude/X, ~/.agentica/X, <project>/.claude/X, <project>/.agentica/X; the project's only once
the user trusts the project (see `Places`).
"""

from agentica_cli.extensions.places import Places

__all__ = ["Places"]
