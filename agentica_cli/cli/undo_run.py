"""`agentica --undo`: restore the files the last turn of a session changed, from a script.

The session is this folder's latest (as --continue) or --resume ID. Files changed since
that turn by someone else are not overwritten without --force: the run stops, lists them
and exits 1. With --output-format json the outcome is one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentica_cli.cli import exitcodes
from agentica_cli.cli.config import Settings
from agentica_cli.cli.safe_text import safe_text


def _fail(message: str, code: int = exitcodes.MODEL_ERROR) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return code


def run_undo(args: argparse.Namespace, settings: Settings, work_dir: Path) -> int:
    from agentica_cli.cli.checkpoint_commands import short_prompt
    from agentica_cli.cli.checkpoint_setup import checkpoints_from_settings
    from agentica_cli.cli.sessions import SessionStore

    if args.prompt:
        return _fail("--undo takes no prompt", exitcodes.USAGE_ERROR)
    session_id = args.resume
    if not session_id:
        latest = SessionStore().latest(work_dir)
        if latest is None:
            return _fail("--undo: no session in this folder to undo", exitcodes.USAGE_ERROR)
        session_id = latest.id
    checkpoints = checkpoints_from_settings(settings, work_dir, session_id)
    if checkpoints is None:
        return _fail("--undo: checkpoints are off ([checkpoints] enabled = false)", exitcodes.USAGE_ERROR)
    if checkpoints.disabled:
        return _fail(f"--undo: {checkpoints.disabled}")
    try:
        result = checkpoints.undo(force=args.force)
    except Exception as exc:  # git failed: say so, no traceback
        return _fail(f"--undo failed: {safe_text(str(exc))}")
    turn = result.turn
    if args.output_format == "json":
        payload = {"type": "undo", "done": result.done, "session_id": session_id,
                   "turn": turn.number if turn else None, "prompt": turn.prompt if turn else None,
                   "files": result.files, "conflicts": result.conflicts, "reason": result.reason or None}
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    if result.done:
        if args.output_format != "json":
            sys.stdout.write(f"Undid turn {turn.number} of session {session_id}: "
                             f"{safe_text(short_prompt(turn.prompt))}\n")
            sys.stdout.writelines(f"  {safe_text(path, keep_newlines=False)}\n" for path in result.files)
        return exitcodes.OK
    if result.conflicts:
        listed = "".join(f"\n  {safe_text(path, keep_newlines=False)}" for path in result.conflicts)
        return _fail(f"not undone: these files changed after turn {turn.number} ended:{listed}\n"
                     "Run again with --force to overwrite them (your changes to them are lost).")
    return _fail(f"--undo: {result.reason} (session {session_id})")
