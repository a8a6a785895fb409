"""BuiltinTodoTool: the model's task list for the current job, readable by the CLI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from typing_extensions import TypedDict

from agentica_cli.tools.base import Tool

TodoStatus = Literal["pending", "in_progress", "completed"]
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoItem(TypedDict):
    """One task.

    Args:
        content: What to do, imperative and short.
        status: pending, in_progress or completed.
    """

    content: str
    status: TodoStatus


class TodoListError(ValueError):
    """The new list breaks a rule; the old list stays."""


def render_todos(todos: list[dict[str, str]]) -> str:
    if not todos:
        return "Todo list is empty."
    done = sum(1 for t in todos if t["status"] == "completed")
    lines = [f"Todos ({done}/{len(todos)} completed):"]
    lines += [f"{_MARKS[t['status']]} {t['content']}" for t in todos]
    return "\n".join(lines)


class BuiltinTodoTool(Tool):
    """Keeps `todos` (a list of {content, status}); `on_change(todos)` lets a UI redraw it."""

    def __init__(self, on_change: Callable[[list[dict[str, str]]], None] | None = None):
        super().__init__(name="todos")
        self.todos: list[dict[str, str]] = []
        self.on_change = on_change
        self.register(self.write_todos)

    def get_system_prompt(self) -> str:
        return (
            "For work with 3 or more steps, keep a todo list with write_todos: mark a step "
            "in_progress before starting it and completed as soon as it is done."
        )

    def write_todos(self, todos: list[TodoItem]) -> str:
        """Replace the todo list with this one (send the whole list every time).

        At most one item may be in_progress. Returns the list as shown to the user.

        Args:
            todos: All items, in order.
        """
        items: list[dict[str, str]] = []
        for number, todo in enumerate(todos, start=1):
            content = str(todo["content"]).strip()
            if not content:
                raise TodoListError(f"item {number} has empty content.")
            if todo["status"] not in _MARKS:
                raise TodoListError(f"item {number} has status {todo['status']!r}; use one of {', '.join(_MARKS)}.")
            items.append({"content": content, "status": todo["status"]})
        in_progress = [n for n, t in enumerate(items, start=1) if t["status"] == "in_progress"]
        if len(in_progress) > 1:
            raise TodoListError(
                f"{len(in_progress)} items are in_progress (items {', '.join(map(str, in_progress))}); "
                "at most one may be. The list was not changed."
            )
        self.todos = items
        if self.on_change is not None:
            self.on_change(list(items))
        return render_todos(items)
