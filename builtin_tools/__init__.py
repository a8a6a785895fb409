"""Ready-made tools for a coding agent: files, glob/grep, execute, todos, task, web.

    from builtin_tools import get_builtin_tools
    agent = Agent(model, tools=get_builtin_tools("./my-project"))
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentica_cli.tools.local.execute import BuiltinExecuteTool
from builtin_tools.files import BuiltinFileTool
from builtin_tools.todos import BuiltinTodoTool
from builtin_tools.toolset import core_tools, real_dir, select_tools
from builtin_tools.web import BuiltinFetchUrlTool, BuiltinWebSearchTool, SearchProvider

if TYPE_CHECKING:
    from agentica_cli.tools.base import Tool
    from builtin_tools.task import BuiltinTaskTool

__all__ = [
    "BuiltinExecuteTool",
    "BuiltinFetchUrlTool",
    "BuiltinFileTool",
    "BuiltinTaskTool",
    "BuiltinTodoTool",
    "BuiltinWebSearchTool",
    "get_builtin_tools",
    "real_dir",
    "select_tools",
]


def __getattr__(name: str) -> Any:
    # task.py reaches into the agent loop; import it only when asked for.
    if name == "BuiltinTaskTool":
        from builtin_tools.task import BuiltinTaskTool

        return BuiltinTaskTool
    raise AttributeError(f"module 'builtin_tools' has no attribute {name!r}")


def get_builtin_tools(
    work_dir: str | os.PathLike[str] = ".",
    *,
    allowed_dirs: Iterable[str | os.PathLike[str]] = (),
    exclude: Iterable[str] = (),
    search_provider: SearchProvider | None = None,
    allow_private_urls: bool | Iterable[str] = False,
    scrub_secrets: bool = True,
    keep_env: Iterable[str] = (),
    task_read_only: bool = False,
    sandbox: Any = None,
) -> list[Tool]:
    """The builtin tool set for `work_dir`.

    `exclude` drops tools or single functions by name, e.g. ("task", "web_search", "execute").
    `allowed_dirs` are extra roots the file tools may touch besides work_dir.
    A relative `work_dir` or `allowed_dirs` entry is relative to the process's current
    directory (like the CLI's -C and --add-dir, and DeepAgent), not to work_dir; `~` is
    expanded. `sandbox` (an agentica_cli.sandbox.Sandbox) confines execute's commands, also
    in task's sub-agents. Both folders are resolved once, here, so every tool and every sub-agent of `task`
    gets the same real folders even if the process changes directory later.
    """
    excluded = set(exclude)
    work_dir = real_dir(work_dir)
    allowed = tuple(real_dir(extra) for extra in allowed_dirs)
    options: dict[str, Any] = {
        "search_provider": search_provider,
        "allow_private_urls": allow_private_urls,
        "scrub_secrets": scrub_secrets,
        "keep_env": tuple(keep_env),
        "sandbox": sandbox,
    }
    tools = core_tools(work_dir, allowed_dirs=allowed, **options)
    if "task" not in excluded:
        from builtin_tools.task import BuiltinTaskTool

        tools.append(BuiltinTaskTool(work_dir, allowed_dirs=allowed, read_only=task_read_only, tool_options=options))
    return select_tools(tools, excluded)
