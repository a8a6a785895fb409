"""`agentica sessions list|show|rm`: the saved conversations (cli/sessions.py's files)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from agentica_cli.app import exitcodes
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.sessions import SessionInfo, SessionStore, _holder_pid, describe
from agentica_cli.tui.terminal import plain


def _fail(message: str) -> int:
    sys.stderr.write(f"agentica: {message}\n")
    return exitcodes.USAGE_ERROR


def find(store: SessionStore, session_id: str) -> SessionInfo | None:
    """The session with this id, or the one whose id starts with it (a unique prefix)."""
    matches = [s for s in store.list() if s.id == session_id] or [
        s for s in store.list() if s.id.startswith(session_id)
    ]
    return matches[0] if len(matches) == 1 else None


def list_sessions(work_dir: Path, *, all_folders: bool) -> int:
    store = SessionStore()
    sessions = store.list(None if all_folders else work_dir)
    if not sessions:
        where = "" if all_folders else f" for {work_dir} (--all: every folder)"
        print(f"no saved sessions{where}")
        return exitcodes.OK
    for info in sessions:
        line = describe(info) + (f"  [{info.cwd}]" if all_folders else "")
        print(safe_text(line, keep_newlines=False))
    return exitcodes.OK


def show_session(session_id: str) -> int:
    from agentica_cli.tui.transcript import replay

    store = SessionStore()
    info = find(store, session_id)
    if info is None:
        return _fail(f"no session {session_id!r} (agentica sessions list --all shows them)")
    print(safe_text(f"session {info.id}  folder {info.cwd}  model {info.model or '?'}", keep_newlines=False))
    for text, code in replay(SessionStore.load_messages(info.path), max_prompts=10**9):
        plain(text, code if sys.stdout.isatty() else "")
    return exitcodes.OK


def remove_session(session_id: str) -> int:
    store = SessionStore()
    info = find(store, session_id)
    if info is None:
        return _fail(f"no session {session_id!r} (agentica sessions list --all shows them)")
    holder = _holder_pid(info.path)
    from agentica_cli.procs import is_running

    if holder is not None and holder != os.getpid() and is_running(holder):
        return _fail(f"session {info.id} is open in another agentica (pid {holder}); close it first")
    info.path.unlink()
    info.path.with_suffix(".pid").unlink(missing_ok=True)
    from agentica_cli.app.session_images import images_dir

    shutil.rmtree(images_dir(info.path), ignore_errors=True)
    print(f"removed session {info.id}")
    return exitcodes.OK
