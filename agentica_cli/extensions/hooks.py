"""Command hooks with Claude Code's contract: a shell command per event, the event as JSON on stdin
(and the "prompt", "agent" and "http" kinds of hook: extensions/prompt_hooks.py,
extensions/agent_hooks.py, extensions/http_hooks.py).

Exit code 0: go on; stdout is context for the model on SessionStart and UserPromptSubmit, or
JSON output (`decision`, `hookSpecificOutput.permissionDecision`, `updatedInput`,
`additionalContext`, `continue`, `stopReason`, `systemMessage`). Exit code 2: block (stderr is
the reason the model reads). Any other code, or a timeout (the hook's process group is
killed): an error shown to the user, and the run goes on. Configuration: hook_config.py.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentica_cli.agent.hooks import HookOutcome, outcome_from_output
from agentica_cli.child_env import command_environment
from agentica_cli.extensions.hook_config import HookSpec
from agentica_cli.extensions.tool_names import claude

MAX_OUTPUT = 10_000
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")
BLOCKING_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "UserPromptSubmit",
                   "Stop", "SubagentStop")  # where exit code 2 blocks (else it is a message)
CLAUDE_MODES = {"accept-edits": "acceptEdits", "auto": "bypassPermissions"}  # default and plan are the same


class CommandHooks:
    """An Agent hook object (`hook_event`) running the command hooks that match each event, and
    the "prompt" and "agent" hooks (extensions/prompt_hooks.py, agent_hooks.py), which ask
    `model`: a model, or a function that returns the one to ask now (the CLI's: the session's
    current model; None: an agent hook asks the model of the agent whose event it is).
    `rule_matches(rule, tool_name, tool_input)`: whether a call matches an entry's `if` (a
    permission-rule pattern); without it a hook with an `if` runs for no call (fail closed
    would be wrong both ways; not running is what a condition nobody can check means)."""

    def __init__(self, specs: list[HookSpec], work_dir: Path, model: Any = None,
                 rule_matches: Callable[[str, str, dict[str, Any]], bool] | None = None):
        self.specs = specs
        self.work_dir = work_dir
        self.model = model
        self.rule_matches = rule_matches
        self.background: set[asyncio.Task[Any]] = set()  # `async` hooks still running

    def current_model(self) -> Any:
        model = self.model
        return model() if callable(model) and not hasattr(model, "response") else model

    def __bool__(self) -> bool:
        return bool(self.specs)

    def matching(self, event: str, payload: dict[str, Any]) -> list[HookSpec]:
        if event in TOOL_EVENTS:
            name = str(payload.get("tool_name", ""))
            return [s for s in self.specs if s.event == event and s.matches(name, claude(name))
                    and self._condition_holds(s, name, payload.get("tool_input"))]
        if event in ("SubagentStart", "SubagentStop"):
            target = payload.get("agent_type")
        else:
            target = payload.get("source") if event == "SessionStart" else payload.get("trigger")
        return [s for s in self.specs if s.event == event and s.matches(target)]

    def _condition_holds(self, spec: HookSpec, tool: str, tool_input: Any) -> bool:
        if not spec.condition:
            return True
        if self.rule_matches is None:
            return False
        try:
            return self.rule_matches(spec.condition, tool, tool_input if isinstance(tool_input, dict) else {})
        except ValueError:  # a condition that is no rule (RuleError): it matches nothing
            return False

    async def hook_event(self, event: str, payload: dict[str, Any]) -> HookOutcome | None:
        specs = self.matching(event, payload)
        if not specs:
            return None
        if event in TOOL_EVENTS:  # what a Claude Code script expects: its tool names
            name = str(payload["tool_name"])
            payload = {**payload, "tool_name": claude(name), "agentica_tool_name": name}
        mode = payload.get("permission_mode")
        if mode in CLAUDE_MODES:  # and its permission mode names
            payload = {**payload, "permission_mode": CLAUDE_MODES[mode], "agentica_permission_mode": mode}
        for spec in [s for s in specs if s.background]:  # `async`: the call does not wait for it
            task = asyncio.create_task(self.run(spec, payload))
            self.background.add(task)
            task.add_done_callback(self.background.discard)
        outcomes = await asyncio.gather(*(self.run(spec, payload) for spec in specs if not spec.background))
        merged = HookOutcome()
        for outcome in outcomes:
            merged.merge(outcome)
        return merged

    async def run(self, spec: HookSpec, payload: dict[str, Any]) -> HookOutcome:
        if spec.kind == "prompt":
            from agentica_cli.extensions.prompt_hooks import evaluate

            return await evaluate(spec, payload, self.current_model())
        if spec.kind == "agent":
            from agentica_cli.extensions.agent_hooks import evaluate as run_hook_agent

            return await run_hook_agent(spec, payload, self.current_model(), self.work_dir)
        if spec.kind == "http":
            from agentica_cli.extensions.http_hooks import post

            return await post(spec, payload)
        code, out, err = await self._execute(spec, payload)
        shown = spec.shown
        if code is None:
            return HookOutcome(messages=[f"{shown} timed out after {spec.timeout:g} s and was stopped"])
        if code == 2:
            reason = err.strip() or f"blocked by the {spec.event} hook `{spec.command}`"
            if spec.event in BLOCKING_EVENTS:
                return HookOutcome(block=True, reason=reason)
            return HookOutcome(messages=[f"{shown}: {reason}"])
        if code != 0:
            detail = (err.strip() or out.strip())[:300]
            return HookOutcome(messages=[f"{shown} failed (exit code {code})" + (f": {detail}" if detail else "")])
        return outcome_from_output(spec.event, out)

    async def _execute(self, spec: HookSpec, payload: dict[str, Any]) -> tuple[int | None, str, str]:
        """(exit code or None on timeout, stdout, stderr); the process group is killed on timeout."""
        project = str(self.work_dir)
        env = command_environment(CLAUDE_PROJECT_DIR=project, AGENTICA_PROJECT_DIR=project,
                                  AGENTICA_HOOK_EVENT=spec.event)
        from builtin_tools.watched_process import start_watched_process

        # watched: the hook's group dies with agentica, also when agentica is SIGKILLed
        proc = await start_watched_process([shutil.which("bash") or "/bin/sh", "-c", spec.command],
                                           cwd=self.work_dir, env=env)
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        try:
            out, err = await asyncio.wait_for(proc.communicate(data), spec.timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
            proc.kill_group()  # the hook and whatever it started (a `sleep` in a script)
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            return None, "", ""
        assert out is not None and err is not None  # stdout and stderr are pipes (start_watched_process's default)
        return (proc.returncode or 0, out.decode("utf-8", "replace")[:MAX_OUTPUT],
                err.decode("utf-8", "replace")[:MAX_OUTPUT])
