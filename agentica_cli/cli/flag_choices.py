"""The values the main command's choice flags take: shared by the typer command (commands.py)
and the reader of plain `-p` command lines (plain_flags.py), which must not import typer."""

OUTPUT_FORMATS = ("text", "json", "stream-json")
INPUT_FORMATS = ("text", "stream-json")
PERMISSION_MODES = ("default", "accept-edits", "auto", "plan")
SANDBOX_MODES = ("workspace-write", "read-only", "off")
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")  # config.REASONING_EFFORTS
