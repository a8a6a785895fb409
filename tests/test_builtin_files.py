"""read_file, write_file, edit_file, multi_edit_file and ls on real files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from builtin_support import call_tool

from builtin_tools import BuiltinFileTool
from builtin_tools.file_read import MAX_LINE_CHARS


@pytest.fixture
def tool(tmp_path: Path) -> BuiltinFileTool:
    return BuiltinFileTool(tmp_path)


def ok(call) -> str:  # type: ignore[no-untyped-def]
    assert call.error is None, call.error
    return call.result


def err(call) -> str:  # type: ignore[no-untyped-def]
    assert call.error is not None, f"expected an error, got: {call.result}"
    return call.error


# -- read_file -----------------------------------------------------------------------------


def test_read_file_numbers_lines_and_says_what_was_shown(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    assert ok(call_tool(tool, "read_file", file_path="a.py")) == (
        "     1\tone\n     2\ttwo\n     3\tthree\n(end of file: all 3 lines shown)"
    )
    assert ok(call_tool(tool, "read_file", file_path="a.py", offset=2, limit=1)) == (
        "     2\ttwo\n(lines 2-2 of 3 shown; next page: offset=3)"
    )
    assert ok(call_tool(tool, "read_file", file_path="a.py", offset=3)) == (
        "     3\tthree\n(end of file: lines 3-3 of 3 shown)"
    )
    assert "past the end of a.py, which has 3 lines" in err(call_tool(tool, "read_file", file_path="a.py", offset=4))
    assert "offset must be 1 or more" in err(call_tool(tool, "read_file", file_path="a.py", offset=0))


def test_read_file_without_final_newline_and_empty(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"x\ny")
    shown = ok(call_tool(tool, "read_file", file_path="b.txt"))
    assert shown == "     1\tx\n     2\ty\n(end of file: all 2 lines shown)"
    (tmp_path / "e.txt").write_bytes(b"")
    assert ok(call_tool(tool, "read_file", file_path="e.txt")) == "(e.txt is empty)"


def _big_file(path: Path, lines: int) -> None:
    with open(path, "w") as f:
        for i in range(1, lines + 1):
            f.write(f"line {i} " + "x" * 40 + "\n")


def test_file_over_256kb_must_be_paged_and_pages_work(tool: BuiltinFileTool, tmp_path: Path) -> None:
    _big_file(tmp_path / "big.log", 20_000)  # ~1 MB
    assert (tmp_path / "big.log").stat().st_size > 256 * 1024
    message = err(call_tool(tool, "read_file", file_path="big.log"))
    assert "over the 256 KB limit" in message
    assert "read_file(file_path, offset=1, limit=2000)" in message and "grep" in message

    first = ok(call_tool(tool, "read_file", file_path="big.log", offset=1, limit=2000)).splitlines()
    assert len(first) == 2001
    assert first[0] == "     1\tline 1 " + "x" * 40
    assert first[-1] == "(lines 1-2,000 of 20,000 shown; next page: offset=2001)"

    page = ok(call_tool(tool, "read_file", file_path="big.log", offset=15_001, limit=3)).splitlines()
    assert page == [
        " 15001\tline 15001 " + "x" * 40,
        " 15002\tline 15002 " + "x" * 40,
        " 15003\tline 15003 " + "x" * 40,
        "(lines 15,001-15,003 of 20,000 shown; next page: offset=15004)",
    ]
    last = ok(call_tool(tool, "read_file", file_path="big.log", offset=19_999)).splitlines()
    assert last[-1] == "(end of file: lines 19,999-20,000 of 20,000 shown)"
    # limit alone (offset defaults to 1) is also paging
    assert len(ok(call_tool(tool, "read_file", file_path="big.log", limit=5)).splitlines()) == 6


def test_a_deep_page_of_a_big_file_is_read_without_loading_the_file(tmp_path: Path) -> None:
    """48 MB, 600,000 lines: the page at line 500,000 costs a few MB of memory, not the file."""
    line = b"x" * 79 + b"\n"
    (tmp_path / "small.txt").write_bytes(line * 10)
    with open(tmp_path / "big.log", "wb") as f:
        for _ in range(600):
            f.write(line * 1000)
    script = textwrap.dedent(f"""
        import asyncio, json, resource, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from builtin_tools import BuiltinFileTool
        tool = BuiltinFileTool({str(tmp_path)!r})
        tool.read_file("small.txt")  # warm up imports and code paths, not the big file
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        page = tool.read_file("big.log", offset=500_000, limit=2000)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps([after - before, page.splitlines()[0][:8], page.splitlines()[-1]]))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    growth_kb, first, footer = json.loads(proc.stdout)
    assert first == "500000\tx"
    assert footer == "(lines 500,000-501,999 of 600,000 shown; next page: offset=502000)"
    assert growth_kb < 12 * 1024, f"peak RSS grew by {growth_kb} KB reading one page of a 48 MB file"


def test_paging_across_chunk_boundaries_matches_splitlines(tool: BuiltinFileTool, tmp_path: Path) -> None:
    # Lines of varying length so that 1 MB chunk boundaries fall mid-line.
    lines = [("y" * (i % 997)) + f"#{i}" for i in range(1, 6000)]
    (tmp_path / "v.txt").write_text("\n".join(lines))  # no final newline
    for offset in (1, 1234, 2999, 5998, 5999):
        result = ok(call_tool(tool, "read_file", file_path="v.txt", offset=offset, limit=2)).splitlines()
        expected = [f"{n:6d}\t{lines[n - 1]}" for n in range(offset, min(offset + 2, 6000))]
        assert result[: len(expected)] == expected
        assert "of 5,999" in result[-1]


def test_long_lines_are_cut_with_a_marker(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 50_000 + "\nshort\n")
    out = ok(call_tool(tool, "read_file", file_path="min.js")).splitlines()
    assert out[0] == "     1\t" + "a" * MAX_LINE_CHARS + "... [line truncated: 50,000 bytes]"
    assert out[1] == "     2\tshort"


def test_binary_directory_and_device_are_refused(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / "img.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00data")
    assert "binary file" in err(call_tool(tool, "read_file", file_path="img.bin"))
    (tmp_path / "d").mkdir()
    assert "is a directory; use ls" in err(call_tool(tool, "read_file", file_path="d"))
    os.mkfifo(tmp_path / "fifo")
    assert "not a regular file" in err(call_tool(tool, "read_file", file_path="fifo"))
    dev_tool = BuiltinFileTool(tmp_path, allowed_dirs=["/dev"])
    assert "not a regular file" in err(call_tool(dev_tool, "read_file", file_path="/dev/zero"))
    assert "does not exist" in err(call_tool(tool, "read_file", file_path="nope.txt"))


def test_read_strips_bom_and_cr_for_display(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    assert ok(call_tool(tool, "read_file", file_path="w.txt")) == (
        "     1\thello\n     2\tworld\n(end of file: all 2 lines shown)"
    )


# -- write_file ----------------------------------------------------------------------------


def test_write_creates_parents_and_overwrite_needs_a_read(tool: BuiltinFileTool, tmp_path: Path) -> None:
    assert ok(call_tool(tool, "write_file", file_path="src/pkg/new.py", content="x = 1\n")) == (
        "Created src/pkg/new.py (1 line, 6 B)."
    )
    assert (tmp_path / "src/pkg/new.py").read_text() == "x = 1\n"
    (tmp_path / "old.txt").write_text("old\n")
    message = err(call_tool(tool, "write_file", file_path="old.txt", content="new\n"))
    assert "has not been read in this session; read_file it first" in message
    assert (tmp_path / "old.txt").read_text() == "old\n"
    ok(call_tool(tool, "read_file", file_path="old.txt"))
    assert ok(call_tool(tool, "write_file", file_path="old.txt", content="new\n")).startswith("Overwrote old.txt")
    assert (tmp_path / "old.txt").read_text() == "new\n"
    # a file this session wrote can be written again without re-reading
    ok(call_tool(tool, "write_file", file_path="old.txt", content="newer\n"))
    assert (tmp_path / "old.txt").read_text() == "newer\n"


def test_overwrite_keeps_mode_crlf_bom_and_final_newline(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "run.bat"
    path.write_bytes(b"\xef\xbb\xbf@echo off\r\necho hi")  # BOM, CRLF, no final newline
    path.chmod(0o755)
    ok(call_tool(tool, "read_file", file_path="run.bat"))
    ok(call_tool(tool, "write_file", file_path="run.bat", content="@echo on\necho bye\n"))
    assert path.read_bytes() == b"\xef\xbb\xbf@echo on\r\necho bye"
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_new_file_gets_umask_mode_not_0600(tool: BuiltinFileTool, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        ok(call_tool(tool, "write_file", file_path="m.txt", content="x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "m.txt").stat().st_mode) == 0o644


def test_atomic_write_when_replace_fails_leaves_original_and_no_temp(
    tool: BuiltinFileTool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keep.txt"
    path.write_text("original\n")
    ok(call_tool(tool, "read_file", file_path="keep.txt"))

    def failing_replace(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    message = err(call_tool(tool, "edit_file", file_path="keep.txt", old_string="original", new_string="changed"))
    assert "No space left on device" in message
    message = err(call_tool(tool, "write_file", file_path="keep.txt", content="changed\n"))
    assert "No space left on device" in message
    message = err(call_tool(tool, "multi_edit_file", file_path="keep.txt",
                            edits=[{"old_string": "original", "new_string": "changed"}]))
    assert "No space left on device" in message
    monkeypatch.undo()
    assert path.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_non_utf8_files_are_refused_not_mangled(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    data = "café\n".encode("latin-1")
    path.write_bytes(data)
    ok(call_tool(tool, "read_file", file_path="latin1.txt"))
    assert "not valid UTF-8" in err(call_tool(tool, "edit_file", file_path="latin1.txt", old_string="caf",
                                              new_string="tea"))
    assert "not valid UTF-8" in err(call_tool(tool, "write_file", file_path="latin1.txt", content="x\n"))
    assert path.read_bytes() == data


# -- edit_file -----------------------------------------------------------------------------


def test_edit_requires_read_and_returns_a_diff(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    message = err(call_tool(tool, "edit_file", file_path="m.py", old_string="return 1", new_string="return 10"))
    assert "has not been read in this session" in message
    ok(call_tool(tool, "read_file", file_path="m.py"))
    result = ok(call_tool(tool, "edit_file", file_path="m.py", old_string="return 1", new_string="return 10"))
    assert result.splitlines()[0] == "Edited m.py: 1 replacement."
    assert "-    return 1" in result and "+    return 10" in result and "@@ -1,5 +1,5 @@" in result
    assert path.read_text() == "def f():\n    return 10\n\n\ndef g():\n    return 2\n"
    # edit after edit: our own write is known, no re-read needed
    ok(call_tool(tool, "edit_file", file_path="m.py", old_string="return 2", new_string="return 20"))
    assert path.read_text().endswith("return 20\n")


def test_edit_error_cases_leave_file_unchanged(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "c.py"
    original = "x = 1\ny = 2\nx = 1\nprint(total_count)\n"
    path.write_text(original)
    ok(call_tool(tool, "read_file", file_path="c.py"))

    assert "old_string is empty" in err(call_tool(tool, "edit_file", file_path="c.py", old_string="", new_string="a"))
    assert "identical" in err(call_tool(tool, "edit_file", file_path="c.py", old_string="y = 2", new_string="y = 2"))
    many = err(call_tool(tool, "edit_file", file_path="c.py", old_string="x = 1", new_string="x = 3"))
    assert "old_string occurs 2 times (at lines 1, 3)" in many and "replace_all=true" in many
    missing = err(call_tool(tool, "edit_file", file_path="c.py", old_string="print(total_cnt)", new_string="p"))
    assert "old_string was not found" in missing
    assert "Closest lines in the file:\n     4\tprint(total_count)" in missing
    spaced = err(call_tool(tool, "edit_file", file_path="c.py", old_string="y  =  2", new_string="y = 3"))
    assert "matches only if whitespace is ignored" in spaced
    assert path.read_text() == original
    assert "does not exist; use write_file" in err(
        call_tool(tool, "edit_file", file_path="nope.py", old_string="a", new_string="b")
    )

    result = ok(call_tool(tool, "edit_file", file_path="c.py", old_string="x = 1", new_string="x = 3",
                          replace_all=True))
    assert result.startswith("Edited c.py: 2 replacements.")
    assert path.read_text() == "x = 3\ny = 2\nx = 3\nprint(total_count)\n"


def test_edit_after_outside_change_is_refused(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text("value = 1\n")
    ok(call_tool(tool, "read_file", file_path="s.py"))
    stat_before = path.stat()
    path.write_text("value = 2\n")  # same size, possibly the same mtime tick: the hash still differs
    os.utime(path, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    message = err(call_tool(tool, "edit_file", file_path="s.py", old_string="value", new_string="v"))
    assert "modified since read" in message and "read it again" in message
    assert path.read_text() == "value = 2\n"
    assert "modified since read" in err(call_tool(tool, "write_file", file_path="s.py", content="z\n"))
    ok(call_tool(tool, "read_file", file_path="s.py"))
    ok(call_tool(tool, "edit_file", file_path="s.py", old_string="value", new_string="v"))
    assert path.read_text() == "v = 2\n"


def test_touch_without_change_does_not_block_edit(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "t.py"
    path.write_text("a = 1\n")
    ok(call_tool(tool, "read_file", file_path="t.py"))
    os.utime(path, (1, 1))
    ok(call_tool(tool, "edit_file", file_path="t.py", old_string="a = 1", new_string="a = 2"))


def test_edit_keeps_crlf_and_bom_byte_for_byte(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma\r\n")
    ok(call_tool(tool, "read_file", file_path="win.txt"))
    ok(call_tool(tool, "edit_file", file_path="win.txt", old_string="alpha\nbeta", new_string="alpha\nnew1\nnew2"))
    assert path.read_bytes() == b"\xef\xbb\xbfalpha\r\nnew1\r\nnew2\r\ngamma\r\n"
    ok(call_tool(tool, "edit_file", file_path="win.txt", old_string="gamma\n", new_string="delta"))
    # the final newline the file had is kept even though new_string dropped it
    assert path.read_bytes() == b"\xef\xbb\xbfalpha\r\nnew1\r\nnew2\r\ndelta\r\n"


def test_edit_keeps_missing_final_newline_and_no_bom(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "n.txt"
    path.write_bytes(b"a\nb")
    ok(call_tool(tool, "read_file", file_path="n.txt"))
    ok(call_tool(tool, "edit_file", file_path="n.txt", old_string="b", new_string="c\n"))
    assert path.read_bytes() == b"a\nc"


def test_edit_keeps_file_mode(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text("echo one\n")
    path.chmod(0o750)
    ok(call_tool(tool, "read_file", file_path="script.sh"))
    ok(call_tool(tool, "edit_file", file_path="script.sh", old_string="one", new_string="two"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert path.read_text() == "echo two\n"


# -- multi_edit_file -------------------------------------------------------------------------


def test_multi_edit_applies_in_order_and_writes_once(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_text("a b c\n")
    ok(call_tool(tool, "read_file", file_path="m.txt"))
    result = ok(call_tool(tool, "multi_edit_file", file_path="m.txt", edits=[
        {"old_string": "a", "new_string": "x"},
        {"old_string": "x b", "new_string": "y"},  # sees the first edit's result
        {"old_string": "c", "new_string": "z", "replace_all": True},
    ]))
    assert result.startswith("Edited m.txt: 3 replacements.")
    assert path.read_text() == "y z\n"


def test_multi_edit_keeps_bom_crlf_and_missing_final_newline_byte_for_byte(
    tool: BuiltinFileTool, tmp_path: Path
) -> None:
    path = tmp_path / "win.ini"
    path.write_bytes(b"\xef\xbb\xbf[a]\r\nx=1\r\n[b]\r\ny=2")
    ok(call_tool(tool, "read_file", file_path="win.ini"))
    ok(call_tool(tool, "multi_edit_file", file_path="win.ini", edits=[
        {"old_string": "[a]\nx=1\n", "new_string": "[a]\nx=10\nz=3\n"},
        {"old_string": "y=2", "new_string": "y=20\n"},
    ]))
    assert path.read_bytes() == b"\xef\xbb\xbf[a]\r\nx=10\r\nz=3\r\n[b]\r\ny=20"


def test_multi_edit_is_all_or_nothing(tool: BuiltinFileTool, tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_text("one\ntwo\nthree\n")
    before = path.stat().st_mtime_ns
    ok(call_tool(tool, "read_file", file_path="m.txt"))
    message = err(call_tool(tool, "multi_edit_file", file_path="m.txt", edits=[
        {"old_string": "one", "new_string": "1"},
        {"old_string": "four", "new_string": "4"},
        {"old_string": "three", "new_string": "3"},
    ]))
    assert "edit 2 of 3 failed; no edits were applied, the file is unchanged." in message
    assert path.read_text() == "one\ntwo\nthree\n"
    assert path.stat().st_mtime_ns == before
    assert "edits is empty" in err(call_tool(tool, "multi_edit_file", file_path="m.txt", edits=[]))
    bad = call_tool(tool, "multi_edit_file", file_path="m.txt", edits=[{"old_string": "one"}])
    assert "new_string" in err(bad)


# -- ls --------------------------------------------------------------------------------------


def test_ls_dirs_first_sizes_and_gitignore(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "Zeta").mkdir()
    (tmp_path / "app.log").write_text("noise")
    (tmp_path / "main.py").write_text("x" * 2048)
    (tmp_path / "link").symlink_to("main.py")
    assert ok(call_tool(tool, "ls")) == (
        "src/\nZeta/\n.gitignore  13 B\nlink -> main.py\nmain.py  2.0 KB\n"
        "[5 entries in .; 3 hidden (.git or .gitignore)]"
    )
    assert ok(call_tool(tool, "ls", path="src")) == "(src is empty)"
    assert "not a directory" in err(call_tool(tool, "ls", path="main.py"))


def test_ls_caps_entries(tool: BuiltinFileTool, tmp_path: Path) -> None:
    for i in range(600):
        (tmp_path / f"f{i:03d}.txt").write_text("")
    out = ok(call_tool(tool, "ls")).splitlines()
    assert len(out) == 501
    assert out[-1] == "[600 entries in .; showing the first 500; use glob to narrow down]"


def test_a_page_of_long_lines_stops_at_the_output_limit(tool: BuiltinFileTool, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("w" * 1500 + "\n") * 1000)
    out = ok(call_tool(tool, "read_file", file_path="wide.txt", offset=1, limit=1000)).splitlines()
    shown = len(out) - 1
    assert 100 < shown < 1000
    assert out[-1] == f"(lines 1-{shown} of 1,000 shown; output size limit reached; next page: offset={shown + 1})"
