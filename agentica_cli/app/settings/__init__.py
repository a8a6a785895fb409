"""Settings: the config layers and their schema, Claude Code's `.mcp.json`, project paths, trust and
the command line's layer. Imports nothing itself (start-up stays lazy)."""
