"""ReplHost: what the slash, checkpoint, extension and /init commands use of the running REPL.

The commands are handed the Repl object; typing them against this Protocol (not the Repl class)
keeps them from importing `repl.py`, which imports them (not even for type hints: the layout
test counts TYPE_CHECKING imports in its circle check).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentica_cli.app.settings.config import Settings
from agentica_cli.app.usage import UsageCounter

if TYPE_CHECKING:
    import argparse
    import asyncio

    from agentica_cli.app.instructions import Instructions


class ReplHost(Protocol):
    args: argparse.Namespace  # the command line the REPL was started with
    settings: Settings
    work_dir: Path
    allowed_dirs: list[Path]
    store: Any  # sessions.SessionStore
    session: Any  # sessions.Session, or None before the first message
    resume_messages: list[dict[str, Any]] | None
    model: Any
    agent: Any
    console: Any
    renderer: Any
    policy: Any  # approvals.ApprovalPolicy
    usage: UsageCounter  # app/usage.py: a dict of token counts that also counts and stores
    cost: Any  # app.prices.CostMeter
    context_tokens: int | None
    pending_context: list[str]
    next_default: str
    mcp: Any
    mcp_error: str | None
    checkpoint_commands: Any  # checkpoint_commands.CheckpointCommands
    extensions: Any  # extensions.Extensions
    on_interrupt: Any  # what Esc/Ctrl-C does now (a task's cancel), or None
    instructions: Instructions | None  # AGENTS.md, CLAUDE.md...; None until read (after the trust question)
    session_start: asyncio.Task[None] | None  # the SessionStart hooks while they run (tui/session_hooks.py)

    async def ask_line(self, message: str, *, password: bool = False) -> str: ...

    async def ask_yes_no(self, question: str, *, default: bool) -> bool: ...

    async def ensure_agent(self) -> Any: ...

    async def run_turn(self, text: str, images: list[Any] | None = None) -> None: ...

    def ensure_renderer(self) -> None: ...

    def expand_last_output(self) -> None: ...

    def show_transcript(self, messages: list[dict[str, Any]]) -> None: ...

    def start_mcp(self) -> None: ...

    def enabled_mcp_servers(self) -> dict[str, Any]: ...

    def sync_mcp_tools(self) -> None: ...

    def active_checkpoints(self) -> Any: ...

    def current_session(self) -> Any: ...

    def take_restore_note(self) -> None: ...

    def count_session_usage(self) -> None: ...
