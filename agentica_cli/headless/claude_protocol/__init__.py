"""The Claude Agent SDK's protocol: programs written for `claude-agent-sdk` run on agentica.

`ClaudeAgentOptions(cli_path="agentica")` makes the SDK start agentica the way it starts Claude
Code: stream-json in and out, no -p (or `agentica --protocol claude`). Then agentica reads the
SDK's flags (flags.py), speaks its control protocol both ways (channel.py, control_requests.py,
permissions.py, sdk_hooks.py, sdk_mcp.py) and writes Claude Code's message schema (messages.py, tool_names.py);
run.py ties them to the -p stream-json run. docs/sdk.md is the user's page.

Only the standard library here: cli/app.py asks `is_claude_command_line` before any parser loads,
then reads the flags with flags.parse_claude_command_line and starts as any run (cli/launch.py).
"""

from __future__ import annotations


def is_claude_command_line(argv: list[str]) -> bool:
    """Whether argv asks for the Claude protocol: `--protocol claude`, or stream-json input and
    output without -p (how the Claude Agent SDK runs its CLI)."""
    from itertools import pairwise

    pairs = set(pairwise(argv)) | {tuple(word.split("=", 1)) for word in argv if "=" in word}
    if ("--protocol", "claude") in pairs:
        return True
    streams = ("--input-format", "stream-json") in pairs and ("--output-format", "stream-json") in pairs
    return streams and not any(word in ("-p", "--print") for word in argv)

