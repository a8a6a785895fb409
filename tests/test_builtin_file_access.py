"""BuiltinFileTool with a FileAccess (an editor's buffers): content comes from and goes to it,
with the same paging, read-before-edit check and path sandbox as on disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from builtin_support import call_tool

from builtin_tools import BuiltinFileTool
from builtin_tools.file_access import FileAccess


class Buffers:
    """An editor: open buffers by path; the rest is read from disk, writes stay in buffers."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.writes: list[tuple[str, str]] = []

    def read_text(self, path: Path) -> str:
        if str(path) in self.texts:
            return self.texts[str(path)]
        return path.read_text()  # FileNotFoundError for a file that is nowhere

    def write_text(self, path: Path, text: str) -> None:
        self.writes.append((str(path), text))
        self.texts[str(path)] = text


@pytest.fixture
def buffers() -> Buffers:
    return Buffers()


@pytest.fixture
def tool(tmp_path: Path, buffers: Buffers) -> BuiltinFileTool:
    return BuiltinFileTool(tmp_path, file_access=buffers)


def test_buffers_is_a_file_access(buffers: Buffers) -> None:
    assert isinstance(buffers, FileAccess)


def test_read_sees_the_buffer_and_pages_it_like_a_file(tool, buffers, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("disk\n")
    buffers.texts[str(tmp_path / "a.txt")] = "one\ntwo\nthree\n"
    call = call_tool(tool, "read_file", file_path="a.txt", offset=2, limit=1)
    assert call.error is None
    assert call.result == "     2\ttwo\n(lines 2-2 of 3 shown; next page: offset=3)"


def test_edit_goes_through_the_buffer_and_keeps_crlf(tool, buffers, tmp_path: Path) -> None:
    path = str(tmp_path / "a.txt")
    (tmp_path / "a.txt").write_text("disk\n")
    buffers.texts[path] = "alpha\r\nbeta\r\n"
    assert "not been read" in call_tool(tool, "edit_file", file_path="a.txt", old_string="beta",
                                        new_string="gamma").error
    call_tool(tool, "read_file", file_path="a.txt")
    call = call_tool(tool, "edit_file", file_path="a.txt", old_string="beta\n", new_string="gamma\n")
    assert call.error is None and call.result.startswith("Edited a.txt: 1 replacement.")
    assert buffers.writes == [(path, "alpha\r\ngamma\r\n")]
    assert (tmp_path / "a.txt").read_text() == "disk\n"


def test_a_buffer_changed_since_the_read_is_not_overwritten(tool, buffers, tmp_path: Path) -> None:
    path = str(tmp_path / "a.txt")
    buffers.texts[path] = "v1\n"
    call_tool(tool, "read_file", file_path="a.txt")
    buffers.texts[path] = "v2, typed by the user\n"
    assert "modified since read" in call_tool(tool, "write_file", file_path="a.txt", content="v3\n").error
    assert buffers.writes == []


def test_new_files_are_created_through_it_and_paths_stay_confined(tool, buffers, tmp_path: Path) -> None:
    assert call_tool(tool, "write_file", file_path="new/b.txt", content="b\n").result.startswith("Created new/b.txt")
    assert buffers.writes == [(str(tmp_path / "new" / "b.txt"), "b\n")]
    assert "does not exist" in call_tool(tool, "read_file", file_path="missing.txt").error
    assert "outside" in call_tool(tool, "read_file", file_path="/etc/hostname").error
