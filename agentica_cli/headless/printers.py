"""`agentica -p`: run one task without a conversation and print the outcome.

Output formats:
  text         the final answer on stdout; tool activity and notices on stderr
               (coloured only when stderr is a terminal)
  json         one object at the end: result, session_id, usage, tool_calls, stop_reason
  stream-json  every event as one JSON line as it happens, then the same result object

With --input-format stream-json (stream_input_run.py) stdin carries user messages as JSON
lines, each a turn of the same session with its own result object.

The session itself (policy, stored session, MCP servers, extensions, checkpoints, usage, the
agent, teardown) is an AppSession (app/session.py); this module writes its events.

No rich here: a -p run should start quickly and stay small.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from agentica_cli.app import exitcodes
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.settings.config import Settings
from agentica_cli.app.summaries import format_elapsed, summarize_call, summarize_result

STDIN_LIMIT = 2_000_000  # characters of piped input attached to the prompt


def compose_prompt(prompt: str, piped: str) -> str:
    """`cat err.log | agentica -p "explain"`: the prompt, then the piped text."""
    piped = piped.rstrip("\n")
    if not piped.strip():
        return prompt
    if not prompt.strip():
        return piped
    return f"{prompt}\n\n<stdin>\n{piped}\n</stdin>"


class OutputClosed(Exception):
    """stdout's reader closed the pipe; the run stops."""


@dataclass
class RunFailure:
    """An exception that ended the run outside the loop's own Error events."""

    message: str


class StderrProgress:
    """Tool activity for a text-format run, on stderr. The model and tools control the
    names, arguments, results and messages shown: all of it goes through `safe_text` (the
    summaries do it themselves), so no escape sequence reaches the terminal."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.color = stream.isatty() and not os.environ.get("NO_COLOR")
        self.under = ""  # the call whose "> name args" line is the last line printed

    def _paint(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def line(self, text: str, call_id: str = "") -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self.under = call_id

    def handle(self, event: Any) -> None:
        indent = "    " if getattr(event, "source", "") else ""
        kind = event.type
        if kind == "tool_call_started":
            self.line(indent + self._paint("36", "> " + summarize_call(event.name, event.args)), event.call_id)
        elif kind == "tool_call_finished":
            summary = summarize_result(event.name, event.result, event.status, event.error)
            if event.call_id != self.under:  # not right under its own line (calls run together)
                summary = f"{safe_text(event.name, keep_newlines=False)}: {summary}"
            bad = event.status != "ok" or event.error
            self.line(indent + self._paint("31" if bad else "2", f"  {summary} ({format_elapsed(event.elapsed)})"))
        elif kind == "notice":
            self.line(indent + self._paint("33", f"note: {safe_text(event.message)}"))
        elif kind == "error":
            self.line(self._paint("31", f"agentica: error: {safe_text(event.message)}"))


def _read_stdin() -> str:
    try:
        data = sys.stdin.read(STDIN_LIMIT + 1)
    except (OSError, UnicodeDecodeError) as err:
        sys.stderr.write(f"agentica: could not read stdin: {err}\n")
        return ""
    if len(data) > STDIN_LIMIT:
        sys.stderr.write(f"agentica: stdin truncated to {STDIN_LIMIT} characters\n")
        data = data[:STDIN_LIMIT]
    return data


def run_print(args: argparse.Namespace, settings: Settings, work_dir: Path, prompt: str, *, read_stdin: bool,
              runner_class: type[PrintRun] | None = None) -> int:
    """Check and set up a -p run, then run it with `runner_class` (stream_input_run passes
    its own, whose prompts come from stdin as they are written)."""
    if runner_class is None:  # else stdin carries the messages, read as they come
        piped = _read_stdin() if read_stdin else ""
        prompt = compose_prompt(prompt, piped)
        if not prompt.strip():
            sys.stderr.write("agentica: no prompt: give one as an argument (agentica -p \"task\") or on stdin\n")
            return exitcodes.USAGE_ERROR
    runner_class = runner_class or PrintRun
    from agentica_cli.app.session import AppSession, StartupError, options_from_args

    front_end = runner_class.make_front_end(args)
    try:
        # The config checks, the untrusted project's notices (on stderr), the model, the session
        # (new, --continue or --resume; --no-session writes nothing); MCP servers waited for at start.
        app = AppSession.open(options_from_args(args, settings, work_dir, mcp_wait="start"), front_end)
    except StartupError as err:
        sys.stderr.write(f"agentica: {err.problem.message}\n")
        return exitcodes.USAGE_ERROR
    try:
        stored = app.stored
        if stored is not None and (args.resume or args.continue_) and prompt.strip():
            from agentica_cli.restore_notes import take_note

            note = take_note(stored.path)  # files `agentica --undo` put back since: the model is told
            prompt = f"{note}\n\n{prompt}" if note else prompt
        images = getattr(args, "image", None) or []
        if images:
            from agentica_cli.images import ImageError, load

            try:
                args.image = [load(path) for path in images]  # fitted once, before any request
            except ImageError as err:
                sys.stderr.write(f"agentica: --image: {err}\n")
                return exitcodes.USAGE_ERROR
        runner = runner_class(args, app)
        code = runner.run(prompt)
    finally:
        from agentica_cli.app.session import stop_background_processes

        stop_background_processes()  # a -p run's servers end with it
        app.release()
    if app.save_error:
        # The answer was given, but --continue / --resume will not find this turn: a failure.
        sys.stderr.write(f"agentica: error: {safe_text(app.save_error, keep_newlines=False)}\n")
        return code or exitcodes.MODEL_ERROR
    return code


class PrintRun:
    """One -p run of an AppSession (app/session.py): its events written in the output format."""

    def __init__(self, args: argparse.Namespace, app: Any):
        self.args = args
        self.app = app
        self.format = args.output_format
        self.out = sys.stdout
        self.progress = StderrProgress(sys.stderr)
        self.interrupted = False
        self.max_cost: float | None = getattr(args, "max_cost", None)
        self.over_budget = ""  # why --max-cost stopped the run
        self.reset_turn()

    @staticmethod
    def make_front_end(args: argparse.Namespace) -> Any:
        """Who the session asks and tells: nobody answers a -p run (app/session.HeadlessFrontEnd)."""
        from agentica_cli.app.session import HeadlessFrontEnd

        return HeadlessFrontEnd("-p")

    def reset_turn(self) -> None:
        """What the result object reports starts again: one run has one turn; with
        --input-format stream-json each message is a turn with its own result."""
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        self.requests = 0
        self.final: Any = None
        self.error: Any = None
        self.started = time.monotonic()
        self.checkpoint_turn = 0  # this turn's number in the checkpoints, from its checkpoint events

    def emit_json(self, payload: dict[str, Any]) -> None:
        self.write_out(json.dumps(payload, ensure_ascii=False, default=str) + "\n")

    def write_out(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:  # `agentica -p ... | head -1`: nobody reads any more
            raise OutputClosed from None

    def output_closed(self) -> int:
        """Stop quietly when the reader of stdout went away, as a shell pipeline expects."""
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())  # the interpreter's last flush must not fail too
        except (OSError, ValueError):
            pass
        return exitcodes.OUTPUT_CLOSED

    def record(self, event: Any) -> None:
        kind = event.type
        if kind == "usage":  # this turn's, for the result object (the session's: app.usage)
            for key in self.usage:
                self.usage[key] += getattr(event, key, 0) or 0
            self.check_budget()  # AppSession.turn counted its money before it came here
        elif kind == "model_request_started" and not event.source:
            self.requests += 1
        elif kind == "tool_call_started":
            self.tool_calls[event.call_id] = {
                "id": event.call_id,
                "name": event.name,
                "args": event.args,
                "source": event.source,
                "status": "started",
            }
        elif kind == "tool_call_finished":
            entry = self.tool_calls.setdefault(event.call_id, {"id": event.call_id, "name": event.name, "args": None})
            entry.update(status=event.status, error=event.error, elapsed=round(event.elapsed, 3))
        elif kind == "turn_finished" and not event.source:
            self.final = event
        elif kind == "checkpoint" and not event.source:
            self.checkpoint_turn = event.turn
        elif kind == "error" and not event.source:
            self.error = event

    def check_budget(self) -> None:
        """--max-cost: past the limit, or a request whose price cannot be known (fail closed: a
        limit that cannot be checked is not kept), the run stops after this request."""
        if self.max_cost is None or self.over_budget:
            return
        from agentica_cli.app.prices import format_dollars

        spent = self.app.process_cost  # this run's, whatever session it was written to
        if spent.unpriced:
            model = safe_text(getattr(self.app.model, "id", "") or "the model", keep_newlines=False)
            self.over_budget = (f"--max-cost: the price of {model} is not known (add it to [prices] in config.toml), "
                                "so the spending limit cannot be kept; stopped")
        elif spent.dollars >= self.max_cost:
            self.over_budget = (f"--max-cost: the run cost {format_dollars(spent.dollars)}, the limit is "
                                f"{format_dollars(self.max_cost)}; stopped")

    async def drive(self, prompt: str) -> None:
        try:
            agent = await self.app.start()  # MCP servers (waited for), the agent, SessionStart hooks
            await self.app.session_start_messages()  # said on stderr as they came, before the prompt
            if self.format == "stream-json":
                self.emit_session_line(agent)
            images = getattr(self.args, "image", None) or ()
            found = self.app.find_command(prompt)
            if found is not None:  # `agentica -p "/review app.py"`: the custom command, its model and tools
                events = self.app.run_command(found[0].name, found[1], images=images, show=self.show_line)
            else:
                events = self.app.turn(prompt, images)
            await self.stream_events(events)
        finally:
            await self.app.close()  # SessionEnd hooks, MCP servers, old checkpoints

    def show_line(self, line: str) -> None:
        """A custom command's !`command` as it runs."""
        self.progress.line(safe_text(line))

    async def stream_events(self, events: Any) -> None:
        from contextlib import aclosing

        # Closed here when writing fails (OutputClosed): the run stops while the loop still
        # runs, instead of in asyncio.run's teardown, where a connection being opened could
        # be left half-started (a "never awaited" warning on stderr).
        async with aclosing(events) as stream:
            async for event in stream:
                self.record(event)
                if self.format == "stream-json":
                    self.emit_json(event.to_dict())
                elif self.format == "text":
                    self.progress.handle(event)
                if self.over_budget:
                    break  # closing the stream ends the run before its next request

    def emit_session_line(self, agent: Any = None) -> None:
        """The stream's first line; `instructions`: the instruction files in the system prompt."""
        line: dict[str, Any] = {"type": "session", "session_id": self.session_id, "model": self.model_label}
        if agent is not None:
            line["instructions"] = list(getattr(agent, "instruction_files", ()))
        self.emit_json(line)

    @property
    def session_id(self) -> str | None:
        return self.app.id

    @property
    def model_label(self) -> str:
        from agentica_cli.app.runtime import model_label

        return model_label(self.app.model)

    async def main(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` (drive, or the stream-json input's turns) until done, or until SIGINT or
        SIGTERM cancels it."""
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def interrupt() -> None:
            self.interrupted = True
            if task is not None:
                task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, interrupt)
            except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
                pass
        try:
            await work
        except asyncio.CancelledError:
            if not self.interrupted:
                raise

    def exit_code(self) -> int:
        if self.interrupted:
            return exitcodes.INTERRUPTED
        if self.over_budget:
            return exitcodes.INCOMPLETE
        if self.error is not None or self.final is None:
            return exitcodes.MODEL_ERROR
        reason = self.final.stop_reason
        if reason == "error":
            return exitcodes.MODEL_ERROR
        if reason == "cancelled":
            return exitcodes.INTERRUPTED
        if reason in ("max_turns", "truncated", "filtered", "empty"):  # the answer is not a whole one
            return exitcodes.INCOMPLETE
        if reason == "blocked":
            return exitcodes.BLOCKED
        return exitcodes.OK

    def blocked_message(self) -> str | None:
        """Why a hook refused the prompt, for stderr and the result's `error`; None otherwise."""
        if self.final is None or self.final.stop_reason != "blocked" or self.interrupted:
            return None
        return f"the prompt was blocked by a hook: {self.final.reason or 'no reason given'}"

    def ended_message(self) -> str | None:
        """How the answer ended when it was cut, filtered or empty (the run's warning notice)."""
        if self.final is None or self.final.stop_reason not in ("truncated", "filtered", "empty"):
            return None
        return self.final.reason or self.final.stop_reason

    def say_blocked(self) -> None:
        blocked = self.blocked_message()
        if blocked and self.format != "text":  # text mode said so already, as the run's notice
            sys.stderr.write(f"agentica: {safe_text(blocked)}\n")

    def result_object(self) -> dict[str, Any]:
        code = self.exit_code()
        return {
            "type": "result",
            "result": self.final.content if self.final is not None else "",
            "is_error": code != exitcodes.OK,
            "exit_code": code,
            "stop_reason": "cancelled" if self.interrupted else "max_cost" if self.over_budget else (
                self.final.stop_reason if self.final else "error"),
            "error": self.over_budget or (self.error.message if self.error is not None
                                          else self.blocked_message() or self.ended_message()),
            "session_id": self.session_id,
            "model": self.model_label,
            "usage": dict(self.usage),
            "total_cost_usd": round(self.app.process_cost.dollars, 6) if self.app.process_cost.known else None,
            "num_model_requests": self.requests,
            "tool_calls": list(self.tool_calls.values()),
            **self.turn_changes(),
            "duration_ms": int((time.monotonic() - self.started) * 1000),
        }

    def turn_changes(self) -> dict[str, Any]:
        """This run's turn in the session's checkpoints (`agentica --undo` undoes it) and the
        files it changed; empty lists when checkpoints are off."""
        checkpoints = self.app.checkpoints  # snapshots for --undo and /undo
        turns = checkpoints.turns() if checkpoints is not None and self.checkpoint_turn else []
        last = next((t for t in turns if t.number == self.checkpoint_turn), None)
        return {"turn": last.number if last else None, "files_changed": list(last.files) if last else []}

    def run_driver(self, driver: Coroutine[Any, Any, Any]) -> bool:
        """Run `driver` under main(): an interruption or an unexpected failure is recorded (and
        said on stderr) instead of raised. False when stdout was closed by its reader."""
        from agentica_cli.app.startup_gc import release

        release()  # the start is over: the collector as usual again (app/startup_gc.py)
        try:
            asyncio.run(self.main(driver))
        except KeyboardInterrupt:
            self.interrupted = True
        except OutputClosed:
            return False
        except Exception as exc:  # a bug or an unexpected failure: say so, no traceback wall
            self.error = RunFailure(f"{type(exc).__name__}: {exc}")
            sys.stderr.write(f"agentica: error: {safe_text(self.error.message)}\n")
        return True

    def run(self, prompt: str) -> int:
        if not self.run_driver(self.drive(prompt)):
            return self.output_closed()
        code = self.exit_code()
        try:
            if self.format in ("json", "stream-json"):
                self.emit_json(self.result_object())
            elif self.final is not None and self.final.content:
                text = self.final.content
                if self.out.isatty():  # a terminal obeys escape sequences; a pipe or file gets the text as is
                    text = safe_text(text)
                self.write_out(text if text.endswith("\n") else text + "\n")
        except OutputClosed:
            return self.output_closed()
        self.say_blocked()
        if self.format == "text":
            if self.interrupted:
                sys.stderr.write("agentica: interrupted\n")
            elif self.over_budget:
                sys.stderr.write(f"agentica: {self.over_budget}\n")
            elif code == exitcodes.INCOMPLETE and self.ended_message():
                sys.stderr.write("agentica: the answer is incomplete (said above); exit code 3\n")
            elif code == exitcodes.INCOMPLETE:
                sys.stderr.write("agentica: stopped at the max-turns limit before the task was finished\n")
        stored = self.app.stored
        if stored is not None and stored.saved and self.format == "text" and sys.stderr.isatty():
            sys.stderr.write(f"session {stored.id} (agentica --resume {stored.id})\n")
        return code
