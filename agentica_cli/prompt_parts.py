"""What the user typed, out of the message the REPL sent for it.

The message sent is the typed line plus what came with it: before it, the output of `!command`s
run since the last message and agentica's notes (restore_notes.py); after it, the files, folder
listings and MCP resources its `@mentions` attached. /rewind lists and puts back what was typed,
and the resume picker shows it, not kilobytes of attached file.
"""

from __future__ import annotations

import re

# cli/command_shell and repl.run_shell: "I ran `cmd` in the shell (exit 0). Output:\n<output>\n...\n</output>"
_SHELL_BLOCK = re.compile(r"I ran `.*?` in the shell \([^)]*\)\. Output:\n<output>\n.*?\n</output>(?:\n\n|$)",
                          re.DOTALL)
_NOTE_BLOCK = re.compile(r"\[Note from agentica: .*?\](?:\n\n|$)", re.DOTALL)
# prompt_input.attach_mentions and mcp_client_ui.attach_resources
_ATTACHED = re.compile(r'\n\n<(?:file path|directory path|resource server)="')


def typed_part(message: str) -> str:
    """`message` without what the REPL added around the typed text."""
    text = message
    while True:
        match = _SHELL_BLOCK.match(text) or _NOTE_BLOCK.match(text)
        if match is None:
            break
        text = text[match.end():]
    attached = _ATTACHED.search(text)
    return text[: attached.start()] if attached else text
