"""Images typed or pasted into the REPL: `@shot.png`, a pasted path, Ctrl-V from the clipboard.

A message's images are found here and sent as image parts with its text (the text keeps the
path, so the model can also name or open the file). What the clipboard holds is read with
the platform's own tool: `wl-paste` (Wayland), `xclip` (X11), `pngpaste` or `osascript`
(macOS), PowerShell with .NET's clipboard (Windows: written, not tested); over SSH or in
a terminal without one of those, Ctrl-V cannot reach an image: save it and type `@path` instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentica_cli.images import IMAGE_SUFFIXES, Image, ImageError, is_image_path, load

# `@path`, or a path on its own that a terminal pastes when a file is dropped on it:
# absolute, ~/, ./ or file://, possibly quoted or with backslash-escaped spaces.
_SUFFIXES = "|".join(s.lstrip(".") for s in IMAGE_SUFFIXES)
MENTION = re.compile(r"(?<!\S)@(\"[^\"]+\"|'[^']+'|\S+)")
PASTED = re.compile(
    rf"""(?<![\w@])('(?:file://)?[/~][^']*?\.(?:{_SUFFIXES})'|"(?:file://)?[/~][^"]*?\.(?:{_SUFFIXES})"|"""
    rf"""(?:file://|~/|\./|/)(?:\\ |[^\s'"])+?\.(?:{_SUFFIXES}))(?=\s|$)""",
    re.IGNORECASE,
)
CLIPBOARD_TIMEOUT_S = 3.0


def _unquote(token: str) -> str:
    token = token.rstrip(".,;:!?)") if token[:1] not in "'\"" else token
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        token = token[1:-1]
    elif "\\ " in token:
        token = token.replace("\\ ", " ")
    return token.removeprefix("file://")


def find_image_paths(text: str, work_dir: Path) -> list[Path]:
    """Image files the message names by `@path` or by a pasted path, that exist, in order."""
    found: list[Path] = []
    candidates = [m.group(1) for m in MENTION.finditer(text)] + [m.group(1) for m in PASTED.finditer(text)]
    for token in candidates:
        name = _unquote(token)
        if not is_image_path(name):
            continue
        path = Path(name).expanduser()
        path = path if path.is_absolute() else work_dir / path
        if path.is_file() and path not in found:
            found.append(path)
    return found


def attach_images(text: str, work_dir: Path, extra: Sequence[str] = ()) -> tuple[list[Image], list[str]]:
    """The images a message names (and `extra` paths: --image), loaded and fitted, and one
    line for each problem."""
    images: list[Image] = []
    problems: list[str] = []
    paths = [Path(p).expanduser() for p in extra]
    paths = [p if p.is_absolute() else Path.cwd() / p for p in paths]
    for path in [*paths, *find_image_paths(text, work_dir)]:
        try:
            image = load(path)
        except ImageError as err:
            problems.append(str(err))
            continue
        image.name = str(path.relative_to(work_dir)) if path.is_relative_to(work_dir) else str(path)
        images.append(image)
    return images, problems


def clipboard_commands() -> list[list[str]]:
    """The commands that print the clipboard's image as PNG here, most specific first."""
    commands: list[list[str]] = []
    if sys.platform == "darwin":
        if shutil.which("pngpaste"):
            commands.append(["pngpaste", "-"])
        return commands  # osascript is handled by clipboard_image (it writes a file)
    if sys.platform == "win32":
        return commands
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        commands.append(["wl-paste", "--no-newline", "--type", "image/png"])
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        commands.append(["xclip", "-selection", "clipboard", "-target", "image/png", "-out"])
    return commands


def clipboard_image(folder: Path | None = None) -> tuple[Path | None, str]:
    """Save the clipboard's image as a PNG file; (path, "") or (None, why not)."""
    folder = folder or Path(tempfile.gettempdir()) / "agentica-clipboard"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = folder / f"clipboard-{time.strftime('%Y%m%d-%H%M%S')}.png"
    if sys.platform == "darwin" and not shutil.which("pngpaste"):
        script = (f'set f to open for access POSIX file {shlex.quote(str(target))} with write permission\n'
                  'write (the clipboard as «class PNGf») to f\nclose access f')
        return _saved_by(["osascript", "-e", script], target)
    if sys.platform == "win32":
        shell = next((name for name in WINDOWS_SHELLS if shutil.which(name)), None)
        if shell is None:
            return None, "no PowerShell found to read the clipboard with: save the image and type @path"
        argv = [shell, "-NoProfile", "-NonInteractive", "-STA", "-Command", windows_clipboard_script(target)]
        return _saved_by(argv, target, timeout=WINDOWS_TIMEOUT_S)
    commands = clipboard_commands()
    if not commands:
        return None, ("no clipboard tool here (wl-paste for Wayland, xclip for X11, pngpaste on macOS; none over "
                      "SSH): save the image and type @path")
    for argv in commands:
        data = _run(argv)
        if data and data.startswith(b"\x89PNG"):
            target.write_bytes(data)
            return target, ""
    return None, "the clipboard holds no image"


# Windows: PowerShell with .NET's clipboard (Windows PowerShell 5.1 ships with Windows; PowerShell 7
# has the same classes there). The clipboard needs a single-threaded apartment (-STA). Not tested
# here: this project is built and tested on Linux.
WINDOWS_SHELLS = ("powershell", "pwsh")
WINDOWS_TIMEOUT_S = 10.0  # a cold PowerShell that loads Windows Forms takes seconds


def windows_clipboard_script(target: Path) -> str:
    """PowerShell that saves the clipboard's image to `target` as PNG; exit 3 when it holds none."""
    path = str(target).replace("'", "''")  # a single-quoted PowerShell string: ' doubles
    return ("Add-Type -AssemblyName System.Windows.Forms, System.Drawing; "
            "if (-not [System.Windows.Forms.Clipboard]::ContainsImage()) { exit 3 }; "
            f"[System.Windows.Forms.Clipboard]::GetImage().Save('{path}', [System.Drawing.Imaging.ImageFormat]::Png)")


def _saved_by(argv: list[str], target: Path, timeout: float = CLIPBOARD_TIMEOUT_S) -> tuple[Path | None, str]:
    """Run `argv`, which writes the clipboard's image to `target` itself."""
    ok = _run(argv, timeout) is not None and target.is_file() and target.stat().st_size > 0
    return (target, "") if ok else (None, "the clipboard holds no image")


def _run(argv: list[str], timeout: float = CLIPBOARD_TIMEOUT_S) -> bytes | None:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def paste_clipboard_image(buffer: Any, report: Any) -> None:
    """Ctrl-V: put `@<saved png>` at the cursor, or say why there is none."""
    path, problem = clipboard_image()
    if path is None:
        report(problem)
        return
    before = buffer.document.text_before_cursor
    buffer.insert_text(("" if not before or before[-1].isspace() else " ") + f"@{path} ")
