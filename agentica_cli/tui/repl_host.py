"""ReplHost: what the slash, checkpoint, extension and /init commands use of the running REPL.

The commands are handed the Repl object; typing them against this Protocol (not the Repl class)
keeps them from importing `repl.py`, which imports them (not even for type hints: the layout
test counts TYPE_CHECKING imports in its circle check).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentica_cli.app.settings.config import Settings

if TYPE_CHECKING:
    import argparse
    import asyncio

    from agentica_cli.app.instructions import Instructions
    from agentica_cli.app.permissions.approvals import Answer, Question
    from agentica_cli.app.session import AppSession


class ReplHost(Protocol):
    args: argparse.Namespace  # the command line the REPL was started with
    settings: Settings
    work_dir: Path
    allowed_dirs: list[Path]
    # The conversation: policy, stored session, MCP servers, agent, checkpoints, usage and cost
    # (app/session.py); None only before the trust question and onboarding, when no command runs.
    app: AppSession | None
    console: Any
    renderer: Any
    pending_context: list[str]
    next_default: str
    approval_lock: asyncio.Lock  # one question at a time: tool approvals, MCP forms and sampling
    checkpoint_commands: Any  # checkpoint_commands.CheckpointCommands
    extensions: Any  # extensions.Extensions
    on_interrupt: Any  # what Esc/Ctrl-C does now (a task's cancel), or None
    instructions: Instructions | None  # AGENTS.md, CLAUDE.md...; None until read (after the trust question)

    def session(self) -> AppSession: ...

    def mcp_servers(self) -> Any: ...

    async def ask_line(self, message: str, *, password: bool = False) -> str: ...

    async def ask_yes_no(self, question: str, *, default: bool) -> bool: ...

    async def ask_approval(self, call: Any, question: Question) -> Answer: ...

    def show_grant(self, granted: str, mode_changed: bool) -> None: ...

    def terminal_for_question(self) -> Any: ...

    async def ensure_agent(self) -> Any: ...

    async def run_turn(self, text: str, images: list[Any] | None = None) -> None: ...

    def ensure_renderer(self) -> None: ...

    def expand_last_output(self) -> None: ...

    def show_transcript(self, messages: list[dict[str, Any]]) -> None: ...

    def start_mcp(self) -> None: ...

    def enabled_mcp_servers(self) -> dict[str, Any]: ...

    def take_restore_note(self) -> None: ...
