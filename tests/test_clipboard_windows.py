"""Ctrl-V on Windows: the clipboard's image is saved by PowerShell with .NET's clipboard. No
Windows here, so a stand-in `powershell` on PATH checks the command line it gets (the flags
and the script) and plays the clipboard; the real PowerShell path is untested (docs say so)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from agentica_cli.tui import image_input

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32

# Stands in for powershell.exe: checks the flags, finds the target in the script's Save('...')
# (a single-quoted PowerShell string: '' is one '), and writes the image the "clipboard" holds.
FAKE_POWERSHELL = f"""#!{sys.executable}
import os, re, sys
args = sys.argv[1:]
assert args[:5] == ["-NoProfile", "-NonInteractive", "-STA", "-Command", args[4]], args
script = args[4]
assert "[System.Windows.Forms.Clipboard]::ContainsImage()" in script, script
if not os.environ.get("FAKE_CLIPBOARD"):
    sys.exit(3)
path = re.search(r"\\.Save\\('((?:[^']|'')*)', \\[System\\.Drawing\\.Imaging\\.ImageFormat\\]::Png\\)", script)
open(path.group(1).replace("''", "'"), "wb").write(open(os.environ["FAKE_CLIPBOARD"], "rb").read())
"""


@pytest.fixture
def windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "powershell"
    fake.write_text(FAKE_POWERSHELL)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setattr(image_input, "sys", types.SimpleNamespace(platform="win32"))
    return tmp_path


@pytest.mark.skipif(os.name != "posix", reason="the stand-in powershell is a script with a #! line")
def test_windows_saves_the_clipboard_image_through_powershell(windows: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    folder = windows / "it's here"  # a quote in the path: doubled inside the PowerShell string
    (windows / "held.png").write_bytes(PNG)
    monkeypatch.setenv("FAKE_CLIPBOARD", str(windows / "held.png"))
    path, problem = image_input.clipboard_image(folder)
    assert problem == "" and path is not None and path.parent == folder and path.read_bytes() == PNG
    monkeypatch.delenv("FAKE_CLIPBOARD")
    assert image_input.clipboard_image(folder) == (None, "the clipboard holds no image")


def test_windows_without_powershell_says_what_to_do(windows: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(windows / "nothing-here"))
    assert image_input.clipboard_image(windows / "out") == (
        None, "no PowerShell found to read the clipboard with: save the image and type @path")
