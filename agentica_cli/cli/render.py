"""Rich rendering of agent events in the interactive session.

Assistant text streams into a live area at the bottom of the screen; each finished
Markdown block (a paragraph, a list, a closed code fence) is printed above it for good, so
the live area stays small however long the answer. Running tools show in the live area
with a spinner and their elapsed time; when a tool finishes, a permanent line with its
one-line summary and result replaces it. Sub-agent events are indented under their task.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.text import Text

from agentica_cli.cli.diff_preview import preview_edit
from agentica_cli.cli.summaries import format_elapsed, shorten, summarize_call, summarize_result

TODO_TOOLS = ("write_todos", "todo_write", "update_todos", "todos")
MAX_DIFF_LINES = 80  # after an edit; the approval question shows the whole diff
TODO_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


def split_markdown(buffer: str) -> tuple[str, str]:
    """(complete blocks, the tail still being written). A block ends at a blank line
    outside a code fence; a fence is only complete once closed."""
    cut = 0
    in_fence = False
    position = 0
    for line in buffer.splitlines(keepends=True):
        position += len(line)
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = not in_fence
            if not in_fence and line.endswith("\n"):
                cut = position
        elif not in_fence and not stripped and line.endswith("\n"):
            cut = position
    return buffer[:cut], buffer[cut:]


class _RunningTool:
    def __init__(self, label: str, indent: str):
        self.label = label
        self.indent = indent
        self.started = time.monotonic()
        self.spinner = Spinner("dots", style="cyan")

    def __rich__(self) -> RenderableType:
        elapsed = format_elapsed(time.monotonic() - self.started)
        self.spinner.update(text=Text.assemble((self.label, "bold"), ("  " + elapsed, "dim")))
        return _Indented(self.indent, self.spinner)


class _Indented:
    def __init__(self, indent: str, inner: RenderableType):
        self.indent = indent
        self.inner = inner

    def __rich_console__(self, console: Console, options: Any) -> Any:
        if self.indent:
            yield Text(self.indent, end="")
        yield self.inner


class EventRenderer:
    def __init__(self, console: Console, work_dir: Path, *, markdown: bool = True, show_reasoning: bool = True):
        self.console = console
        self.work_dir = work_dir
        self.markdown = markdown
        self.show_reasoning = show_reasoning
        self.text = ""
        self.reasoning = ""
        self.running: dict[str, _RunningTool] = {}
        self.calls: dict[str, tuple[str, dict[str, Any], str]] = {}  # call_id -> (name, args, source)
        self.previews: dict[str, str] = {}
        self.live: Live | None = None
        self.todos: list[dict[str, Any]] | None = None
        self.usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self.printed_this_request = False  # a block of the current request's text was printed for good
        self.text_printed = False  # a block of this turn's text is on screen (the next one gets a blank line)

    # -- the live area --------------------------------------------------------------------

    def _live_renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self.reasoning and self.show_reasoning:
            parts.append(Text(self.reasoning[-400:], style="dim italic"))
        if self.text:
            if self.text_printed:
                parts.append(Text(""))  # the blank line it will have once printed for good
            parts.append(Markdown(self.text) if self.markdown else Text(self.text))
        parts.extend(self.running.values())
        return Group(*parts)

    def _refresh(self) -> None:
        if not (self.text or self.running or (self.reasoning and self.show_reasoning)):
            if self.live is not None:
                self.live.update(Text(""), refresh=True)
            return
        if self.live is None:
            self.live = Live(
                self._live_renderable(),
                console=self.console,
                refresh_per_second=10,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.live.start()
        else:
            self.live.update(self._live_renderable())

    def forget_preview(self, call_id: str) -> None:
        """The user already saw this edit's diff in the approval question."""
        self.previews.pop(call_id, None)

    def pause(self) -> None:
        """Stop the live area (before asking the user something)."""
        if self.live is not None:
            self.live.stop()
            self.live = None

    def resume_tool(self, call_id: str) -> None:
        """The user allowed this call after the question paused the live area: it runs now,
        so its spinner comes back and its clock starts from here."""
        tool = self.running.get(call_id)
        if tool is not None:
            tool.started = time.monotonic()
        self._refresh()

    def finish(self) -> None:
        self._flush_text(all_of_it=True)
        self.running.clear()
        self.pause()
        self.text_printed = False

    def cancel(self) -> None:
        """The turn was interrupted: tools still running leave a permanent 'cancelled' line."""
        self._flush_text(all_of_it=True)
        running, self.running = self.running, {}
        self.pause()
        for call_id, tool in running.items():
            name, args, _ = self.calls.get(call_id, ("?", {}, ""))
            line = Text(tool.indent)
            line.append("● ", style="red")
            line.append(summarize_call(name, args, width=100), style="bold")
            self.console.print(line)
            elapsed = format_elapsed(time.monotonic() - tool.started)
            self.console.print(Text(f"{tool.indent}  ⎿ cancelled ({elapsed})", style="red"))

    # -- text ---------------------------------------------------------------------------

    def _print_text(self, chunk: str) -> None:
        if not chunk.strip():
            return
        if self.text_printed:  # blocks printed one by one: keep the blank line between them
            self.console.print()
        self.console.print(Markdown(chunk) if self.markdown else Text(chunk.rstrip("\n")))
        self.text_printed = True

    def _flush_text(self, all_of_it: bool = False) -> None:
        if self.reasoning and self.show_reasoning:
            self.console.print(Text(self.reasoning.strip(), style="dim italic"))
        self.reasoning = ""
        if all_of_it:
            chunk, self.text = self.text, ""
        else:
            chunk, self.text = split_markdown(self.text)
        if chunk.strip():
            self.printed_this_request = True
        self._print_text(chunk)

    def _void_partial_answer(self) -> None:
        """A model request failed mid-stream and is retried: its text will come again."""
        self.text = ""  # still in the live area: simply dropped
        self._refresh()
        if self.printed_this_request:  # already printed for good: say it will repeat
            self.console.print(Text("(the reply above was cut off; it starts again below)", style="dim"))
        self.printed_this_request = False

    # -- events -------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        kind = event.type
        indent = "  │ " if event.source else ""
        if kind == "text_delta":
            if event.source:
                return  # a sub-agent's prose is summarised by its task result
            self.text += event.text
            done, _ = split_markdown(self.text)
            if done:
                self._flush_text()
            self._refresh()
        elif kind == "reasoning_delta" and not event.source:
            self.reasoning += event.text
            self._refresh()
        elif kind == "tool_call_started":
            if not event.source:
                self._flush_text(all_of_it=True)
            self.calls[event.call_id] = (event.name, event.args or {}, event.source)
            preview = preview_edit(event.name, event.args or {}, self.work_dir)
            if preview:
                self.previews[event.call_id] = preview
            self.running[event.call_id] = _RunningTool(summarize_call(event.name, event.args), indent)
            self._refresh()
        elif kind == "tool_call_finished":
            self.running.pop(event.call_id, None)
            self._tool_done(event, indent)
            self._refresh()
        elif kind == "usage":
            for key in self.usage:
                self.usage[key] += getattr(event, key, 0) or 0
        elif kind == "model_request_started" and not event.source:
            self.printed_this_request = False
        elif kind == "notice":
            if event.kind == "retry" and not event.source:
                self._void_partial_answer()
            self.console.print(Text(f"{indent}note: {event.message}", style="yellow"))
        elif kind == "error":
            self._flush_text(all_of_it=True)
            self.console.print(Text(f"error: {event.message}", style="bold red"))
        elif kind == "turn_finished" and not event.source:
            self.finish()
            if event.stop_reason == "cancelled":
                self.console.print(Text("(cancelled)", style="yellow"))
            elif event.stop_reason in ("max_turns", "tool_call_limit"):
                self.console.print(Text(f"(stopped: {event.stop_reason.replace('_', ' ')})", style="yellow"))

    def _tool_done(self, event: Any, indent: str) -> None:
        name, args, _ = self.calls.get(event.call_id, (event.name, {}, ""))
        summary = summarize_result(event.name, event.result, event.status, event.error)
        summary = shorten(summary, max(30, self.console.width - len(indent) - 16))  # one line, with its time
        failed = event.status not in ("ok",) or bool(event.error)
        self.pause()  # print permanent lines above, then the live area restarts
        line = Text(indent)
        line.append("● ", style="red" if failed else "green")
        line.append(summarize_call(name, args, width=100), style="bold")
        self.console.print(line)
        result = Text(indent + "  ⎿ ", style="dim")
        result.append(f"{summary} ({format_elapsed(event.elapsed)})", style="red" if failed else "dim")
        self.console.print(result)
        preview = self.previews.pop(event.call_id, None)
        if preview and not failed:
            lines = preview.rstrip("\n").splitlines()
            shown = "\n".join(lines[:MAX_DIFF_LINES])
            self.console.print(Syntax(shown, "diff", theme="ansi_dark", background_color="default"))
            if len(lines) > MAX_DIFF_LINES:
                self.console.print(Text(f"{indent}  … {len(lines) - MAX_DIFF_LINES} more diff lines", style="dim"))
        if getattr(event, "show_result", False) and event.result and not failed:
            self.console.print(Text(event.result.rstrip()))
        if name in TODO_TOOLS and not failed and isinstance(args.get("todos"), list):
            self.show_todos(args["todos"])

    def show_todos(self, todos: list[Any]) -> None:
        self.todos = todos
        for item in todos:
            if isinstance(item, dict):
                status = str(item.get("status", "pending"))
                content = str(item.get("content") or item.get("title") or item.get("task") or item)
            else:
                status, content = "pending", str(item)
            style = {"completed": "dim strike", "in_progress": "bold cyan"}.get(status, "")
            self.console.print(Text(f"    {TODO_MARKS.get(status, '[ ]')} {content}", style=style))
