"""/init: the model explores the repository and proposes AGENTS.md; written after approval."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agentica_cli.extensions.agents_md import FILE_NAME, INIT_SYSTEM, document_from_answer, file_diff, init_prompt
from agentica_cli.extensions.places import UnreadableFile, read_text
from agentica_cli.tui.terminal import plain

if TYPE_CHECKING:
    from agentica_cli.tui.repl_host import ReplHost

EXCLUDED = ("task", "web_search", "fetch_url", "write_todos")


def explorer_tools(repl: ReplHost) -> list[Any]:
    """Fresh builtin tools for the work dir, read-only functions only."""
    from builtin_tools import get_builtin_tools

    tools = get_builtin_tools(repl.work_dir, allowed_dirs=repl.allowed_dirs, exclude=EXCLUDED)
    for tool in tools:
        for name, function in list(tool.functions.items()):
            if not function.is_read_only:
                del tool.functions[name]
    return [t for t in tools if t.functions]


async def run_init(repl: ReplHost) -> None:
    main_agent = await repl.ensure_agent()
    repl.ensure_renderer()
    path = repl.work_dir / FILE_NAME
    try:
        current: str | None = read_text(path, repl.work_dir) if path.exists() else None
    except UnreadableFile as why:
        plain(f"{FILE_NAME} cannot be read ({why}); /init leaves it alone.", "33")
        return
    from agentica_cli.agent import Agent
    from agentica_cli.agent.events import TurnFinished

    app = repl.session()
    explorer = Agent(app.model, tools=explorer_tools(repl), instructions=INIT_SYSTEM, approve=app.policy,
                     tool_config=main_agent.tool_config, name="init")
    answer: list[str] = []

    async def consume() -> None:
        async for event in explorer.run_stream(init_prompt(current)):
            if isinstance(event, TurnFinished) and not event.source:
                answer.append(event.content)
            repl.renderer.handle(event)

    plain(f"Exploring the repository to {'improve' if current is not None else 'write'} {FILE_NAME}…", "2")
    task = asyncio.create_task(consume())
    repl.on_interrupt = task.cancel
    try:
        await task
    except asyncio.CancelledError:
        repl.renderer.cancel()
        plain("(interrupted; AGENTS.md unchanged)", "33")
        return
    finally:
        repl.on_interrupt = None
        repl.renderer.finish()
    document = document_from_answer(answer[-1] if answer else "")
    if document is None:
        plain(f"The model gave no {FILE_NAME} content; nothing written.", "33")
        return
    diff = file_diff(current, document)
    if not diff:
        plain(f"{FILE_NAME} is already up to date.", "2")
        return
    for line in diff:
        code = "32" if line.startswith("+") and not line.startswith("+++") else \
            "31" if line.startswith("-") and not line.startswith("---") else "2"
        plain(line, code)
    try:  # one key, as an approval
        write = await repl.ask_yes_no(f"Write {FILE_NAME}? [y/N] ", default=False)
    except (KeyboardInterrupt, EOFError):
        write = False
    if not write:
        plain(f"{FILE_NAME} not written.", "2")
        return
    from builtin_tools.atomic_write import atomic_write_bytes

    atomic_write_bytes(path, document.encode("utf-8"))
    plain(f"Wrote {FILE_NAME} ({len(document.splitlines())} lines). It is read at the next session start.", "32")
