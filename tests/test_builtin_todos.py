"""write_todos: replaces the list, validates statuses, at most one in_progress."""

from __future__ import annotations

from builtin_support import call_tool

from builtin_tools import BuiltinTodoTool


def test_write_todos_replaces_renders_and_notifies() -> None:
    seen: list[list[dict[str, str]]] = []
    tool = BuiltinTodoTool(on_change=seen.append)
    call = call_tool(tool, "write_todos", todos=[
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
    ])
    assert call.error is None
    assert call.result == "Todos (1/3 completed):\n[x] Read the code\n[>] Fix the bug\n[ ] Run the tests"
    assert tool.todos == [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
    ]
    assert seen == [tool.todos]
    call = call_tool(tool, "write_todos", todos=[{"content": "Only this", "status": "pending"}])
    assert call.result == "Todos (0/1 completed):\n[ ] Only this"
    assert tool.todos == [{"content": "Only this", "status": "pending"}]
    assert call_tool(tool, "write_todos", todos=[]).result == "Todo list is empty."
    assert tool.todos == []


def test_write_todos_rejects_bad_lists_and_keeps_the_old_one() -> None:
    tool = BuiltinTodoTool()
    call_tool(tool, "write_todos", todos=[{"content": "keep me", "status": "pending"}])
    two = call_tool(tool, "write_todos", todos=[
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "in_progress"},
    ])
    assert two.error is not None
    assert "2 items are in_progress (items 1, 2); at most one may be" in two.error
    bad_status = call_tool(tool, "write_todos", todos=[{"content": "a", "status": "done"}])
    assert bad_status.error is not None
    assert "todos.0.status" in bad_status.error and "'pending', 'in_progress' or 'completed'" in bad_status.error
    empty = call_tool(tool, "write_todos", todos=[{"content": "  ", "status": "pending"}])
    assert empty.error is not None and "item 1 has empty content" in empty.error
    assert tool.todos == [{"content": "keep me", "status": "pending"}]


def test_todo_schema_is_exact() -> None:
    schema = BuiltinTodoTool().functions["write_todos"].parameters
    assert schema["required"] == ["todos"]
    item = schema["properties"]["todos"]["items"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert item["required"] == ["content", "status"]
