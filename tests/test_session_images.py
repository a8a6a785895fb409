"""Images in saved sessions: the bytes are stored once as private files beside the session
file, the session's lines only reference them, and resuming sends the same image again.
Sessions written with inline data URLs still load."""

from __future__ import annotations

import base64
import json
import os
import stat
import struct
import zlib
from pathlib import Path

import pytest
from cli_support import model_args, run_cli

from agentica_cli.app.session_images import images_dir
from agentica_cli.app.sessions import SessionStore
from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.timeout(90)


def noisy_png(width: int = 256, height: int = 256) -> bytes:
    """A real PNG that does not compress (random pixels), built without Pillow."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + os.urandom(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def data_url(raw: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(raw).decode("ascii")


def prompt_with(raw: bytes, text: str = "what is this?") -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text},
                                        {"type": "image_url", "image_url": {"url": data_url(raw), "detail": "low"}}]}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_image_is_stored_once_as_a_private_file_and_loads_back(tmp_path: Path) -> None:
    raw = noisy_png()
    store = SessionStore(tmp_path / "sessions")
    session = store.create(tmp_path)
    prompt = prompt_with(raw)
    session.append(prompt)
    session.append({"role": "assistant", "content": "a picture"})
    session.replace_history([{"role": "user", "content": "summary"}, prompt])  # a compaction keeps it
    session.close()
    assert prompt["content"][1]["image_url"]["url"] == data_url(raw)  # the message in memory is untouched
    text = session.path.read_text()
    assert "base64" not in text and len(text) < 2000 < len(raw)
    folder = images_dir(session.path)
    files = list(folder.iterdir())
    assert [f.read_bytes() for f in files] == [raw]  # once, however often it was recorded
    assert (mode(folder), mode(files[0])) == (0o700, 0o600)
    loaded = store.load_messages(session.path)
    assert loaded == [{"role": "user", "content": "summary"}, prompt]


def test_old_sessions_with_inline_images_and_missing_files_still_load(tmp_path: Path) -> None:
    raw = noisy_png(8, 8)
    root = tmp_path / "sessions"
    root.mkdir()
    old = root / "20250101-000000-abcdef.jsonl"
    lines = [{"type": "session", "id": old.stem, "cwd": str(tmp_path), "created": 1.0, "model": "m"},
             {"type": "message", "message": prompt_with(raw)},
             {"type": "message", "message": {"role": "user", "content": [
                 {"type": "text", "text": "and this"},
                 {"type": "image_url", "image_url": {"file": "0123abcd.png", "mime": "image/png"}}]}}]
    old.write_text("".join(json.dumps(line) + "\n" for line in lines))
    first, second = SessionStore(root).load_messages(old)
    assert first == prompt_with(raw)
    assert second["content"][1] == {"type": "text", "text": "[an image of this session is missing: 0123abcd.png "
                                                          f"is no longer in {images_dir(old)}]"}


def test_a_resumed_session_sends_the_stored_image_again(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    raw = noisy_png()
    (project / "shot.png").write_bytes(raw)
    with ScriptedModelServer([turns.text("noise"), turns.text("still noise")]) as server:
        first = run_cli(["-p", "what is it?", "--image", "shot.png", *model_args(server)], cwd=project, home=home)
        assert first.returncode == 0, first.stderr
        second = run_cli(["-p", "and now?", "--continue", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert second.returncode == 0, second.stderr
    [session_file] = (home / "sessions").glob("*.jsonl")
    assert "base64" not in session_file.read_text() and session_file.stat().st_size < 4000
    assert [f.read_bytes() for f in images_dir(session_file).iterdir()] == [raw]
    resumed = next(m for m in requests[1]["messages"] if m["role"] == "user")
    sent = [p["image_url"]["url"] for p in resumed["content"] if p.get("type") == "image_url"]
    assert sent == [data_url(raw)]
