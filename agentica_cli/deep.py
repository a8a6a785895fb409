"""DeepAgent: an Agent with the builtin coding tools and a coding-agent system prompt."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentica_cli.agent.agent import Agent
from agentica_cli.models.base import Model

CODING_AGENT_PROMPT = """You are agentica, a coding agent working in the user's project through tools.

How to work:
- Understand before changing: find the relevant code with glob/grep, read it with read_file.
- Make focused changes with edit_file / multi_edit_file (read the file first); write_file for new files.
- Check your work: run the tests or the program with execute, and fix what fails.
- For multi-step work keep a todo list with write_todos and update it as you go.
- Use task to hand a self-contained sub-task (e.g. a wide search) to a sub-agent.
- Independent read-only calls (reads, greps) can be made together in one reply; they run in parallel.
- If a call is denied or blocked, do not try to get around it; say what you would have done.
- Be concise. When done, say briefly what you changed and how you checked it."""


class DeepAgent(Agent):
    """Agent(model, tools=builtin tools for `work_dir` + `tools`, instructions=coding prompt + `instructions`).

    `base_prompt` replaces the coding prompt (CODING_AGENT_PROMPT; `instructions`, the tools'
    notes and the context lines stay); `appended_prompt` is the system prompt's last section.
    """

    def __init__(
        self,
        model: Model,
        work_dir: str | os.PathLike[str] = ".",
        allowed_dirs: Iterable[str | os.PathLike[str]] = (),
        tools: Sequence[Any] | None = None,
        *,
        instructions: str | None = None,
        exclude_tools: Iterable[str] = (),
        builtin_options: dict[str, Any] | None = None,
        base_prompt: str | None = None,
        appended_prompt: str | None = None,
        **agent_kwargs: Any,
    ):
        from agentica_cli.agent.config import ToolConfig
        from agentica_cli.agent.result_budget import results_dir_for
        from builtin_tools import get_builtin_tools  # the tool set is heavy; only DeepAgent needs it

        self.work_dir = Path(work_dir).expanduser().resolve()
        self.allowed_dirs = tuple(Path(p).expanduser().resolve() for p in allowed_dirs)
        config = agent_kwargs.setdefault("tool_config", None) or ToolConfig()
        agent_kwargs["tool_config"] = config
        # read_file must reach the folder oversized results are saved in, to page through them.
        results = results_dir_for(config.result_dir) if config.max_result_tokens else None
        if results is not None and not config.result_dir:
            config.result_dir = str(results)  # shared with sub-agents (same config), whose read_file reaches it too
        readable = (*self.allowed_dirs, results) if results is not None else self.allowed_dirs
        builtins = get_builtin_tools(self.work_dir, allowed_dirs=readable, exclude=tuple(exclude_tools),
                                     **(builtin_options or {}))
        base = CODING_AGENT_PROMPT if base_prompt is None else base_prompt.strip()
        prompt = "\n\n".join(part.strip() for part in (base, instructions or "") if part and part.strip())
        super().__init__(model, tools=[*builtins, *(tools or ())], instructions=prompt or None, **agent_kwargs)
        self.appended_prompt = appended_prompt.strip() if appended_prompt and appended_prompt.strip() else None
        if results is not None:
            self.results_dir = results

    def system_prompt(self) -> str:
        prompt = super().system_prompt()
        if self.appended_prompt is None:
            return prompt
        return f"{prompt}\n\n{self.appended_prompt}" if prompt else self.appended_prompt

    def dynamic_guidance(self) -> list[str]:
        lines = [
            f"Working directory: {self.work_dir} (relative paths resolve against it).",
            f"Platform: {platform.system()} {platform.release()}; today is {time.strftime('%Y-%m-%d')}.",
        ]
        if self.allowed_dirs:
            lines.append("Other folders you may use: " + ", ".join(str(p) for p in self.allowed_dirs) + ".")
        if (self.work_dir / ".git").exists():
            lines.append("The working directory is a git repository.")
        return lines + super().dynamic_guidance()
