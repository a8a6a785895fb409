"""`agentica --undo` / `agentica --redo`: put back (or bring back) the files the last turn of a
session changed, from a script.

The session is this folder's latest (as --continue) or --resume ID. Files changed by someone
else (after the turn, or during it while no tool of the agent ran) are not overwritten
without --force: the run stops, lists them and exits 1. Files only someone else changed
during the turn are not the turn's and are left alone (listed). A turn whose snapshot failed
is not undone: the run says why and exits 1. With --output-format json the outcome is one
JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentica_cli.app import exitcodes
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.settings.config import Settings


def _fail(message: str, code: int = exitcodes.MODEL_ERROR) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return code


def _listed(paths: list[str], tags: dict[str, str] | None = None) -> str:
    tags = tags or {}
    return "".join(f"\n  {safe_text(path, keep_newlines=False)}{tags.get(path, '')}" for path in paths)


def conflict_message(result, action: str) -> str:
    """Which files stop an undo / redo, and why each (for --undo and the REPL alike)."""
    turn = result.turn
    during = set(result.during)
    tags = {p: "  (changed outside the agent while the turn ran)" if p in during
            else f"  (changed after turn {turn.number} ended)" for p in result.conflicts}
    what = "undone" if action == "undo" else "redone"
    return (f"not {what}: these files were changed by someone other than the agent:{_listed(result.conflicts, tags)}\n"
            f"Run again with --force to overwrite them (those changes are lost).")


def run_undo(args: argparse.Namespace, settings: Settings, work_dir: Path) -> int:
    from agentica_cli.app.checkpoint_setup import checkpoints_from_settings
    from agentica_cli.app.sessions import SessionStore
    from agentica_cli.tui.checkpoint_commands import short_prompt

    action = "redo" if getattr(args, "redo", False) else "undo"
    flag = f"--{action}"
    if args.prompt:
        return _fail(f"{flag} takes no prompt", exitcodes.USAGE_ERROR)
    session_id = args.resume
    if not session_id:
        latest = SessionStore().latest(work_dir)
        if latest is None:
            return _fail(f"{flag}: no session in this folder to {action}", exitcodes.USAGE_ERROR)
        session_id = latest.id
    checkpoints = checkpoints_from_settings(settings, work_dir, session_id)
    if checkpoints is None:
        return _fail(f"{flag}: checkpoints are off ([checkpoints] enabled = false)", exitcodes.USAGE_ERROR)
    if checkpoints.disabled:
        return _fail(f"{flag}: {safe_text(checkpoints.disabled)}")
    try:
        result = getattr(checkpoints, action)(force=args.force)
    except Exception as exc:  # git failed, or a file could not be put back: say so, no traceback
        return _fail(f"{flag} failed: {safe_text(str(exc))}")
    turn = result.turn
    if args.output_format == "json":
        payload = {"type": action, "done": result.done, "session_id": session_id,
                   "turn": turn.number if turn else None, "prompt": turn.prompt if turn else None,
                   "files": result.files, "conflicts": result.conflicts, "changed_during_turn": result.during,
                   "left_alone": result.left_alone, "reason": result.reason or None}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    if result.done:
        if args.output_format != "json":
            verb = "Undid" if action == "undo" else "Redid"
            sys.stdout.write(f"{verb} turn {turn.number} of session {session_id}: "
                             f"{safe_text(short_prompt(turn.prompt))}\n")
            sys.stdout.writelines(f"  {safe_text(path, keep_newlines=False)}\n" for path in result.files)
            if result.left_alone:
                sys.stdout.write("Left alone (changed by someone else while the turn ran, not by the agent):"
                                 f"{_listed(result.left_alone)}\n")
        return exitcodes.OK
    if result.conflicts:
        return _fail(conflict_message(result, action))
    return _fail(f"{flag}: {safe_text(result.reason)} (session {session_id})")
