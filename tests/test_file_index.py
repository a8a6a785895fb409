"""The project's file list for `@` (agentica_cli/file_index.py): git's own view of what is
ignored (git itself is the oracle), the walk without git, and the order of fuzzy matches."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentica_cli.file_index import FileIndex, Searchable, fuzzy_matches, walk_files, with_folders


def test_git_listing_is_tracked_plus_untracked_not_ignored(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs the git program")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "debug.log").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("")
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (tmp_path / "secret.txt").write_text("")
    subprocess.run(["git", "add", "src/app.py"], cwd=tmp_path, check=True)
    (tmp_path / "notes.md").write_text("")  # untracked, not ignored
    index = FileIndex(tmp_path)
    paths = index.paths().searchable.paths
    expected = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=tmp_path,
                              capture_output=True, text=True, check=True).stdout.split()
    assert sorted(p for p in paths if not p.endswith("/")) == sorted(expected)
    assert "src/" in paths and "build/" not in paths
    assert [m.path for m in index.match("app")] == ["src/app.py"]


def test_without_git_the_walk_skips_tool_folders_and_honours_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.tmp\nout/\n")
    for name in ("a.py", "b.tmp", "out/c.py", "node_modules/x.js", "pkg/d.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert sorted(walk_files(tmp_path)) == [".gitignore", "a.py", "pkg/d.py"]


def test_fuzzy_order_name_prefix_then_name_then_path_then_letters() -> None:
    files = ["docs/module_guide.md", "src/deep/pkg/module_util.py", "tests/test_module.py", "mod/ule/x.py",
             "module/readme.md", "m/o/d/u/l/e.txt"]
    listing = Searchable(sorted(with_folders(files), key=lambda p: (len(p), p)))
    found = [m.path for m in fuzzy_matches("module", listing)]
    assert found[:3] == ["module/", "docs/module_guide.md", "src/deep/pkg/module_util.py"]  # names starting so
    assert found.index("tests/test_module.py") > found.index("src/deep/pkg/module_util.py")  # in the name
    assert found.index("module/readme.md") > found.index("tests/test_module.py")  # only in the path
    assert found[-1] in ("m/o/d/u/l/e.txt", "mod/ule/x.py")  # letters in order, last
    assert [m.path for m in fuzzy_matches("MODUTIL", listing)] == ["src/deep/pkg/module_util.py"]


def test_matching_20000_paths_is_fast() -> None:
    files = [f"bulk/d{n // 500}/f{n}.txt" for n in range(20_000)] + ["src/deep/pkg/module_util.py"]
    listing = Searchable(sorted(with_folders(files), key=lambda p: (len(p), p)))
    for query in ("modutil", "f19999", "zzz"):  # the slowest kinds: a rare subsequence, many partial hits, none
        best = min(_timed(lambda q=query: fuzzy_matches(q, listing)) for _ in range(3))
        assert best < 0.05, f"{query}: {best * 1000:.1f} ms"


def _timed(action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    return time.perf_counter() - started
