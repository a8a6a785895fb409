"""The status line under the input: model, permission mode, context used, session tokens.

    scripted-model · mode: default (shift+tab) · context 12% · 3.2k tokens

Shift+Tab cycles the permission mode (default → accept-edits → plan → default; `auto` joins
the cycle only in a session started in auto mode) and the line follows at once.

`[ui] statusline = "command"` replaces it with the first line a shell command prints, as in
Claude Code: the command gets the session as JSON on its stdin (model, mode, work_dir,
session_id, usage, context_percent, ...), runs in the work folder with a short timeout, and
runs again at most once a second, or as soon as the mode, model or usage changes. It runs in
the background: the input never waits for it; until it answers, the last output stays.

Light imports only: the line is drawn with the first prompt.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from prompt_toolkit.formatted_text import FormattedText

from agentica_cli.app.safe_text import safe_text

MODE_CYCLE = ("default", "accept-edits", "plan")
COMMAND_TIMEOUT = 2.0  # seconds; a slow command leaves the previous line in place
REFRESH_EVERY = 1.0  # seconds between runs of the command while nothing changes
MAX_WIDTH = 300
DEFAULT_WINDOW = 128_000


def next_mode(current: str, *, with_auto: bool = False) -> str:
    """The mode after `current` in the Shift+Tab cycle."""
    cycle = (*MODE_CYCLE, "auto") if with_auto else MODE_CYCLE
    if current not in cycle:
        return cycle[0]
    return cycle[(cycle.index(current) + 1) % len(cycle)]


def short_count(n: int) -> str:
    """1234 -> 1.2k, 2500000 -> 2.5M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


class StatusLine:
    """The prompt's bottom toolbar for a running `Repl`: what its AppSession says (model, mode,
    stored session, usage, cost, context tokens, agent) and the REPL's work_dir and settings."""

    def __init__(self, repl: Any):
        self.repl = repl
        self.command = CommandStatus()

    # -- what the line says ---------------------------------------------------------------

    @property
    def app(self) -> Any:
        return self.repl.session()  # the toolbar is drawn by the main prompt, once the session is open

    def model_label(self) -> str:
        model = self.app.model
        return str(getattr(model, "id", None) or getattr(model, "name", None) or "no model")

    def context_window(self) -> int:
        agent = self.app.agent
        if agent is not None:
            return int(agent.context_window)
        return int(getattr(self.app.model, "context_window", None) or DEFAULT_WINDOW)

    def context_percent(self) -> float | None:
        """The last request's prompt tokens over the model's window; None before any request."""
        agent = self.app.agent
        tokens = self.app.context_tokens
        if agent is not None and not agent.messages:
            return 0.0  # a new conversation (/clear)
        if tokens is None and agent is not None:
            tokens = agent.context.estimate(agent.messages, "")  # after /compact or /resume
        if tokens is None:
            return None
        return 100.0 * tokens / max(1, self.context_window())

    def builtin_text(self) -> list[tuple[str, str]]:
        mode = self.app.policy.mode
        parts: list[tuple[str, str]] = [
            ("class:status", safe_text(self.model_label(), keep_newlines=False)),
            ("class:status", " · "),
            (f"class:status.mode.{mode}", f"mode: {mode}"),
            ("class:status", " (shift+tab) "),
        ]
        percent = self.context_percent()
        if percent is not None:
            parts.append(("class:status", f"· context {percent:.0f}% "))
        total = self.app.usage.get("total_tokens", 0)
        if total:
            parts.append(("class:status", f"· {short_count(total)} tokens"))
        cost = self.app.cost
        if cost.known:
            from agentica_cli.app.prices import format_dollars

            parts.append(("class:status", f" · {format_dollars(cost.dollars)}"))
        return parts

    def session_json(self) -> dict[str, Any]:
        """What a `statusline` command reads on stdin (Claude Code's names where they exist)."""
        from agentica_cli import __version__

        app = self.app
        session = app.stored
        work_dir = str(self.repl.work_dir)
        percent = self.context_percent()
        label = self.model_label()
        return {
            # None until its file exists (its first message): an id --resume cannot open yet is no use
            "session_id": session.id if session is not None and session.saved else None,
            "model": {"id": label, "display_name": label},
            "mode": app.policy.mode,
            "permission_mode": app.policy.mode,
            "work_dir": work_dir,
            "cwd": work_dir,
            "workspace": {"current_dir": work_dir, "project_dir": work_dir},
            "usage": dict(app.usage),
            "cost": {"total_cost_usd": app.cost.dollars if app.cost.known else None},
            "context_tokens": app.context_tokens,
            "context_window": self.context_window(),
            "context_percent": None if percent is None else round(percent, 1),
            "version": __version__,
        }

    # -- the toolbar ----------------------------------------------------------------------

    def __call__(self) -> FormattedText:
        """prompt_toolkit's `bottom_toolbar`: called at every redraw, so it never waits."""
        command = self.repl.settings.ui.statusline
        if not command:
            return FormattedText(self.builtin_text())
        app = self.app
        saved = app.stored is not None and app.stored.saved
        key = (app.policy.mode, self.model_label(), json.dumps(app.usage), app.context_tokens, app.id, saved)
        self.command.refresh(command, self.repl.work_dir, key, self.session_json)
        return FormattedText([("class:status", self.command.output)])

    def cycle_mode(self) -> str:
        """Shift+Tab: the next permission mode, at once."""
        app = self.app
        app.set_mode(next_mode(app.policy.mode, with_auto=self.repl.settings.permission_mode == "auto"))
        return str(app.policy.mode)


class CommandStatus:
    """The cached output of the user's statusline command, refreshed in the background."""

    def __init__(self) -> None:
        self.output = ""
        self.key: Any = None
        self.started = -REFRESH_EVERY
        self.task: asyncio.Task[None] | None = None

    def refresh(self, command: str, cwd: Any, key: Any, payload: Any) -> None:
        """Start a run when the key changed or the output is a second old, unless one runs."""
        if self.task is not None and not self.task.done():
            return
        now = time.monotonic()
        if key == self.key and now - self.started < REFRESH_EVERY:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.key, self.started = key, now
        self.task = loop.create_task(self._run(command, str(cwd), json.dumps(payload()).encode()))

    async def _run(self, command: str, cwd: str, stdin: bytes) -> None:
        try:
            from agentica_cli.child_env import command_environment
            from builtin_tools.watched_process import start_watched_process

            # a shell as create_subprocess_shell's; watched: it dies with agentica, SIGKILL included
            proc = await start_watched_process(["/bin/sh", "-c", command], cwd=cwd, env=command_environment(),
                                               stderr="devnull")
        except OSError as err:
            self._show(f"statusline: {err.strerror or err}")
            return
        try:
            out, _ = await asyncio.wait_for(proc.communicate(stdin), COMMAND_TIMEOUT)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            proc.kill_group()
            await proc.wait()
            self._show(self.output or f"statusline: no answer within {COMMAND_TIMEOUT:.0f}s")
            return
        lines = (out or b"").decode("utf-8", errors="replace").splitlines()
        first = lines[0] if lines else ""
        if not first.strip() and proc.returncode:
            first = f"statusline: exit code {proc.returncode}"
        self._show(safe_text(first, keep_newlines=False)[:MAX_WIDTH])

    def _show(self, text: str) -> None:
        self.output = text
        from prompt_toolkit.application.current import get_app_or_none

        app = get_app_or_none()
        if app is not None and app.is_running:
            app.invalidate()
