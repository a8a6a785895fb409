"""The `agentica` command in a pseudo-terminal, for the REPL tests: one way to start it
(`spawn_agentica`, or the `start_repl` fixture), read either as a byte stream (`Repl`, pexpect's
expect) or as a person sees it (`Screen`: the output fed into a terminal emulator, pyte, so a test
asserts on what is visible and at what width).

The `start_repl` fixture (tests/conftest.py) is `started_repls` for a test's `home` and `project`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
import pyte
from cli_support import AGENTICA, cli_env, model_args

PROMPT = "❯"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
# Waits for output, not speed claims: long enough for a busy 2-core machine running the suite on
# four xdist workers beside other work.
WAIT = 30


def flat(screen: str) -> str:
    """Terminal output as plain words: escape codes gone, line breaks (wrapping) as spaces."""
    return " ".join(ANSI.sub("", screen).split())


def pty_env(home: Path, *, columns: int = 120, lines: int = 40, color: bool = False,
            base: dict[str, str] | None = None, **extra: str | None) -> dict[str, str]:
    """The environment of `agentica` on a terminal: `base` (default: cli_env, no real keys) with
    an xterm that is never asked where its cursor is (nothing here would answer), COLUMNS and
    LINES of the terminal's size, NO_COLOR unless `color`, then `extra` (None removes a name)."""
    env = dict(base) if base is not None else cli_env(home)
    env.update(PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm-256color", COLUMNS=str(columns), LINES=str(lines))
    if color:
        env.pop("NO_COLOR", None)
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def spawn_agentica(home: Path, project: Path, args: list[str], *, columns: int = 120, lines: int = 40,
                   timeout: float = WAIT, color: bool = False, env: dict[str, str] | None = None,
                   **extra: str | None) -> pexpect.spawn:
    """`agentica ARGS` in `project` on a `lines` x `columns` pseudo-terminal; the environment is
    pty_env's (`env` in place of cli_env's, `extra` on top). The caller ends the child."""
    return pexpect.spawn(AGENTICA[0], [*AGENTICA[1:], *args], cwd=str(project),
                         env=pty_env(home, columns=columns, lines=lines, color=color, base=env, **extra),
                         encoding="utf-8", dimensions=(lines, columns), timeout=timeout)


def exit_repl(child: pexpect.spawn, timeout: float = WAIT) -> int | str | None:
    """Ctrl-D at the prompt; the exit status once the REPL has gone (or how a signal ended it)."""
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=timeout)
    # Its terminal closed, it may still be ending (history, SessionEnd hooks) on a busy machine:
    # close() alone would kill it after 0.1 s and report no exit status.
    deadline = time.monotonic() + timeout
    while child.isalive() and time.monotonic() < deadline:
        time.sleep(0.02)
    alive = child.isalive()
    child.close()
    if child.exitstatus is None:  # a signal ended it: which one, for the failing test's message
        return f"killed by signal {child.signalstatus}" + (" (still running when the wait ended)" if alive else "")
    return child.exitstatus


class Repl:
    """A spawned REPL read as a stream: wait for a pattern, type a line, leave."""

    def __init__(self, child: pexpect.spawn):
        self.child = child

    def expect(self, pattern: str, timeout: float = WAIT) -> str:
        self.child.expect(pattern, timeout=timeout)
        return self.child.before + self.child.after

    def expect_prompt(self, timeout: float = WAIT) -> None:
        self.child.expect(PROMPT, timeout=timeout)

    def send_line(self, text: str) -> None:
        self.child.send(text + "\r")

    def exit(self) -> int | str | None:
        return exit_repl(self.child)


@contextmanager
def started_repls(home: Path, project: Path) -> Iterator[Callable[..., Repl]]:
    """`start(server, *flags)`: the REPL on the scripted `server`, in `project`, at its first
    prompt (`wait=False`: right after the start, e.g. for a trust question; `env` and `extra` as
    spawn_agentica's). Every REPL still running at the end is ended. (The `start_repl` fixture.)"""
    children: list[pexpect.spawn] = []

    def start(server: Any, *flags: str, wait: bool = True, env: dict[str, str] | None = None,
              **extra: str | None) -> Repl:
        child = spawn_agentica(home, project, [*model_args(server), *flags], env=env, **extra)
        children.append(child)
        repl = Repl(child)
        if wait:
            repl.expect_prompt()
        return repl

    try:
        yield start
    finally:
        for child in children:
            if child.isalive():
                child.terminate(force=True)


class Screen:
    def __init__(self, child: pexpect.spawn, columns: int, lines: int, history: int = 0):
        self.child = child
        # `history`: rows scrolled off the top are kept (`all_text`), for output taller than the screen
        self.screen = pyte.HistoryScreen(columns, lines, history=history) if history else pyte.Screen(columns, lines)
        self.stream = pyte.Stream(self.screen)
        self.raw: list[str] = []
        # Everything read from the program goes into the emulator, whether `pump` or pexpect's
        # `child.expect` read it: a test may wait on the stream and then look at the screen.
        child.logfile_read = self

    def write(self, data: str) -> None:
        self.raw.append(data)
        self.stream.feed(data)

    def flush(self) -> None:
        pass

    def pump(self, timeout: float = 0.05) -> None:
        """Read whatever the program printed (into the emulator, by `write`)."""
        while True:
            try:
                self.child.read_nonblocking(65536, timeout=timeout)
            except pexpect.TIMEOUT:
                return
            except pexpect.EOF:
                return
            timeout = 0.01

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def all_text(self) -> str:
        """The rows scrolled off the top (a `history` screen's), then the screen."""
        top = getattr(getattr(self.screen, "history", None), "top", ())
        columns = self.screen.columns
        scrolled = ["".join(row[x].data for x in range(columns)).rstrip() for row in top]
        return "\n".join([*scrolled, self.text()])

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

    def wait_whole(self, question: str, timeout: float = 20) -> str:
        """Wait until all of `question` is on screen, wrapped over as many rows as it takes."""
        return self.wait_for(lambda text: shows_whole(text, question), timeout, f"all of {question!r}")

    def resize(self, columns: int, lines: int) -> None:
        self.pump()
        self.screen.resize(lines, columns)
        self.child.setwinsize(lines, columns)

    def send(self, keys: str) -> None:
        self.child.send(keys)


def shows_whole(screen_text: str, question: str) -> bool:
    """Is all of `question` on the screen? Compared without whitespace: wrapping splits it
    over rows anywhere, and a row's trailing spaces are not kept."""
    return "".join(question.split()) in "".join(screen_text.split())


def open_screen(home: Path, project: Path, args: list[str], *, columns: int = 80, lines: int = 30,
                history: int = 0, **extra: str | None) -> Screen:
    """`agentica ARGS` (in colour) on a `lines` x `columns` screen, just started."""
    child = spawn_agentica(home, project, args, columns=columns, lines=lines, timeout=20, color=True, **extra)
    return Screen(child, columns, lines, history)


def spawn_screen(home: Path, project: Path, server: object, *extra: str, columns: int = 80,
                 lines: int = 30, history: int = 0) -> Screen:
    """The REPL on the scripted `server`, on a screen, at its first prompt."""
    screen = open_screen(home, project, [*model_args(server), *extra], columns=columns, lines=lines,
                         history=history)
    screen.wait_text(PROMPT)
    return screen
