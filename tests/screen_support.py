"""The REPL in a pseudo-terminal, read as a person sees it: its output fed into a terminal
emulator (pyte), so a test asserts on the screen (what is visible, at what width) rather
than on the byte stream."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte
from cli_support import AGENTICA, cli_env, model_args


class Screen:
    def __init__(self, child: pexpect.spawn, columns: int, lines: int):
        self.child = child
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.Stream(self.screen)
        self.raw: list[str] = []

    def pump(self, timeout: float = 0.05) -> None:
        """Feed whatever the program printed into the emulator."""
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=timeout)
            except pexpect.TIMEOUT:
                return
            except pexpect.EOF:
                return
            self.raw.append(data)
            self.stream.feed(data)
            timeout = 0.01

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, check: Callable[[str], bool], timeout: float = 20, what: str = "") -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            text = self.text()
            if check(text):
                return text
        raise AssertionError(f"timed out waiting for {what or check}; the screen:\n{self.text()}")

    def wait_text(self, needle: str, timeout: float = 20) -> str:
        return self.wait_for(lambda text: needle in text, timeout, repr(needle))

    def resize(self, columns: int, lines: int) -> None:
        self.pump()
        self.screen.resize(lines, columns)
        self.child.setwinsize(lines, columns)

    def send(self, keys: str) -> None:
        self.child.send(keys)


def spawn_screen(home: Path, project: Path, server: object, *extra: str, columns: int = 80,
                 lines: int = 30) -> Screen:
    env = cli_env(home, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color", COLUMNS=str(columns), LINES=str(lines))
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(AGENTICA[0], [*AGENTICA[1:], *model_args(server), *extra], cwd=str(project), env=env,
                          encoding="utf-8", dimensions=(lines, columns), timeout=20)
    screen = Screen(child, columns, lines)
    screen.wait_text("❯")
    return screen
