"""Run the scripted model server as a separate process (for driving the `agentica` command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentica_cli.testing.turns import Turn, validate


class ScriptedServerProcess:
    """`python -m agentica_cli.testing.server` in a child process, as a context manager.

    with ScriptedServerProcess([turns.text("hi")]) as server:
        subprocess.run(["agentica", "-p", "x", "--base-url", server.base_url, ...])
        assert server.requests[0]["messages"][-1]["content"] == "x"
    """

    def __init__(self, turns: Iterable[Turn], *, workdir: str | os.PathLike[str] | None = None,
                 startup_timeout: float = 10.0):
        self.turns = list(turns)
        for turn in self.turns:
            if callable(turn):
                raise TypeError("a subprocess server needs JSON turns, not callables")
            validate(turn)
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="scripted-model-")
        self.dir = Path(workdir or self._tmp.name)  # type: ignore[union-attr]
        self.script_file = self.dir / "turns.json"
        self.port_file = self.dir / "port.txt"
        self.requests_file = self.dir / "requests.jsonl"
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Request bodies received so far (read from the child's requests file)."""
        if not self.requests_file.exists():
            return []
        lines = self.requests_file.read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["body"] for line in lines if line.strip()]

    def start(self) -> ScriptedServerProcess:
        self.script_file.write_text(json.dumps(self.turns), encoding="utf-8")
        for stale in (self.port_file, self.requests_file):
            stale.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "agentica_cli.testing.server", "--script", str(self.script_file),
               "--port-file", str(self.port_file), "--requests-file", str(self.requests_file)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + self.startup_timeout
        while not self.port_file.exists():
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"scripted model server exited with {self.proc.returncode}: {err}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("scripted model server did not start")
            time.sleep(0.01)
        self.port = int(self.port_file.read_text())
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> ScriptedServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
