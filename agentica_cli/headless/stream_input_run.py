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
        messages = StdinMessages(sys.stdin.fileno(), on_read_error=lambda text: sys.stderr.write(f"agentica: {text}\n"))
        messages.start()  # read at once: messages sent while MCP servers start are kept
        try:
            agent = self.build_agent(await self.start_mcp())
            for message in (await agent.start_session()).messages:  # SessionStart hooks, before the first turn
                self.progress.line(f"agentica: {safe_text(message)}")
            self.emit_session_line(agent)  # ready: a driver may wait for this line
            from agentica_cli.app.extension_setup import load_extensions

            extensions = load_extensions(self.settings, self.work_dir)
            while (item := await messages.next()) is not None:
                if isinstance(item, InputError):
                    self.emit_json(item.to_dict())
                    sys.stderr.write(f"agentica: {safe_text(item.message)}\n")
                    continue
                await self.run_turn(agent, item, extensions)
            await agent.end_session("other")  # SessionEnd hooks: stdin ended, so did the session
        finally:
            if self.mcp is not None:
                await self.mcp.close()

    async def run_turn(self, agent: Any, message: UserMessage, extensions: Any) -> None:
        self.reset_turn()
        self.turns += 1
        self.in_turn = True
        prompt, restore = message.text, None
        from agentica_cli.app.extension_setup import find_command, use_command_settings

        found = find_command(prompt, extensions)
        if found is not None:  # "/review app.py": the custom command, its model and tools, for this turn
            from agentica_cli.app.command_shell import expand_command

            command, arguments = found
            prompt, _ = await expand_command(command, arguments, agent, self.work_dir,
                                             lambda line: self.progress.line(safe_text(line)))
            restore = use_command_settings(agent, command)
        try:
            await self.stream_turn(agent, prompt, message.images)
        finally:
            if restore is not None:
                restore()
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
        if self.checkpoints is not None:
            self.checkpoints.prune()  # old sessions' snapshots go
        if not self.turns and not self.interrupted and self.error is None:
            sys.stderr.write('agentica: no user message on stdin (--input-format stream-json reads lines like '
                             '{"type": "user", "message": {"role": "user", "content": "..."}})\n')
            return exitcodes.USAGE_ERROR
        return self.exit_code()
