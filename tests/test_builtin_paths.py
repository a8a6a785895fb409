"""The path sandbox: every file tool refuses what resolves outside work_dir and allowed_dirs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from builtin_support import call_tool

from builtin_tools import BuiltinFileTool
from builtin_tools.paths import PathOutsideRootsError, PathSandbox


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    proj = tmp_path / "proj"
    evil = tmp_path / "proj-evil"  # shares the prefix "proj"
    outside = tmp_path / "outside"
    for d in (proj, evil, outside):
        d.mkdir()
    (proj / "inside.txt").write_text("inside\n")
    (evil / "secret.txt").write_text("evil secret\n")
    (outside / "secret.txt").write_text("outside secret\n")
    (proj / "link_out").symlink_to(outside)  # a symlinked folder pointing outside
    (proj / "link_file").symlink_to(outside / "secret.txt")
    return {"proj": proj, "evil": evil, "outside": outside}


def _escapes(layout: dict[str, Path]) -> list[str]:
    return [
        "../outside/secret.txt",
        str(layout["outside"] / "secret.txt"),
        "link_file",
        "link_out/secret.txt",
        str(layout["evil"] / "secret.txt"),
        "../proj-evil/secret.txt",
    ]


ESCAPE_IDS = ["dotdot", "absolute", "symlink-file", "symlink-dir", "prefix-absolute", "prefix-relative"]


def _calls(path: str) -> list[tuple[str, dict[str, object]]]:
    return [
        ("read_file", {"file_path": path}),
        ("write_file", {"file_path": path, "content": "pwned\n"}),
        ("edit_file", {"file_path": path, "old_string": "secret", "new_string": "pwned"}),
        ("multi_edit_file", {"file_path": path, "edits": [{"old_string": "secret", "new_string": "pwned"}]}),
        ("ls", {"path": os.path.dirname(path) or path}),
        ("glob", {"pattern": "*.txt", "path": os.path.dirname(path) or path}),
        ("grep", {"pattern": "secret", "path": path}),
    ]


@pytest.mark.parametrize("index", range(6), ids=ESCAPE_IDS)
def test_every_file_tool_refuses_paths_outside_the_roots(layout: dict[str, Path], index: int) -> None:
    tool = BuiltinFileTool(layout["proj"])
    path = _escapes(layout)[index]
    before = {p: p.read_bytes() for p in (layout["outside"] / "secret.txt", layout["evil"] / "secret.txt")}
    for name, args in _calls(path):
        if name in ("ls", "glob") and index in (2,):
            args = {**args, "path": "link_out"}  # a symlinked folder for the listing tools
        call = call_tool(tool, name, **args)
        assert call.error is not None, f"{name}({args}) was allowed: {call.result}"
        assert call.error.startswith("Error: PathOutsideRootsError: path "), call.error
        assert "outside the allowed directories: " + str(layout["proj"]) in call.error
        assert "secret" not in call.error.split("allowed directories:")[1]
    after = {p: p.read_bytes() for p in before}
    assert after == before
    assert not (layout["proj"] / "pwned").exists()


def test_refusal_names_every_allowed_root(layout: dict[str, Path], tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    tool = BuiltinFileTool(layout["proj"], allowed_dirs=[extra])
    call = call_tool(tool, "read_file", file_path="../outside/secret.txt")
    assert call.error is not None
    assert f"outside the allowed directories: {layout['proj']}, {extra}." in call.error


def test_allowed_dirs_are_usable_and_inside_paths_work(layout: dict[str, Path]) -> None:
    tool = BuiltinFileTool(layout["proj"], allowed_dirs=[layout["outside"]])
    read = call_tool(tool, "read_file", file_path=str(layout["outside"] / "secret.txt"))
    assert read.error is None
    assert read.result.splitlines()[0] == "     1\toutside secret"
    # the symlink now leads into an allowed root, so it is fine too
    assert call_tool(tool, "read_file", file_path="link_file").error is None
    # "a/../inside.txt" stays inside
    (layout["proj"] / "a").mkdir()
    assert call_tool(tool, "read_file", file_path="a/../inside.txt").error is None
    # but the prefix sibling is still refused
    assert call_tool(tool, "read_file", file_path=str(layout["evil"] / "secret.txt")).error is not None


def test_sandbox_resolution_rules(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    sandbox = PathSandbox(root)
    assert sandbox.resolve("x/y.txt") == root / "x" / "y.txt"  # not yet existing is fine
    assert sandbox.resolve(".") == root
    assert sandbox.resolve(str(root)) == root
    assert sandbox.display(root / "x" / "y.txt") == "x/y.txt"
    with pytest.raises(PathOutsideRootsError):
        sandbox.resolve("/")
    with pytest.raises(PathOutsideRootsError):
        sandbox.resolve(str(tmp_path / "w2"))
    # a symlinked work_dir is judged by its real location
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert PathSandbox(alias).resolve("f") == root / "f"


def test_writing_through_a_symlinked_parent_outside_is_refused(layout: dict[str, Path]) -> None:
    tool = BuiltinFileTool(layout["proj"])
    call = call_tool(tool, "write_file", file_path="link_out/new.txt", content="x")
    assert call.error is not None and "PathOutsideRootsError" in call.error
    assert not (layout["outside"] / "new.txt").exists()


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_searching_the_work_dir_does_not_follow_symlinks_out_of_it(layout: dict[str, Path], engine: str) -> None:
    """grep and glob over "." walk the tree; link_file and link_out/ lead outside and are not entered."""
    from builtin_tools.search import find_rg

    tool = BuiltinFileTool(layout["proj"], rg_path=find_rg() if engine == "rg" else None)
    assert engine == "python" or tool.rg_path is not None
    (layout["proj"] / "notes.txt").write_text("no secret here\n")
    assert call_tool(tool, "grep", pattern="secret").result == (
        "notes.txt:1:no secret here\n[1 matching lines in 1 files]"
    )
    assert call_tool(tool, "grep", pattern="outside", output_mode="files_with_matches").result == (
        "No matches for 'outside' in .."
    )
    listed = call_tool(tool, "glob", pattern="**/*.txt").result.splitlines()
    assert sorted(listed[:-1]) == ["inside.txt", "notes.txt"]
    assert listed[-1] == "[2 files, newest first]"
