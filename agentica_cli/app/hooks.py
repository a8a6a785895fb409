"""Shell-command hooks around tool calls, from `[[hooks.before_tool_call]]` and
`[[hooks.after_tool_call]]` in config.toml.

Each hook runs `bash -c COMMAND` in the work dir with the call as JSON on stdin
(`{"event", "tool", "call_id", "args"}`, plus `"result"` and `"error"` after the call) and
AGENTICA_TOOL_NAME in its environment. A before-hook that exits non-zero blocks the call;
its output is the reason the model reads. An after-hook's failure is reported, never fatal.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentica_cli.child_env import command_environment

DEFAULT_TIMEOUT = 30.0
MAX_REASON_CHARS = 2000


class CommandHook:
    def __init__(self, command: str, *, tools: list[str] | None, timeout: float, work_dir: Path):
        self.command = command
        self.tools = set(tools or ())
        self.timeout = timeout
        self.work_dir = work_dir

    def applies_to(self, name: str) -> bool:
        return not self.tools or name in self.tools

    async def run(self, payload: dict[str, Any]) -> tuple[int, str]:
        """(exit code, output); a hook that times out counts as exit code 124."""
        env = command_environment(AGENTICA_TOOL_NAME=str(payload.get("tool", "")))
        from builtin_tools.watched_process import start_watched_process

        # watched: the hook's group dies with agentica, also when agentica is SIGKILLed
        proc = await start_watched_process([shutil.which("bash") or "/bin/sh", "-c", self.command],
                                           cwd=self.work_dir, env=env, stderr="stdout")
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        try:
            out, _ = await asyncio.wait_for(proc.communicate(data), self.timeout)
        except asyncio.TimeoutError:
            proc.kill_group()  # the hook and whatever it started
            await proc.wait()
            return 124, f"timed out after {self.timeout:g} s"
        except asyncio.CancelledError:
            proc.kill_group()
            await proc.wait()
            raise
        return proc.returncode or 0, out.decode("utf-8", errors="replace").strip()


class ConfigHooks:
    """The agent's `hooks=` object built from the config tables."""

    def __init__(
        self,
        before: list[CommandHook],
        after: list[CommandHook],
        report: Callable[[str], None] | None = None,
    ):
        self.before = before
        self.after = after
        self.report = report

    @classmethod
    def from_settings(cls, tables: dict[str, Any], work_dir: Path, report: Callable[[str], None] | None = None):
        def build(kind: str) -> list[CommandHook]:
            return [
                CommandHook(
                    t["command"], tools=t.get("tools"), timeout=t.get("timeout", DEFAULT_TIMEOUT), work_dir=work_dir
                )
                for t in tables.get(kind, [])
            ]

        return cls(build("before_tool_call"), build("after_tool_call"), report)

    def __bool__(self) -> bool:
        return bool(self.before or self.after)

    @staticmethod
    def _payload(event: str, call: Any) -> dict[str, Any]:
        return {"event": event, "tool": call.name, "call_id": call.call_id, "args": call.args}

    async def before_tool_call(self, call: Any) -> Any:
        for hook in self.before:
            if not hook.applies_to(call.name):
                continue
            code, output = await hook.run(self._payload("before_tool_call", call))
            if code != 0:
                reason = output[:MAX_REASON_CHARS] or f"exit code {code}"
                return f"Blocked by the hook `{hook.command}`: {reason}"
        return None

    async def after_tool_call(self, call: Any) -> None:
        for hook in self.after:
            if not hook.applies_to(call.name):
                continue
            payload = self._payload("after_tool_call", call) | {"result": call.result, "error": call.error}
            code, output = await hook.run(payload)
            if code != 0 and self.report is not None:
                self.report(f"hook `{hook.command}` after {call.name} exited {code}: {output[:300]}")
