"""~/.agentica on a full disk: `-p` still answers, says plainly that the conversation could
not be saved, leaves no empty session file, and never truncates what was saved before."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import model_args, run_cli

from agentica_cli.testing import ScriptedModelServer, turns


@contextlib.contextmanager
def small_disk(where: Path, size: str = "256k") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` (root only: CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"could not mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> None:
    """Use up every free byte of the disk."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


def session_files(home: Path) -> dict[str, int]:
    folder = home / "sessions"
    return {p.name: p.stat().st_size for p in folder.glob("*.jsonl")} if folder.is_dir() else {}


def ask(project: Path, home: Path, *extra: str,
        prompt: str = "what is the answer?") -> subprocess.CompletedProcess[str]:
    with ScriptedModelServer([turns.text("The answer is 42.")]) as server:
        return run_cli(["-p", prompt, *extra, *model_args(server)], cwd=project, home=home)


def test_a_full_disk_is_said_plainly_and_leaves_no_empty_session(tmp_path: Path, project: Path) -> None:
    with small_disk(tmp_path / "home") as home:
        (home / "sessions").mkdir(mode=0o700)
        fill(home)
        proc = ask(project, home)
        assert "The answer is 42." in proc.stdout
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "could not save this conversation" in proc.stderr and "No space left on device" in proc.stderr
        assert "no session file was kept" in proc.stderr
        assert proc.returncode == 1
        assert session_files(home) == {}  # no 0-byte session file left behind


def test_a_resumed_session_keeps_what_was_saved_on_a_full_disk(tmp_path: Path, project: Path) -> None:
    with small_disk(tmp_path / "home") as home:
        first = ask(project, home, "--output-format", "json")
        assert first.returncode == 0, first.stderr
        session_id = json.loads(first.stdout)["session_id"]
        path = home / "sessions" / f"{session_id}.jsonl"
        saved = path.read_bytes()
        fill(home)
        # a prompt longer than the room left in the file's last page (tmpfs allocates by page)
        again = ask(project, home, "--resume", session_id, prompt="what is the answer? " + "and why? " * 2000)
        assert "The answer is 42." in again.stdout and "Traceback" not in again.stderr, again.stderr
        assert "could not save this conversation" in again.stderr and "what was saved before is kept" in again.stderr
        assert again.returncode == 1
        kept = path.read_bytes()
        assert kept.startswith(saved)  # nothing that was saved is lost
        for line in kept.decode().splitlines():  # and what is there still loads
            json.loads(line)
