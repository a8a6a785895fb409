"""The builtin tools other than `task`, for a folder: what get_builtin_tools starts from and what
task's sub-agents get fresh. Its own module so task.py need not import the package that imports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentica_cli.tools.local.execute import BuiltinExecuteTool
from builtin_tools.files import BuiltinFileTool
from builtin_tools.todos import BuiltinTodoTool
from builtin_tools.web import BuiltinFetchUrlTool, BuiltinWebSearchTool, SearchProvider

if TYPE_CHECKING:
    from agentica_cli.tools.base import Tool


def core_tools(
    work_dir: str,
    *,
    allowed_dirs: tuple[str, ...] = (),
    search_provider: SearchProvider | None = None,
    allow_private_urls: bool | Iterable[str] = False,
    scrub_secrets: bool = True,
    keep_env: Iterable[str] = (),
    sandbox: Any = None,
) -> list[Tool]:
    """Files, execute, todos, web search and fetch for `work_dir` (already a real path)."""
    return [
        BuiltinFileTool(work_dir, allowed_dirs=allowed_dirs),
        BuiltinExecuteTool(work_dir, scrub_secrets=scrub_secrets, keep_env=keep_env, sandbox=sandbox),
        BuiltinTodoTool(),
        BuiltinWebSearchTool(search_provider),
        BuiltinFetchUrlTool(allow_private=allow_private_urls),
    ]


def real_dir(path: str | os.PathLike[str]) -> str:
    """The real absolute path of a folder argument (`~` expanded, relative to the cwd)."""
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def select_tools(tools: list[Tool], exclude: set[str]) -> list[Tool]:
    """Drop whole tools (by Tool.name) and single functions (by function name)."""
    kept = []
    for tool in tools:
        if tool.name in exclude:
            continue
        for name in [n for n in tool.functions if n in exclude]:
            del tool.functions[name]
        if tool.functions:
            kept.append(tool)
    return kept
