"""What the model is told after the user puts files back (/undo, /redo, /rewind N code,
`agentica --undo` / `--redo`): a short note at the head of the next message, as Claude Code's
rewind tells its model, so it does not go on believing its reverted edits are still there.

In a session the REPL adds the note to the next message itself. `agentica --undo` ends before
any message: it leaves the note beside the session file (`<id>.restore-note`), and the next
`--continue` / `--resume` of that session (REPL or -p) takes it.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_FILES_NAMED = 20

VERBS = {
    "undo": "undid turn {turn} ({prompt}): the files it changed are back as they were before it",
    "redo": "redid turn {turn} ({prompt}): the files it changed are back as that turn left them",
    "rewind": "rewound the code to before turn {turn} ({prompt}): the files changed since are back as they "
              "were before it",
}


def restore_note(action: str, turn: int, prompt: str, files: list[str]) -> str:
    """The note for `action` ("undo", "redo", "rewind") of `turn` that restored `files`."""
    short = " ".join(prompt.split())
    short = short if len(short) <= 60 else short[:59] + "…"
    named = ", ".join(files[:MAX_FILES_NAMED]) + (f" and {len(files) - MAX_FILES_NAMED} more"
                                                    if len(files) > MAX_FILES_NAMED else "")
    what = VERBS[action].format(turn=turn, prompt=f'"{short}"')
    after = (" Edits you made in those turns are no longer in these files; read them again before relying on "
             "their content." if action != "redo" else " Read them again before relying on their content.")
    return f"[Note from agentica: the user {what}. Restored: {named or 'no files'}.{after}]"


def note_path(session_file: Path) -> Path:
    return session_file.with_suffix(".restore-note")


def leave_note(session_file: Path, note: str) -> None:
    """Keep `note` for the session's next message (appended to one left before and not yet sent)."""
    path = note_path(session_file)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(note + "\n")


def take_note(session_file: Path) -> str:
    """The notes left for this session (then gone), or ""."""
    path = note_path(session_file)
    try:
        text = path.read_text(encoding="utf-8")
        path.unlink()
    except OSError:
        return ""
    return text.strip()
