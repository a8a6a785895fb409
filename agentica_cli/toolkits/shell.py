"""ShellTool: shell commands for library agents, on the same engine as the builtin `execute`
(process group killed on timeout, output capped head and tail, secrets scrubbed from the
environment, the OS sandbox when one is given)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Optional

from agentica_cli.tools.context import ToolContext
from agentica_cli.tools.local.execute import MAX_OUTPUT_CHARS, MAX_TIMEOUT_S, BuiltinExecuteTool


class ShellTool(BuiltinExecuteTool):
    """`run_shell_command(command)` in `work_dir`, killed after `timeout` seconds.

    Destructive (an approve hook is asked before each command). `sandbox`: an
    agentica_cli.sandbox.Sandbox to confine the commands, e.g.
    `Sandbox(SandboxPolicy.build("workspace-write", work_dir))`; None runs them with the
    user's rights.
    """

    def __init__(
        self,
        timeout: int = 30,
        work_dir: str | os.PathLike[str] = ".",
        *,
        sandbox: Any = None,
        scrub_secrets: bool = True,
        keep_env: Iterable[str] = (),
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ):
        if not 1 <= timeout <= MAX_TIMEOUT_S:
            raise ValueError(f"timeout must be 1..{MAX_TIMEOUT_S} seconds, got {timeout}")
        super().__init__(work_dir, scrub_secrets=scrub_secrets, keep_env=keep_env,
                         max_output_chars=max_output_chars, sandbox=sandbox)
        self.name = "shell"
        self.timeout = timeout
        self.functions.clear()  # not execute's background and sandbox-escape options: one plain function
        self.register(self.run_shell_command, is_destructive=True)

    def get_system_prompt(self) -> str:
        return (f"run_shell_command runs one bash command in {self.work_dir} without a terminal (stdin is empty); "
                f"it is killed after {self.timeout} s.") + self._sandbox_prompt().replace(
                    "call execute with sandbox=false and a reason; the user is asked", "say so to the user")

    async def run_shell_command(self, command: str, timeout: Optional[int] = None,
                                ctx: ToolContext = None) -> str:  # type: ignore[assignment]
        """Run a bash command and return its exit code, stdout and stderr.

        Args:
            command: The bash command line.
            timeout: Seconds before it is killed (default: the tool's timeout, at most that).
        """
        seconds = self.timeout if timeout is None else max(1, min(int(timeout), self.timeout))
        return await self.execute(command, timeout=seconds, ctx=ctx)
