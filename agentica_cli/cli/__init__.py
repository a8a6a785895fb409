"""The `agentica` command. Entry point: `agentica_cli.cli.app:main`.

Modules here are imported lazily by `app.main` so that `--version` and `--help` stay fast.
"""
