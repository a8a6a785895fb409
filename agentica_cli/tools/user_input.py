"""UserInputTool: lets the model ask the person a question mid-run."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from agentica_cli.tools.base import Tool

InputCallback = Callable[[str, "list[str] | None"], Any]


def _ask_on_terminal(prompt: str, options: list[str] | None = None) -> str:
    suffix = f" [{'/'.join(options)}]" if options else ""
    return input(f"{prompt}{suffix} > ")


class UserInputTool(Tool):
    """Asks the user through `input_callback(prompt, options)` (sync or async); defaults to stdin."""

    def __init__(self, input_callback: InputCallback | None = None):
        super().__init__(name="user_input")
        self.input_callback = input_callback or _ask_on_terminal
        self.register(self.user_input)

    async def user_input(self, prompt: str, options: list[str] | None = None) -> str:
        """Ask the user a question and wait for the answer. Use it when you need a decision
        or information only the user has; do not use it for things you can find out yourself.

        Args:
            prompt: The question to show the user.
            options: Allowed answers, if the question is multiple choice.
        """
        if inspect.iscoroutinefunction(self.input_callback):
            answer = await self.input_callback(prompt, options)
        else:
            answer = await asyncio.to_thread(self.input_callback, prompt, options)
        answer = "" if answer is None else str(answer)
        if options and answer not in options:
            return f"The user answered {answer!r}, which is not one of {options}."
        return answer or "(the user gave no answer)"

    def get_system_prompt(self) -> str | None:
        return None
