"""A resumed conversation, replayed compactly so the user sees where they left off.

    you: read the notes
    ● read_file notes.txt
      ⎿ 2 lines read
    agent: It says hello world.

User prompts (a long one cut to its first lines), one line per tool call and one per result
(the same summaries the live session shows), and the assistant's answers (a long one cut to
its last lines, where the conclusion is). Only the last few prompts are replayed. Everything
shown came from the model, tools or files, so it goes through safe_text.

Pure string work with no agent imports: it runs before the first prompt is painted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.session_views.tool_calls import ToolCalls, calls_by_id
from agentica_cli.app.summaries import summarize_call, summarize_result

# How agent.context.SUMMARY_PREFIX starts (importing that module costs ~80 ms; a test ties them).
COMPACTED_MARK = "Summary of the earlier conversation"

MAX_PROMPTS = 10  # the last N prompts and what followed them
PROMPT_LINES = 6  # the first lines of a long prompt (attached files, pasted logs)
ANSWER_LINES = 20  # the last lines of a long answer
MAX_LINE = 300  # characters of one line: a minified file must not fill the screen

USER, ANSWER, CALL, RESULT, NOTE = "1", "", "", "2", "2"  # SGR codes: bold, plain, dim

Line = tuple[str, str]  # (text, SGR code for terminal.plain)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts: the text ones
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def _labelled(label: str, text: str, code: str, *, head: int | None = None, tail: int | None = None) -> list[Line]:
    """`label: first line`, further lines indented under it; cut to the first `head` or last `tail` lines."""
    lines = safe_text(text.strip()).splitlines() or [""]
    note = ""
    if head is not None and len(lines) > head:
        note = f"… +{len(lines) - head} more lines"
        lines = lines[:head]
    elif tail is not None and len(lines) > tail:
        note = f"… {len(lines) - tail} earlier lines"
        lines = lines[-tail:]
    indent = " " * (len(label) + 2)
    out: list[Line] = []
    if note and tail is not None:
        out.append((f"{label}: {note}", NOTE))
        out += [(indent + _clip(line), code) for line in lines]
        return out
    out.append((f"{label}: {_clip(lines[0])}", code))
    out += [(indent + _clip(line), code) for line in lines[1:]]
    if note:
        out.append((indent + note, NOTE))
    return out


_MARKS = ("you: ", "agent: ", "● ", "⎿ ")


def hang_of(line: str) -> int:
    """Where the text of a replayed line starts (after its indent and its `you:`, `agent:`,
    `●` or `⎿`): the column its wrapped rows continue at."""
    body = line.lstrip(" ")
    lead = len(line) - len(body)
    return lead + next((len(mark) for mark in _MARKS if body.startswith(mark)), 0)


def replay(messages: list[dict[str, Any]], *, max_prompts: int = MAX_PROMPTS) -> list[Line]:
    """The lines that show `messages` compactly (see the module docstring)."""
    prompts = [i for i, m in enumerate(messages)
               if m.get("role") == "user" and not _text_of(m.get("content")).startswith(COMPACTED_MARK)]
    start = prompts[-max_prompts] if len(prompts) > max_prompts else 0
    out: list[Line] = []
    hidden = len(prompts) - max_prompts
    if hidden > 0:
        out.append((f"… {hidden} earlier prompt{'s' if hidden != 1 else ''} not shown", NOTE))
    out += _lines(messages[start:], calls_by_id(messages))
    return out


def _lines(messages: Iterable[dict[str, Any]], calls: ToolCalls) -> list[Line]:
    out: list[Line] = []
    for message in messages:
        role = message.get("role")
        text = _text_of(message.get("content"))
        if role == "user":
            if text.startswith(COMPACTED_MARK):
                out.append(("(earlier messages were compacted into a summary)", NOTE))
            elif text.strip():
                out += _labelled("you", text, USER, head=PROMPT_LINES)
        elif role == "assistant":
            if text.strip():
                out += _labelled("agent", text, ANSWER, tail=ANSWER_LINES)
            for call in message.get("tool_calls") or ():
                name, args = calls.get(str(call.get("id")), ("?", {}))
                out.append((safe_text(f"● {summarize_call(name, args, width=100)}", keep_newlines=False), CALL))
        elif role == "tool":
            name, _ = calls.get(str(message.get("tool_call_id")), ("?", {}))
            status = "error" if text.startswith("Error") else "ok"
            summary = summarize_result(name, text, status)
            out.append((safe_text(f"  ⎿ {summary}", keep_newlines=False), RESULT))
    return out
