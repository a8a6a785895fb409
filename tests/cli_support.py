"""Running the real `agentica` command against the scripted model server, for the CLI tests."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).with_name("agentica")
AGENTICA = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "agentica_cli.cli.app"]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The test process's environment without any real keys or agentica settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTICA_", "OPENAI_", "DEEPSEEK_", "ZHIPUAI_", "MOONSHOT_", "DASHSCOPE_"))
        and not k.startswith("OPENROUTER_")
    }
    env.update(AGENTICA_HOME=str(home), NO_COLOR="1", COLUMNS="120", LINES="40")
    env.update(extra)
    return env


def run_cli(
    args: list[str],
    *,
    cwd: Path,
    home: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AGENTICA, *args],
        cwd=cwd,
        env=env or cli_env(home),
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@functools.cache
def scripted_key_file() -> str:
    """A file holding the scripted server's key "test-key": `--api-key KEY` would put it in the
    process list, and agentica warns about that on stderr. (The folder name must not hold the key:
    the file is hidden from commands, so its path is in the sandbox's arguments.)"""
    folder = Path(tempfile.mkdtemp(prefix="agentica-scripted-key-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "key").write_text("test-key\n")
    return str(folder / "key")


def model_args(server: Any) -> list[str]:
    return ["--base-url", server.base_url, "--api-key-file", scripted_key_file(), "--model", "scripted-model"]


def last_user_message(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}
