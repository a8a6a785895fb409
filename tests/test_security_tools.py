"""Hardening of the builtin tools (issue 18): the path-check race, big edits, stale temp files.

The agent-process side (children dying with the agent, /proc/<pid>/environ) is in
tests/test_security_process.py.
"""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from builtin_support import call_tool

from builtin_tools import BuiltinFileTool, safe_open
from builtin_tools.atomic_write import STALE_TEMP_AGE_S, temp_name_for
from builtin_tools.safe_open import PathChangedError

RENAME_EXCHANGE = 2
# renameat2 by number where libc has no wrapper (glibc < 2.28)
RENAMEAT2_SYSCALL = {"x86_64": 316, "aarch64": 276}.get(platform.machine())

# The swapper runs in its own process so the exchange really races the tool (two cores),
# not only at the GIL's switch points.
SWAPPER = textwrap.dedent("""
    import ctypes, os, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    a, b, seconds, ready = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    AT_FDCWD = -100
    if hasattr(libc, "renameat2"):
        swap = lambda: libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, 2)
    else:
        number = int(sys.argv[5])
        swap = lambda: libc.syscall(number, AT_FDCWD, a, AT_FDCWD, b, 2)
    open(ready, "w").close()
    swaps, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        if swap() != 0:
            sys.exit(f"renameat2 failed: errno {ctypes.get_errno()}")
        swaps += 1
    if swaps % 2:  # leave the folder under its own name
        swap()
    print(swaps)
""")


def _exchange_supported(folder: Path) -> str | None:
    """None if renameat2(RENAME_EXCHANGE) works in `folder`, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = folder / "probe-a", folder / "probe-b"
    a.mkdir()
    b.symlink_to(a)
    try:
        if hasattr(libc, "renameat2"):
            result = libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE)
        elif RENAMEAT2_SYSCALL is not None:
            result = libc.syscall(RENAMEAT2_SYSCALL, -100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE)
        else:
            return f"no renameat2 wrapper in libc and no syscall number known for {platform.machine()}"
        if result != 0:
            return f"renameat2(RENAME_EXCHANGE) failed here: {os.strerror(ctypes.get_errno())}"
        return None
    finally:
        for p in (a, b):
            if p.is_symlink():
                p.unlink()
            elif p.is_dir():
                p.rmdir()


@pytest.fixture(params=["openat2", "component-walk"])
def resolution(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test runs with the kernel's openat2 (when present) and with the portable walk."""
    if request.param == "component-walk":
        safe_open.use_component_walk(True)
    elif safe_open._openat2() is None:
        pytest.skip("openat2 is not available here (Linux < 5.6 or filtered); the walk is tested")
    yield request.param
    safe_open.use_component_walk(False)


def test_swapping_a_folder_for_a_symlink_never_lands_a_write_outside(tmp_path: Path, resolution: str) -> None:
    """Finding 7: between the path check and the write, `sub` is swapped with a symlink to a
    folder outside (renameat2 RENAME_EXCHANGE in a loop for ~3 s). Before the fix, writes
    landed outside; now every write lands in the real folder or is refused."""
    reason = _exchange_supported(tmp_path)
    if reason:
        pytest.skip(reason)
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "sub").mkdir()
    (work / "swap").symlink_to(outside)
    ready = tmp_path / "swapper-ready"
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(work / "sub"), str(work / "swap"), "3", str(ready),
         str(RENAMEAT2_SYSCALL or 0)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    tool = BuiltinFileTool(work)
    written: list[str] = []
    refusals: dict[str, int] = {}
    try:
        deadline = time.monotonic() + 10
        while not ready.exists():
            assert time.monotonic() < deadline, "the swapper did not start"
            time.sleep(0.01)
        index = 0
        while swapper.poll() is None:
            name = f"f{index}.txt"
            index += 1
            try:
                tool.write_file(f"sub/{name}", "x\n")
                written.append(name)
            except (PermissionError, FileNotFoundError, NotADirectoryError) as err:
                refusals[type(err).__name__] = refusals.get(type(err).__name__, 0) + 1
    finally:
        if swapper.poll() is None:
            swapper.kill()
        out, err = swapper.communicate(timeout=10)
    assert swapper.returncode == 0, err
    assert int(out) > 1000, f"only {out} swaps: the race was not exercised"
    assert sorted(os.listdir(outside)) == [], f"{len(os.listdir(outside))} writes landed outside; refused: {refusals}"
    assert (work / "sub").is_dir() and not (work / "sub").is_symlink()
    assert written, f"no write succeeded in {index} attempts: {refusals}"
    assert set(written) <= set(os.listdir(work / "sub"))
    assert set(refusals) <= {"PathOutsideRootsError", "PathChangedError"}, refusals


def test_in_root_symlinks_still_work_and_a_symlink_that_appears_is_refused(tmp_path: Path, resolution: str) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.txt").write_text("one\n")
    (tmp_path / "alias").symlink_to("real")  # a folder symlink that stays inside
    (tmp_path / "a-link.txt").symlink_to("real/a.txt")  # a file symlink that stays inside
    tool = BuiltinFileTool(tmp_path)
    assert call_tool(tool, "read_file", file_path="alias/a.txt").result.startswith("     1\tone")
    assert call_tool(tool, "edit_file", file_path="a-link.txt", old_string="one", new_string="two").error is None
    assert (tmp_path / "a-link.txt").is_symlink() and (tmp_path / "real" / "a.txt").read_text() == "two\n"
    assert call_tool(tool, "write_file", file_path="alias/new/b.txt", content="b\n").error is None
    assert (tmp_path / "real" / "new" / "b.txt").read_text() == "b\n"
    assert call_tool(tool, "ls", path="alias").result.splitlines()[:2] == ["new/", "a.txt  4 B"]

    # A symlink met at open time (the check saw none) is refused, not followed.
    sandbox = tool.sandbox
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    real = sandbox.resolve("real/a.txt")
    (tmp_path / "real").rename(tmp_path / "moved")
    (tmp_path / "real").symlink_to(outside)
    with pytest.raises(PathChangedError, match="is now a symlink"):
        sandbox.open_parent(real)
    with pytest.raises(PathChangedError):
        sandbox.open_parent(sandbox.work_dir / "real" / "deeper" / "x.txt", create=True)
    assert list(outside.iterdir()) == []


# -- finding 12: big edits are refused before the file is read ---------------------------------


def test_editing_a_file_over_the_limit_is_refused_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    with open(path, "wb") as f:
        f.write(b"needle at the start\n" + b"text\n" * 4000)  # text where read_file sniffs for binary
        f.truncate(190 * 1024 * 1024)  # the rest sparse: 190 MB in an instant, no disk used
    tool = BuiltinFileTool(tmp_path)
    assert call_tool(tool, "read_file", file_path="big.log", offset=1, limit=1).error is None
    for name, args in (
        ("edit_file", {"old_string": "needle", "new_string": "pin"}),
        ("multi_edit_file", {"edits": [{"old_string": "needle", "new_string": "pin"}]}),
    ):
        call = call_tool(tool, name, file_path="big.log", **args)
        assert call.error is not None, call.result
        assert call.error.startswith("Error: FileEditError: big.log is 190.0 MB, over the 20.0 MB limit"), call.error
        assert "execute" in call.error and "sed" in call.error
    assert path.stat().st_size == 190 * 1024 * 1024
    with open(path, "rb") as f:
        assert f.read(20) == b"needle at the start\n"


def test_the_edit_limit_is_a_constructor_option_and_smaller_files_still_edit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 2000 + "\nend\n")
    tool = BuiltinFileTool(tmp_path, max_edit_bytes=1000)
    assert call_tool(tool, "read_file", file_path="a.txt").error is None
    call = call_tool(tool, "edit_file", file_path="a.txt", old_string="end", new_string="fin")
    assert call.error is not None and "over the 1000 B limit" in call.error
    roomy = BuiltinFileTool(tmp_path, max_edit_bytes=4000)
    assert call_tool(roomy, "read_file", file_path="a.txt").error is None
    assert call_tool(roomy, "edit_file", file_path="a.txt", old_string="end", new_string="fin").error is None
    assert (tmp_path / "a.txt").read_text().endswith("\nfin\n")


def test_peak_memory_of_a_refused_big_edit_stays_small(tmp_path: Path) -> None:
    """The refusal comes from the size alone: a 190 MB file is never read into memory."""
    script = textwrap.dedent(f"""
        import resource, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from builtin_tools import BuiltinFileTool
        with open({str(tmp_path / "big.txt")!r}, "wb") as f:
            f.write(b"head\\n" + b"text\\n" * 4000)
            f.truncate(190 * 1024 * 1024)
        tool = BuiltinFileTool({str(tmp_path)!r})
        tool.read_file("big.txt", offset=1, limit=1)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            tool.edit_file("big.txt", "head", "tail")
        except Exception as err:
            print(type(err).__name__)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    kind, growth_kb = proc.stdout.split()
    assert kind == "FileEditError"
    assert int(growth_kb) < 20 * 1024, f"peak RSS grew by {growth_kb} KB"


# -- finding 14: temp files left by a killed write are cleaned up ------------------------------


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def test_stale_temp_files_are_removed_on_the_first_write_into_their_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    stale = tmp_path / "src" / temp_name_for("main.py")
    fresh = tmp_path / "src" / temp_name_for("util.py")
    elsewhere = tmp_path / temp_name_for("top.py")  # another folder: not written into, not touched
    lookalike = tmp_path / "src" / ".notes.txt.a1b2c3d4.tmp"  # not our pattern (e.g. another editor's)
    users = tmp_path / "src" / "agentica-report.tmp"
    for path in (stale, fresh, elsewhere, lookalike, users):
        path.write_text("partial")
    for path in (stale, elsewhere, lookalike, users):
        _age(path, STALE_TEMP_AGE_S + 60)
    _age(fresh, STALE_TEMP_AGE_S - 120)  # maybe a write of another agent still in progress
    assert stale.name.startswith(".main.py.agentica-") and stale.name.endswith(".tmp")

    tool = BuiltinFileTool(tmp_path)
    assert call_tool(tool, "write_file", file_path="src/new.py", content="x = 1\n").error is None
    assert not stale.exists()
    assert fresh.exists() and elsewhere.exists() and lookalike.exists() and users.exists()
    assert sorted(p.name for p in (tmp_path / "src").iterdir() if p.name != "new.py") == sorted(
        [fresh.name, lookalike.name, users.name]
    )

    # Once per folder: a stale temp appearing later in the same folder waits for the next session.
    later = tmp_path / "src" / temp_name_for("b.py")
    later.write_text("partial")
    _age(later, STALE_TEMP_AGE_S + 60)
    assert call_tool(tool, "write_file", file_path="src/other.py", content="y\n").error is None
    assert later.exists()
    assert call_tool(BuiltinFileTool(tmp_path), "write_file", file_path="src/third.py", content="z\n").error is None
    assert not later.exists()


def test_a_write_killed_before_its_rename_leaves_a_temp_of_the_pattern(tmp_path: Path) -> None:
    """What the cleanup is for: SIGKILL between the temp file and the rename leaves the temp."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from builtin_tools import BuiltinFileTool
        os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
        BuiltinFileTool({str(tmp_path)!r}).write_file("doc.md", "# title\\n")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    [left] = list(tmp_path.iterdir())
    assert left.name.startswith(".doc.md.agentica-") and left.read_text() == "# title\n"
    _age(left, STALE_TEMP_AGE_S + 1)
    assert call_tool(BuiltinFileTool(tmp_path), "write_file", file_path="doc.md", content="# t\n").error is None
    assert [p.name for p in tmp_path.iterdir()] == ["doc.md"]
