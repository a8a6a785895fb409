"""The approval questions a served session asks its MCP client, as elicitation requests.

A tool call the permission policy would ask the user about becomes a `Question`: the turn waits
on it while the `agentica` tool call elicits the client's answer (accept: allow; decline or
cancel: refuse). A client that did not declare the elicitation capability cannot answer: the
session then refuses such calls at once (fail closed) and the tool result says so.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentica_cli.app.permissions.approvals import COMMAND_KEYS, Answer, call_args, edit_path
from agentica_cli.app.permissions.approvals import Question as PolicyQuestion
from agentica_cli.app.safe_text import safe_text

DIFF_LINES = 80  # lines of an edit's diff shown in the question
PREVIEW_CHARS = 400  # characters of other arguments shown


class ApprovalForm(BaseModel):
    """What the client sends back with "accept" (decline or cancel refuse the call)."""

    always: bool = Field(default=False, description="Also allow calls like this one for the rest of this session")


def approval_schema() -> dict[str, Any]:
    from mcp.server.elicitation import render_elicitation_schema

    return render_elicitation_schema(ApprovalForm)


@dataclass
class Question:
    """One pending approval; `future` gets the answer the policy returns to the loop."""

    name: str
    message: str
    future: asyncio.Future[Answer]
    key: str = field(default_factory=lambda: f"approval-{uuid.uuid4().hex[:12]}")

    def answer(self, action: str | None, content: dict[str, Any] | None = None) -> None:
        """An elicitation outcome: "accept" (with the form), "decline", "cancel", or None (no answer)."""
        if self.future.done():
            return
        if action == "accept":
            try:
                form = ApprovalForm.model_validate(content if content is not None else {})
            except ValueError:  # not the form that was asked for: no consent to anything
                self.future.set_result(Answer("no", "The answer did not match the approval form."))
                return
            # the policy remembers an "always" only where its question offered one (apply_answer)
            self.future.set_result(Answer("always" if form.always else "once"))
        elif action == "decline":
            self.future.set_result(Answer("no"))
        else:
            self.future.set_result(Answer("no", "The request was cancelled without an answer."))


def client_can_elicit(capabilities: Any) -> bool:
    """Form elicitation declared: `elicitation: {}` (before modes existed) or with `form`."""
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    return getattr(elicitation, "form", None) is not None or getattr(elicitation, "url", None) is None


def question_text(call: Any, question: PolicyQuestion, work_dir: Path) -> str:
    """What the client is asked: the tool, its target, why it asks (the policy's question), what
    "always" would allow when the policy offers it, and an edit's diff."""
    name = str(getattr(call, "name", "") or "tool")
    args = call_args(call)
    lines = [f"agentica asks to run {name}{_target(name, args)}."]
    if question.note:
        lines.append(f"Why it asks: {question.note}")
    if question.always:
        lines.append(f"Checking 'always' also allows {question.always} for the rest of this session.")
    else:
        lines.append("This call is asked about each time: 'always' allows it once.")
    diff = _edit_diff(name, args, work_dir)
    if diff:
        lines += ["", diff]
    lines += ["", "Accept to allow it, decline to refuse it."]
    return safe_text("\n".join(lines))


def _target(name: str, args: dict[str, Any]) -> str:
    path = edit_path(name, args)
    if path:
        return f" on {path}"
    for key in COMMAND_KEYS:
        if isinstance(args.get(key), str):
            return f": {args[key][:PREVIEW_CHARS]}"
    shown = json.dumps(args, ensure_ascii=False, default=str)
    return f" with {shown[:PREVIEW_CHARS]}{'...' if len(shown) > PREVIEW_CHARS else ''}" if args else ""


def _edit_diff(name: str, args: dict[str, Any], work_dir: Path) -> str:
    path = edit_path(name, args)
    if path is None:
        return ""
    from agentica_cli.app.edit_preview import edited_text

    full = Path(path) if Path(path).is_absolute() else work_dir / path
    try:
        before = full.read_text(encoding="utf-8") if full.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return ""
    after = edited_text(args, before)
    if after is None:
        return ""
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", lineterm=""))
    if len(diff) > DIFF_LINES:
        diff = [*diff[:DIFF_LINES], f"... ({len(diff) - DIFF_LINES} more lines)"]
    return "\n".join(diff)
