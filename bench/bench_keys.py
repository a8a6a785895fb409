"""Keystroke-to-screen latency in the REPL: at the idle prompt, and while a turn streams.

Through a pseudo-terminal, like a person at a terminal: one key at a time is written to the
terminal, and the time until the REPL has written it back to the screen is measured. At the
idle prompt prompt_toolkit echoes it; during a turn (the scripted model streaming an answer
in 200 chunks, 20 ms apart, so the live area is busy redrawing) the key shows in the
type-ahead line under the live area. The idle prompt is the floor: the figure to read is
the busy/idle ratio.

    .venv/bin/python bench/bench_keys.py [--keys 40]

Prints the figures, then one `RESULT {json}` line.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import agentica_command, emit_result, median, print_machine

ALPHABET = "abcdefghijklmnopqrstuvwxyz"


class Terminal:
    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True)
        os.close(slave)
        self.seen = b""

    def read_until(self, needle: bytes, timeout: float = 20) -> float:
        """Read until `needle` appears in what was written since the last call; the time it did."""
        deadline = time.monotonic() + timeout
        start = len(self.seen)
        while True:
            found = self.seen.find(needle, max(0, start - len(needle)))
            if found >= 0:
                self.seen = self.seen[found + len(needle):]
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise RuntimeError(f"never saw {needle!r}; last output {self.seen[-300:]!r}")
            readable, _, _ = select.select([self.master], [], [], 0.01)
            if readable:
                chunk = os.read(self.master, 65536)
                if b"\x1b[6n" in chunk:
                    os.write(self.master, b"\x1b[1;1R")
                self.seen += chunk

    def key_latency(self, key: str, echo: bytes) -> float:
        sent = time.perf_counter()
        os.write(self.master, key.encode())
        return (self.read_until(echo) - sent) * 1000

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=40)
    args = parser.parse_args()
    print_machine("keystroke-to-screen latency")
    from agentica_cli.testing import ScriptedModelServer, turns

    answer = " ".join(f"word{i}" for i in range(1500))
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(
        [turns.text(answer, chunk_delay=0.02)] * 3
    ) as server:
        home, work = Path(tmp, "home"), Path(tmp, "work")
        home.mkdir()
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
        env.update(AGENTICA_HOME=str(home), TERM="xterm-256color", COLUMNS="120", LINES="40", NO_COLOR="1")
        cmd = [*agentica_command(), "--base-url", server.base_url, "--api-key", "x", "--model", "m"]
        term = Terminal(cmd, env, work)
        try:
            term.read_until("❯".encode())
            idle = []
            for i in range(args.keys):
                key = ALPHABET[i % len(ALPHABET)]
                idle.append(term.key_latency(key, key.encode()))
                time.sleep(0.02)
            os.write(term.master, b"\x15")  # Ctrl-U: clear the line
            time.sleep(0.2)
            os.write(term.master, b"go\r")
            term.read_until(b"word5 ")  # the answer streams: the live area redraws 10 times a second
            busy = []
            typed = ""
            for i in range(min(args.keys, 60)):
                key = ALPHABET[i % len(ALPHABET)]
                typed += key
                # the type-ahead line shows everything typed so far, ending with this key
                busy.append(term.key_latency(key, f"› {typed}\x1b".encode()))
                time.sleep(0.03)
        finally:
            term.close()
    idle_ms, busy_ms = median(idle), median(busy)
    p95 = sorted(busy)[int(len(busy) * 0.95) - 1]
    print(f"idle prompt echo:     median {idle_ms:.1f} ms, max {max(idle):.1f} ms ({len(idle)} keys)")
    print(f"during a turn:        median {busy_ms:.1f} ms, p95 {p95:.1f} ms, max {max(busy):.1f} ms ({len(busy)} keys)")
    print(f"ratio busy / idle:    {busy_ms / idle_ms:.2f}x")
    emit_result("keys", {"idle_ms": round(idle_ms, 2), "busy_ms": round(busy_ms, 2), "busy_p95_ms": round(p95, 2),
                         "ratio": round(busy_ms / idle_ms, 2)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
