"""Rich rendering of agent events in the interactive session.

Assistant text streams into a live area at the bottom of the screen; each finished
Markdown block (a paragraph, a list, a closed code fence) is printed above it for good, so
the live area stays small however long the answer. While the model is being waited for, a
spinner line there shows the elapsed time, the tokens received so far and a retry's
countdown. Running tools show in the live area with a spinner, their elapsed time and the
last lines of their output; when a tool finishes, a permanent line with its one-line summary
(and a command's last lines) replaces it. A sub-agent's (`task`) header is printed when it
starts, and its steps are printed under it as they finish.

Everything the model or a tool controls goes through `safe_text` (the summaries, diffs and
Markdown helpers do it themselves) before it reaches the terminal.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from agentica_cli.app.edit_preview import preview_edit
from agentica_cli.app.permissions.tool_kinds import COMMAND_TOOLS
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.summaries import (
    CommandOutput,
    format_elapsed,
    shorten,
    summarize_call,
    summarize_result,
)
from agentica_cli.tui.diff_preview import render_diff
from agentica_cli.tui.live_view import ModelWait, RunningTool
from agentica_cli.tui.terminal_markdown import TerminalMarkdown, print_markdown
from agentica_cli.tui.wrapping import fit_line, wrap_text

TODO_TOOLS = ("write_todos", "todo_write", "update_todos", "todos")
HEADER_FIRST = ("task",)  # calls whose steps show under them: their header is printed at the start
MAX_DIFF_LINES = 80  # after an edit; the approval question shows the whole diff
OUTPUT_TAIL_LINES = 4  # of a finished command's output
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


def _root_call(source: str) -> str:
    """The top-level call a nested event belongs to: "task:t1/task:x2" -> "t1"."""
    return source.split("/", 1)[0].removeprefix("task:")


class EventRenderer:
    def __init__(self, console: Console, work_dir: Path, *, markdown: bool = True, show_reasoning: bool = True):
        self.console = console
        self.work_dir = work_dir
        self.markdown = markdown
        self.show_reasoning = show_reasoning
        self.text = ""
        self.reasoning = ""
        self.running: dict[str, RunningTool] = {}
        self.calls: dict[str, tuple[str, dict[str, Any], str]] = {}  # call_id -> (name, args, source)
        self.previews: dict[str, str] = {}
        self.waiting: ModelWait | None = None  # the main agent waits for the model
        self.live: Live | None = None
        self.todos: list[dict[str, Any]] | None = None
        self.usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self.printed_this_request = False  # a block of the current request's text was printed for good
        self.text_printed = False  # a block of this turn's text is on screen (the next one gets a blank line)
        self.headed: set[str] = set()  # calls whose header line was printed when they started
        self.last_block = ""  # the top-level call the last permanent line belongs to
        self.last_result: tuple[str, dict[str, Any], str] | None = None  # for /expand
        self.typeahead = ""  # keys typed during the turn, waiting for the next prompt

    # -- the live area --------------------------------------------------------------------

    def _live_renderable(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self.reasoning and self.show_reasoning:
            parts.append(Text(safe_text(self.reasoning[-400:]), style="dim italic"))
        if self.text:
            if self.text_printed:
                parts.append(Text(""))  # the blank line it will have once printed for good
            parts.append(TerminalMarkdown(self.text) if self.markdown else Text(safe_text(self.text)))
        parts.extend(self.running.values())
        if self.waiting is not None:
            parts.append(self.waiting)
        if self.typeahead:
            line = Text("› ", style="cyan")
            line.append(safe_text(self.typeahead, keep_newlines=False))
            line.append("▌  (sent when this turn ends; Esc interrupts)", style="dim")
            parts.append(line)
        return Group(*parts)

    def set_typeahead(self, text: str) -> None:
        """Keys typed during the turn (the REPL's TurnInput): shown at once, under the live area."""
        self.typeahead = text
        if self.live is not None or text:
            self._refresh()
            if self.live is not None:
                self.live.refresh()  # now, not at the next tick: keystroke-to-screen latency

    def _refresh(self) -> None:
        if not (self.text or self.running or self.waiting or self.typeahead
                or (self.reasoning and self.show_reasoning)):
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
        self.waiting = None
        self.pause()
        self.text_printed = False
        self.headed.clear()
        self.last_block = ""

    def cancel(self) -> None:
        """The turn was interrupted: tools still running leave a permanent 'cancelled' line."""
        self._flush_text(all_of_it=True)
        running, self.running = self.running, {}
        self.waiting = None
        self.pause()
        for call_id, tool in running.items():
            name, args, _ = self.calls.get(call_id, ("?", {}, ""))
            line = Text(tool.indent)
            line.append("● ", style="red")
            line.append(self._call_line(name, args, tool.indent), style="bold")
            self.console.print(line)
            room = self.console.width - len(tool.indent) - 4
            for shown in tool.visible_lines():  # what it printed stays, as on the live area
                row = Text(f"{tool.indent}    " + fit_line(shown, room), style="dim")
                row.no_wrap, row.overflow = True, "ellipsis"
                self.console.print(row)
            elapsed = format_elapsed(time.monotonic() - tool.started)
            self.console.print(Text(f"{tool.indent}  ⎿ cancelled ({elapsed})", style="red"))

    # -- text ---------------------------------------------------------------------------

    def _print_text(self, chunk: str) -> None:
        if not chunk.strip():
            return
        if self.text_printed:  # blocks printed one by one: keep the blank line between them
            self.console.print()
        if self.markdown:
            print_markdown(self.console, chunk)
        else:
            self.console.print(Text(safe_text(chunk.rstrip("\n"))))
        self.text_printed = True
        self.last_block = ""

    def _flush_text(self, all_of_it: bool = False) -> None:
        if self.reasoning and self.show_reasoning:
            self.console.print(Text(safe_text(self.reasoning.strip()), style="dim italic"))
        self.reasoning = ""
        if all_of_it:
            chunk, self.text = self.text, ""
        else:
            chunk, self.text = split_markdown(self.text)
        if chunk.strip():
            self.printed_this_request = True
            # Printed above a running Live, the block would be followed by the live area's last
            # frame, which still holds it: shown twice until the next refresh. The area goes
            # first (it comes back with what is left, at the caller's next _refresh).
            self.pause()
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
        main = not event.source
        indent = "" if main else "  │ "
        if kind == "text_delta":
            if not main:
                return  # a sub-agent's prose is summarised by its task result
            self.text += event.text
            if self.waiting is not None:
                self.waiting.received(len(event.text))
            done, _ = split_markdown(self.text)
            if done:
                self._flush_text()
            self._refresh()
        elif kind == "reasoning_delta" and main:
            self.reasoning += event.text
            if self.waiting is not None:
                self.waiting.received(len(event.text), reasoning=True)
            self._refresh()
        elif kind == "tool_output":
            tool = self.running.get(event.call_id)
            if tool is not None:
                tool.add_output(event.text)
                self._refresh()
        elif kind == "tool_call_started":
            self._tool_started(event, indent)
        elif kind == "tool_call_finished":
            self.running.pop(event.call_id, None)
            self._tool_done(event, indent)
            self._refresh()
        elif kind == "usage":
            for key in self.usage:
                self.usage[key] += getattr(event, key, 0) or 0
            if main:
                self.waiting = None  # the reply is complete
                self._refresh()
        elif kind in ("turn_started", "model_request_started") and main:
            self.printed_this_request = False
            self.waiting = ModelWait()
            self._refresh()
        elif kind == "notice":
            if event.kind == "retry" and main:
                self._void_partial_answer()
                if self.waiting is not None:
                    self.waiting.retrying(event.message, getattr(event, "delay", None))
            self._permanent(event.source, Text(self._hanging(f"{indent}note: ", event.message), style="yellow"))
            self._refresh()  # the live area comes back (with a retry's countdown)
        elif kind == "error":
            self._flush_text(all_of_it=True)
            if main:
                self.waiting = None
            self._permanent(event.source, Text(self._hanging(f"{indent}error: ", event.message), style="bold red"))
            self._refresh()
        elif kind == "turn_finished" and main:
            self.finish()
            if event.stop_reason == "cancelled":
                self.console.print(Text("(cancelled)", style="yellow"))
            elif event.stop_reason in ("max_turns", "tool_call_limit"):
                self.console.print(Text(f"(stopped: {event.stop_reason.replace('_', ' ')})", style="yellow"))

    def _hanging(self, label: str, message: str) -> str:
        """`label message` wrapped between words at the console's width, continuation rows under
        the message (rich would start them at column 0)."""
        return wrap_text(label + safe_text(message), self.console.width, hang=len(label))

    def _permanent(self, source: str, *renderables: RenderableType) -> None:
        """Print lines for good above the live area. A nested line goes under its task's
        header: printed again first if something else was printed since (tasks run side by side)."""
        self.pause()
        if source:
            root = _root_call(source)
            if root in self.headed and self.last_block != root:
                self._print_header(root, "● ", "cyan")
            self.last_block = root
        for renderable in renderables:
            self.console.print(renderable)

    def _print_header(self, call_id: str, bullet: str, bullet_style: str) -> None:
        name, args, source = self.calls.get(call_id, ("?", {}, ""))
        line = Text("" if not source else "  │ ")
        line.append(bullet, style=bullet_style)
        line.append(self._call_line(name, args, line.plain), style="bold")
        self.console.print(line)
        self.last_block = _root_call(source) if source else call_id

    def _call_line(self, name: str, args: dict[str, Any], indent: str) -> str:
        """The call's one-line summary, fitting the terminal after its indent and bullet."""
        return summarize_call(name, args, width=max(30, self.console.width - len(indent) - 3))

    def _tool_started(self, event: Any, indent: str) -> None:
        if not event.source:
            self._flush_text(all_of_it=True)
            self.waiting = None  # the model's reply is complete: its tools run now
        self.calls[event.call_id] = (event.name, event.args or {}, event.source)
        preview = preview_edit(event.name, event.args or {}, self.work_dir)
        if preview:
            self.previews[event.call_id] = preview
        if event.name in HEADER_FIRST and not event.source:
            self.pause()
            self._print_header(event.call_id, "● ", "cyan")
            self.headed.add(event.call_id)
        self.running[event.call_id] = RunningTool(summarize_call(event.name, event.args, width=300), indent)
        self._refresh()

    def _tool_done(self, event: Any, indent: str) -> None:
        name, args, _ = self.calls.get(event.call_id, (event.name, {}, ""))
        summary = summarize_result(event.name, event.result, event.status, event.error)
        summary = shorten(summary, max(30, self.console.width - len(indent) - 16))  # one line, with its time
        failed = event.status not in ("ok",) or bool(event.error)
        self.last_result = (name, args, event.result or event.error or "")
        header = Text(indent)
        header.append("● ", style="red" if failed else "green")
        header.append(self._call_line(name, args, indent), style="bold")
        result = Text(indent + "  ⎿ ", style="dim")
        result.append(f"{summary} ({format_elapsed(event.elapsed)})", style="red" if failed else "dim")
        lines: list[RenderableType] = [result]
        if event.call_id in self.headed:
            self.headed.discard(event.call_id)
            if self.last_block != event.call_id:  # its steps were interleaved with others'
                lines.insert(0, header)
        else:
            lines.insert(0, header)
        if event.name in COMMAND_TOOLS and not failed:
            lines += self._output_tail(event.result, indent)
        preview = self.previews.pop(event.call_id, None)
        if preview and not failed:
            lines.append(render_diff(preview, max_lines=MAX_DIFF_LINES))
        if getattr(event, "show_result", False) and event.result and not failed:
            lines.append(Text(safe_text(event.result.rstrip())))
        self._permanent(event.source, *lines)
        if not event.source:
            self.last_block = event.call_id
        if name in TODO_TOOLS and not failed and isinstance(args.get("todos"), list):
            self.show_todos(args["todos"])

    def _output_tail(self, result: str, indent: str) -> list[RenderableType]:
        """A finished command's last lines, dim, under its summary; the rest is a count."""
        output = CommandOutput(result)
        if not output.lines:
            return []
        shown = output.lines[-OUTPUT_TAIL_LINES:]
        lines: list[RenderableType] = []
        hidden = output.printed_lines - len(shown)
        if hidden > 0:
            lines.append(Text(f"{indent}    … +{hidden:,} lines (/expand shows the output)", style="dim"))
        room = self.console.width - len(indent) - 4
        for line in shown:  # one row each: padding squeezed, then cut (`fit_line`), as in the live area
            text = Text(f"{indent}    " + fit_line(safe_text(line, keep_newlines=False), room), style="dim")
            text.no_wrap, text.overflow = True, "ellipsis"
            lines.append(text)
        return lines

    def expand_last(self) -> bool:
        """Print the whole result of the last finished tool call (what the model got), for
        `/expand` (and the key bound to it). False if no call has finished yet."""
        if self.last_result is None:
            return False
        name, args, result = self.last_result
        self.pause()
        self.console.print(Text.assemble(("● ", "cyan"), (self._call_line(name, args, ""), "bold")))
        self.console.print(Text(safe_text(result.rstrip("\n")) or "(empty result)"))
        return True

    def show_todos(self, todos: list[Any]) -> None:
        self.todos = todos
        for item in todos:
            if isinstance(item, dict):
                status = str(item.get("status", "pending"))
                content = str(item.get("content") or item.get("title") or item.get("task") or item)
            else:
                status, content = "pending", str(item)
            style = {"completed": "dim strike", "in_progress": "bold cyan"}.get(status, "")
            mark = TODO_MARKS.get(status, "[ ]")
            self.console.print(Text(f"    {mark} {safe_text(content, keep_newlines=False)}", style=style))
