"""`agentica batch`: many headless sessions, each in its own worktree, with a shared rate-limit
back-off, a budget, resumable results (results.jsonl) and an optional Ray backend.

Application logic; the live display is progress.py (rich, imported only there), the command
line is cli/batch_commands.py.
"""
