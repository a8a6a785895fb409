"""Paths that change while they are checked: a folder and a symlink leading out swapped with
renameat2(RENAME_EXCHANGE) by another process, as a sandboxed command can."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest
from race_support import swapping

from agentica_cli.cli.approvals import PermissionPolicy
from agentica_cli.tools.base import Function, FunctionCall


def edit_file(file_path: str, old_string: str, new_string: str) -> str:
    """Edit a file.

    Args:
        file_path: the file
        old_string: old
        new_string: new
    """
    return "ok"


def edit_call(path: str) -> FunctionCall:
    function = Function.from_callable(edit_file, is_destructive=True)
    return FunctionCall(function, "c1", {"file_path": path, "old_string": "a", "new_string": "b"})


def test_a_path_that_fails_to_resolve_is_refused_with_a_reason(tmp_path: Path, monkeypatch) -> None:
    policy = PermissionPolicy("accept-edits", tmp_path)
    real = os.path.realpath

    def changing(path, *args, **kwargs):  # what realpath raises when a symlink became a folder under it
        if "racing" in os.fspath(path):
            raise OSError(errno.EINVAL, "Invalid argument", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", changing)
    verdict = policy.evaluate(edit_call("racing/notes.txt"))
    assert verdict.kind == "deny" and verdict.why == "changing"
    assert "'edit_file' was not run: its path could not be checked (Invalid argument)" in verdict.message
    assert policy.evaluate(edit_call("calm/notes.txt")).kind == "allow"


def test_the_policy_never_raises_while_a_folder_and_a_symlink_swap(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "notes.txt").write_text("hi\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    policy = PermissionPolicy("accept-edits", project)
    kinds: dict[str, int] = {}
    with swapping(project / "src", project / "link"):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and kinds.get("changing", 0) < 3:
            for path in ("src/notes.txt", "link/notes.txt"):
                verdict = policy.evaluate(edit_call(path))  # before the fix: OSError EINVAL escaped
                key = verdict.why if verdict.kind == "deny" else verdict.kind
                kinds[key] = kinds.get(key, 0) + 1
    assert set(kinds) <= {"allow", "ask", "changing"}, kinds
    if not kinds.get("changing"):
        pytest.skip(f"the race was never hit in 20 s on this machine: {kinds}")
