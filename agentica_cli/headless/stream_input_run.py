"""`agentica -p --input-format stream-json --output-format stream-json`: a conversation driven
by another program. Each user message on stdin (stream_input.py) is a turn of one session,
run in order; one that arrives while a turn runs waits for it. Each turn writes its events
and then a `result` line (the -p result object, for that turn); a line that is not a user
message writes an `error` line (`kind` "input", `line`) and the run goes on. At the end of
stdin the session ends; the exit code is the last turn's (2 when stdin held no message).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agentica_cli.app import exitcodes
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.settings.config import Settings
from agentica_cli.headless.printers import OutputClosed, PrintRun, run_print
from agentica_cli.headless.stream_input import InputError, StdinMessages, UserMessage


def run_stream_input(args: argparse.Namespace, settings: Settings, work_dir: Path) -> int:
    return run_print(args, settings, work_dir, "", read_stdin=False, runner_class=StreamInputRun)


class StreamInputRun(PrintRun):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.turns = 0  # user messages run so far
        self.in_turn = False  # a turn has started and its result line is not written yet

    async def drive_turns(self) -> None:
        def read_error(text: str) -> None:
            sys.stderr.write(f"agentica: {text}\n")

        messages = StdinMessages(sys.stdin.fileno(), on_read_error=read_error)
        messages.start()  # read at once: messages sent while MCP servers start are kept
        try:
            agent = await self.app.start()  # MCP servers, the agent, SessionStart hooks (told on stderr)
            await self.app.session_start_messages()  # before the first turn
            self.emit_session_line(agent)  # ready: a driver may wait for this line
            agent.open_checkpoints()  # while the first prompt is awaited (a batch prepares sessions ahead)
            while (item := await messages.next()) is not None:
                if isinstance(item, InputError):
                    self.emit_json(item.to_dict())
                    sys.stderr.write(f"agentica: {safe_text(item.message)}\n")
                    continue
                await self.run_turn(item)
        finally:
            await self.app.close()  # stdin ended, so did the session: SessionEnd hooks, MCP servers

    async def run_turn(self, message: UserMessage) -> None:
        self.reset_turn()
        self.turns += 1
        self.in_turn = True
        found = self.app.find_command(message.text)
        if found is not None:  # "/review app.py": the custom command, its model and tools, for this turn
            events = self.app.run_command(found[0].name, found[1], images=message.images, show=self.show_line)
        else:
            events = self.app.turn(message.text, message.images)
        await self.stream_events(events)
        self.in_turn = False
        self.emit_json(self.result_object())
        self.say_blocked()

    def run(self, prompt: str = "") -> int:
        """The turns of stdin's messages (`prompt` is unused: launch refuses one)."""
        if not self.run_driver(self.drive_turns()):
            return self.output_closed()
        try:
            if self.in_turn:  # the turn that an interruption or a failure ended still gets its result
                self.emit_json(self.result_object())
        except OutputClosed:
            return self.output_closed()
        if not self.turns and not self.interrupted and self.error is None:
            sys.stderr.write('agentica: no user message on stdin (--input-format stream-json reads lines like '
                             '{"type": "user", "message": {"role": "user", "content": "..."}})\n')
            return exitcodes.USAGE_ERROR
        return self.exit_code()
