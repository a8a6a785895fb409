"""Who may run a destructive tool call: the permission mode, and the terminal question.

Modes:
  default       ask before any destructive call
  accept-edits  file edits inside the work dir (and --add-dir folders) run; the rest asks
  auto          never ask (--yes)
  plan          read-only: destructive calls are refused, the model presents a plan

`PermissionPolicy` is the agent's `approve` hook. It asks through `ask` when one is given
(the REPL's terminal prompt); without it (a -p run, a pipe, CI) a call that needs asking is
refused at once, the model is told why, and `on_refusal` reports the flag that allows it.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a call is decided: agentica_cli.agent is too heavy for the REPL's first paint
    from agentica_cli.agent.approval import Decision

EDIT_TOOLS = frozenset({"write_file", "edit_file", "multi_edit", "multi_edit_file", "create_file", "str_replace"})
PATH_KEYS = ("file_path", "path", "filename", "file")
COMMAND_KEYS = ("command", "cmd")


@dataclass(frozen=True)
class Answer:
    choice: str  # "once", "always" or "no"
    message: str = ""


AskUser = Callable[[Any], "Answer | Awaitable[Answer]"]


def call_args(call: Any) -> dict[str, Any]:
    args = getattr(call, "args", None)
    if isinstance(args, dict):
        return args
    raw = getattr(call, "arguments", None)
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        import json

        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def edit_path(name: str, args: dict[str, Any]) -> str | None:
    if name not in EDIT_TOOLS:
        return None
    for key in PATH_KEYS:
        if isinstance(args.get(key), str):
            return args[key]
    return None


def resolve_edit_path(path: str, work_dir: Path) -> Path:
    """Where an edit lands, resolved the way the file tools do (`~` expanded, relative to the work dir)."""
    expanded = os.path.expanduser(path)
    return Path(expanded) if os.path.isabs(expanded) else work_dir / expanded


def is_inside(path: Path, folders: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(real == f or f in real.parents for f in folders)


class PermissionPolicy:
    def __init__(
        self,
        mode: str,
        work_dir: Path,
        *,
        allowed_dirs: tuple[Path, ...] | list[Path] = (),
        always_allow: tuple[str, ...] | list[str] = (),
        ask: AskUser | None = None,
        on_refusal: Callable[[str, str], None] | None = None,
    ):
        self.mode = mode
        self.work_dir = work_dir
        self.folders = [Path(os.path.realpath(p)) for p in (work_dir, *allowed_dirs)]
        self.session_allowed: set[str] = set(always_allow)  # "yes for this tool this session"
        self.ask = ask
        self.on_refusal = on_refusal
        self.refusals: list[str] = []

    def _edit_inside_work_dir(self, name: str, args: dict[str, Any]) -> bool:
        path = edit_path(name, args)
        if path is None:
            return False
        return is_inside(resolve_edit_path(path, self.work_dir), self.folders)

    async def __call__(self, call: Any) -> Decision:
        from agentica_cli.agent.approval import Decision

        name = getattr(call, "name", "") or getattr(getattr(call, "function", None), "name", "")
        args = call_args(call)
        if self.mode == "plan":
            if self.on_refusal is not None:
                self.on_refusal(name, self.mode)
            return Decision.deny(
                f"Plan mode is on: '{name}' changes things, so it was not run. Do not try other ways to "
                "make changes; finish by presenting your plan (the files and the edits or commands you "
                "would make) for the user to approve."
            )
        if self.mode == "auto" or name in self.session_allowed:
            return Decision.allow()
        if self.mode == "accept-edits" and self._edit_inside_work_dir(name, args):
            return Decision.allow()
        if self.ask is None:
            self.refusals.append(name)
            if self.on_refusal is not None:
                self.on_refusal(name, self.mode)
            return Decision.deny(
                f"'{name}' was not run: it needs the user's permission and this run cannot ask "
                f"(agentica -p, permission mode '{self.mode}'). Do not retry it; tell the user "
                "what you would have done, and that they can allow it with --yes or --permission-mode."
            )
        answer = self.ask(call)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer.choice == "always":
            self.session_allowed.add(name)
            return Decision.allow()
        if answer.choice == "once":
            return Decision.allow()
        reason = f"The user declined to run '{name}'."
        if answer.message:
            reason += f" They said: {answer.message}"
        return Decision.deny(reason)


def refusal_hint(name: str, mode: str) -> str:
    """What stderr says when a -p run refused a call."""
    edit = name in EDIT_TOOLS
    allow = "--permission-mode accept-edits (edits inside the work dir) or --yes" if edit else "--yes"
    if mode == "plan":
        return f"agentica: refused '{name}' (plan mode is read-only); run without --permission-mode plan to allow it"
    return f"agentica: refused '{name}': -p runs never ask for permission; re-run with {allow} to allow it"
