"""BuiltinExecuteTool: run a shell command in work_dir, bounded in time, output and secrets."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext
from agentica_cli.tools.local.background import background_processes
from agentica_cli.tools.local.output_capture import LiveOutput, OutputCapture
from agentica_cli.tools.local.process_group import Starter, run_in_group
from agentica_cli.tools.secret_names import SECRET_NAME_PARTS, is_secret_name  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from agentica_cli.sandbox import Sandbox

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600
MAX_OUTPUT_CHARS = 30_000
TIMEOUT_EXIT_CODE = 124
# A server started in the sandbox without network is out of everyone's reach (bwrap gives it a
# network of its own, Landlock refuses its bind): the model must not take silence for a bug.
NO_NETWORK_SERVER_NOTE = ("Note: it runs in the sandbox without network: nothing can connect to a server it "
                          "starts. A server that must be reached needs network=true (asked, with a reason).")


def scrubbed_environment(
    base: Mapping[str, str], *, keep: Iterable[str] = (), secret_values: Iterable[str] = ()
) -> dict[str, str]:
    """`base` without secret-looking variables (by name) and without any variable whose
    value is a known secret (e.g. the model's API key under an innocent name)."""
    keep_names = set(keep)
    secrets = {value for value in secret_values if value}
    return {
        name: value
        for name, value in base.items()
        if name in keep_names or (not is_secret_name(name) and value not in secrets)
    }


def _model_secrets(ctx: ToolContext | None) -> tuple[list[str], list[str]]:
    """(names, values) to drop for the running model: its key's variable and the key itself."""
    model = getattr(getattr(ctx, "agent", None), "model", None)
    if model is None:
        return [], []
    key = getattr(model, "api_key", None)
    if not key and callable(getattr(model, "resolve_api_key", None)):
        try:
            key = model.resolve_api_key()
        except Exception:  # no key configured: nothing to hide
            key = None
    env_name = getattr(model, "api_key_env", None)
    names = [env_name] if isinstance(env_name, str) and env_name else []
    return names, [key] if isinstance(key, str) and key else []


def _live_output(ctx: ToolContext | None) -> LiveOutput | None:
    """The command's output as ToolOutput events while it runs, when an agent runs the call
    (a UI shows its last lines live)."""
    emit = ctx.emit if ctx is not None else None
    if emit is None or ctx is None:
        return None
    # The one event type this tool emits; the agent package is loaded whenever `emit` is set.
    from agentica_cli.tools.events import ToolOutput

    call_id = ctx.call_id
    return LiveOutput(lambda text: emit(ToolOutput(call_id, text)))


class BuiltinExecuteTool(Tool):
    """Runs bash commands in `work_dir`; the CLI asks before each one (is_destructive)."""

    def __init__(
        self,
        work_dir: str | os.PathLike[str] = ".",
        *,
        scrub_secrets: bool = True,
        keep_env: Iterable[str] = (),
        extra_env: Mapping[str, str] | None = None,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        sandbox: Sandbox | None = None,
    ):
        super().__init__(name="execute")
        # Confines every command (agentica_cli.sandbox); None: commands run with the user's rights.
        self.sandbox = sandbox
        self.work_dir = Path(os.path.realpath(os.path.expanduser(os.fspath(work_dir))))
        self.scrub_secrets = scrub_secrets
        self.keep_env = tuple(keep_env)
        self.extra_env = dict(extra_env or {})
        self.max_output_chars = max_output_chars
        self.shell = shutil.which("bash") or "/bin/bash"
        # Runs foreground commands somewhere else (an editor's terminal, for `agentica acp`):
        # `await runner.run(argv, cwd=, env=, timeout=, ctx=)` -> a CommandOutcome, or None to
        # run it here. It gets the argv already wrapped by the sandbox.
        self.runner: Any = None
        self.register(self.execute, is_destructive=True)
        # Process-wide: /ps and the session's end see every background process, sub-agents' too.
        self.background = background_processes()
        self.register(self.background.read_background_output, is_read_only=True, concurrency_safe=True)
        self.register(self.background.stop_background)

    def get_system_prompt(self) -> str:
        return (
            "execute runs one bash command per call in the working directory, non-interactively "
            "(stdin is empty): pass flags like -y, avoid pagers and editors. Use it for builds, "
            "tests, git and scripts; use the file tools to read, search and edit files."
        ) + self._sandbox_prompt()

    def _sandbox_prompt(self) -> str:
        if self.sandbox is None or not self.sandbox.confines:
            return ""
        return (f" Commands run in a {self.sandbox.policy.mode} sandbox: writes only in the working folders and "
                "$TMPDIR, no access to the user's credentials" + ("" if self.sandbox.policy.network else
                ", no network") + "." + ("" if self.sandbox.policy.network else " If a command needs the network "
                "(a download, a server to reach), call execute with network=true and a reason: it stays sandboxed "
                "for files.") + " If a command truly needs to write elsewhere, call execute with sandbox=false and "
                "a reason. The user is asked either way.")

    def confined(self, sandbox: bool = True) -> bool:
        """Whether a command run with this `sandbox` argument runs confined."""
        return sandbox and self.sandbox is not None and self.sandbox.confines

    def command_argv(self, command: str, *, sandbox: bool = True, network: bool = False) -> list[str]:
        """The argv that runs `command`: bash, wrapped by the sandbox unless escalated."""
        argv = [self.shell, "-c", command]
        if self.confined(sandbox) and self.sandbox is not None:
            return self.sandbox.wrap(argv, self.work_dir, network=network)
        return argv

    def command_launch(self, command: str, *, sandbox: bool = True,
                       network: bool = False) -> tuple[list[str], Starter | None]:
        """(argv, start hook) for `command`: what command_argv gives, except that Landlock
        starts bash itself from a confined thread instead of through a launcher process."""
        argv = [self.shell, "-c", command]
        if not (self.confined(sandbox) and self.sandbox is not None):
            return argv, None
        launch = self.sandbox.prepare(argv, self.work_dir, network=network)
        return launch.argv, launch.spawn

    def environment(self, ctx: ToolContext | None = None) -> dict[str, str]:
        env = dict(os.environ)
        if self.scrub_secrets:
            names, values = _model_secrets(ctx)
            env = scrubbed_environment(env, keep=self.keep_env, secret_values=values)
            for name in names:
                if name not in self.keep_env:
                    env.pop(name, None)
        env.update(self.extra_env)
        return env

    def command_environment(self, ctx: ToolContext | None = None, *, sandbox: bool = True) -> dict[str, str]:
        """environment(), with the sandbox's private TMPDIR when the command runs confined."""
        env = self.environment(ctx)
        return self.sandbox.environment(env) if self.confined(sandbox) and self.sandbox else env

    async def execute(self, command: str, timeout: int = DEFAULT_TIMEOUT_S, background: bool = False,
                      sandbox: bool = True, network: bool = False, reason: str = "",
                      ctx: ToolContext = None) -> str:  # type: ignore[assignment]
        """Run a bash command in the working directory and return its exit code, stdout and stderr.

        stdin is empty, so nothing can prompt. On timeout the command and all its child
        processes are killed (exit code 124). Output over 30,000 chars keeps its head and
        tail. For servers and watchers use background=true, not `&`.

        Args:
            command: The bash command line.
            timeout: Seconds before the command is killed (default 120, max 600).
            background: Start a long-running command and return at once with an id (no timeout).
            sandbox: Leave true. false runs this one command outside the OS sandbox; the user is always asked.
            network: Leave false. true gives this one command the network, still sandboxed for files; the user is asked.
            reason: With sandbox=false or network=true: why the command needs it (shown to the user).
        """
        if not command.strip():
            raise ValueError("command is empty.")
        argv, start = self.command_launch(command, sandbox=sandbox, network=network)
        if background:  # started like any command (same argv, environment, group), but not awaited
            offline = (self.confined(sandbox) and self.sandbox is not None and self.sandbox.network_confined
                       and not network)
            return await asyncio.to_thread(
                self.background.start_and_describe, argv, command=command, cwd=str(self.work_dir),
                env=self.command_environment(ctx, sandbox=sandbox), note=NO_NETWORK_SERVER_NOTE if offline else "",
                start=start,
            )
        seconds = max(1, min(int(timeout), MAX_TIMEOUT_S))
        started = time.monotonic()
        live = _live_output(ctx)
        env = self.command_environment(ctx, sandbox=sandbox)
        try:
            outcome = None
            if self.runner is not None:  # it takes an argv only: Landlock's launcher form
                wrapped = self.command_argv(command, sandbox=sandbox, network=network)
                outcome = await self.runner.run(wrapped, cwd=str(self.work_dir), env=env, timeout=seconds, ctx=ctx)
            if outcome is None:
                outcome = await run_in_group(argv, cwd=str(self.work_dir), env=env, timeout=seconds,
                                             on_output=live.feed if live is not None else None, start=start)
        finally:
            if live is not None:
                live.close()
        elapsed = time.monotonic() - started
        code = outcome.returncode if outcome.returncode is not None else -1
        if outcome.timed_out:
            status = (f"exit code {TIMEOUT_EXIT_CODE}: timed out after {seconds} s; the command and "
                      "its child processes were killed")
        elif code < 0:
            status = f"exit code {128 - code}: killed by signal {-code}"
        else:
            status = f"exit code {code}"
        if int(timeout) > MAX_TIMEOUT_S:
            status += f"; timeout capped at {MAX_TIMEOUT_S} s"
        parts = [f"[{status}; {elapsed:.1f} s]"]
        parts += self._render_streams(outcome.stdout, outcome.stderr)
        if self.confined(sandbox) and self.sandbox is not None and not outcome.timed_out:
            note = self.sandbox.denial_note("\n".join(parts[1:]), code, network=network)
            if note:
                parts.append(note)
        if outcome.pipes_left_open:
            parts.append("[background processes still held the output when the command ended; "
                         "redirect their output to a file (cmd > log 2>&1 &)]")
        return "\n".join(parts)

    def _render_streams(self, stdout: OutputCapture, stderr: OutputCapture) -> list[str]:
        if not stdout.total_bytes and not stderr.total_bytes:
            return ["(no output)"]
        limit = self.max_output_chars
        # stderr usually explains a failure: it keeps at least a third of the budget.
        err_budget = min(stderr.total_bytes, max(limit - stdout.total_bytes, limit // 3))
        out_budget = max(limit - err_budget, limit // 3)
        parts = []
        if stdout.total_bytes:
            parts += ["--- stdout ---", stdout.render(out_budget).rstrip("\n")]
        if stderr.total_bytes:
            parts += ["--- stderr ---", stderr.render(max(err_budget, 1000)).rstrip("\n")]
        return parts
