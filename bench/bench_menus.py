"""The as-you-type menus in a 20,000-file git project: first paint, and keystroke to screen.

A git work tree of 20,000 files (bulk/dK/fN.txt) plus a few real-looking ones; the REPL is
started in it on a pseudo-terminal and read through a terminal emulator (pyte), as a person
sees it. First paint: start to the prompt on screen. Then `@f` and digits are typed one key
at a time; after each key the time until the menu's first row is the best match for what has
been typed so far (`@f19` -> bulk/d0/f19.txt): the fuzzy match over the whole listing and the
redraw, per key.

    .venv/bin/python bench/bench_menus.py [--files 20000] [--rounds 8]

Prints the figures, then one `RESULT {json}` line.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import agentica_command, emit_result, median, print_machine
from bench_keys import Terminal


def make_project(root: Path, files: int) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for number in range(files):
        folder = root / "bulk" / f"d{number // 500}"
        if number % 500 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{number}.txt").write_bytes(b"")
    (root / "src").mkdir()
    (root / "src" / "module_util.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)  # tracked, as a real project's are


class ScreenTerminal(Terminal):
    """The terminal's output also fed into an emulator, so the bench sees what is drawn."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path, columns: int = 120, lines: int = 40):
        import pyte

        super().__init__(cmd, env, cwd)
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.Stream(self.screen)

    def wait_screen(self, check, timeout: float = 20) -> float:  # type: ignore[no-untyped-def]
        import select

        deadline = time.monotonic() + timeout
        while True:
            if check(self.screen.display):
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise RuntimeError("the screen never showed it:\n" + "\n".join(self.screen.display))
            readable, _, _ = select.select([self.master], [], [], 0.005)
            if readable:
                chunk = os.read(self.master, 65536)
                if b"\x1b[6n" in chunk:
                    os.write(self.master, b"\x1b[1;1R")
                self.stream.feed(chunk.decode("utf-8", errors="replace"))


def input_row_ends_with(typed: str):  # type: ignore[no-untyped-def]
    return lambda rows: any(row.rstrip().endswith("❯ " + typed) for row in rows)


def first_menu_row_is(typed: str, expected: str):  # type: ignore[no-untyped-def]
    def check(rows: list[str]) -> bool:
        for i, row in enumerate(rows[:-1]):
            if row.rstrip().endswith("❯ " + typed):
                return rows[i + 1].strip().startswith(expected)
        return False

    return check


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    print_machine(f"as-you-type menus, {args.files:,}-file git project")
    from agentica_cli.testing import ScriptedModelServer

    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer([]) as server:
        home, work = Path(tmp, "home"), Path(tmp, "work")
        home.mkdir()
        work.mkdir()
        made = time.perf_counter()
        make_project(work, args.files)
        print(f"project made in {time.perf_counter() - made:.1f} s")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
        env.update(AGENTICA_HOME=str(home), TERM="xterm-256color", COLUMNS="120", LINES="40", NO_COLOR="1",
                   PROMPT_TOOLKIT_NO_CPR="1")
        cmd = [*agentica_command(), "--base-url", server.base_url, "--api-key", "x", "--model", "m"]
        paints: list[float] = []
        keys: list[float] = []
        echoes: list[float] = []
        floor_paints: list[float] = []
        # The machine may be shared: the 1-minute load average beside each figure says how busy it was.
        paint_loads: list[float] = []
        key_loads: list[float] = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            term = ScreenTerminal(cmd, env, work)
            try:
                painted = term.wait_screen(lambda rows: any(r.startswith("❯") for r in rows))
                paints.append((painted - started) * 1000)
                paint_loads.append(os.getloadavg()[0])
                time.sleep(0.3)  # the listing is made in the background after the first paint
                plain = ""
                for letter in "hello":  # the floor: a key echoed with no menu open, same process and machine
                    plain += letter
                    sent = time.perf_counter()
                    os.write(term.master, letter.encode())
                    echoes.append((term.wait_screen(input_row_ends_with(plain)) - sent) * 1000)
                os.write(term.master, b"\x15")  # Ctrl-U: an empty line again
                term.wait_screen(lambda rows: any(row.rstrip() == "❯" for row in rows))
                number = str(rng.randrange(1000, args.files))
                typed = "@f"
                os.write(term.master, typed.encode())
                term.wait_screen(first_menu_row_is(typed, "bulk/d0/f0.txt"))
                for digit in number:
                    typed += digit
                    prefix = int(typed[2:])
                    expected = f"bulk/d{prefix // 500}/f{prefix}.txt"
                    sent = time.perf_counter()
                    os.write(term.master, digit.encode())
                    keys.append((term.wait_screen(first_menu_row_is(typed, expected)) - sent) * 1000)
                key_loads.append(os.getloadavg()[0])
            finally:
                term.close()
            empty = Path(tmp, "empty")  # the floor: the same start in an empty folder, same machine, same moment
            empty.mkdir(exist_ok=True)
            started = time.perf_counter()
            term = ScreenTerminal(cmd, env, empty)
            try:
                floor_paints.append((term.wait_screen(lambda rows: any(r.startswith("❯") for r in rows))
                                     - started) * 1000)
            finally:
                term.close()
    paint_ms, key_ms, echo_ms = median(paints), median(keys), median(echoes)
    p95 = sorted(keys)[max(0, int(len(keys) * 0.95) - 1)]
    floor_ms = median(floor_paints)
    paint_load, key_load = median(paint_loads), median(key_loads)
    print(f"first paint:                  median {paint_ms:.0f} ms, max {max(paints):.0f} ms ({len(paints)} starts); "
          f"in an empty folder {floor_ms:.0f} ms ({paint_ms / floor_ms:.2f}x); load average {paint_load:.1f}")
    print(f"key to menu redrawn (@ fuzzy): median {key_ms:.1f} ms, p95 {p95:.1f} ms, max {max(keys):.1f} ms "
          f"({len(keys)} keys); load average {key_load:.1f}")
    print(f"key echoed, no menu (floor):   median {echo_ms:.1f} ms ({len(echoes)} keys); "
          f"menu / floor {key_ms / echo_ms:.2f}x")
    emit_result("menus", {"files": args.files, "first_paint_ms": round(paint_ms, 1),
                          "first_paint_empty_ms": round(floor_ms, 1), "key_menu_ms": round(key_ms, 2),
                          "key_menu_p95_ms": round(p95, 2), "echo_ms": round(echo_ms, 2),
                          "ratio": round(key_ms / echo_ms, 2),
                          "load_first_paint": round(paint_load, 2), "load_keys": round(key_load, 2),
                          "cpus": os.cpu_count()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
