"""The application core shared by every front end (the REPL, `-p` and ACP): settings, permissions,
sessions, the agent's wiring and start-up. No rich, prompt_toolkit, typer or acp imports, and
nothing heavy at import time: this package is on the start-up path of `agentica --help`.
See docs/architecture.md."""
