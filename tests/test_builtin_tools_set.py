"""get_builtin_tools: the contract names, parameters, flags, exclusion and the prompt budget."""

from __future__ import annotations

import json
from pathlib import Path

from agentica_cli.deep import DeepAgent
from agentica_cli.models import OpenAIChat
from builtin_tools import (
    BuiltinExecuteTool,
    BuiltinFetchUrlTool,
    BuiltinFileTool,
    BuiltinTaskTool,
    BuiltinTodoTool,
    BuiltinWebSearchTool,
    get_builtin_tools,
)

CONTRACT = {
    "ls": (["path"], []),
    "read_file": (["file_path", "offset", "limit"], ["file_path"]),
    "write_file": (["file_path", "content"], ["file_path", "content"]),
    "edit_file": (["file_path", "old_string", "new_string", "replace_all"], ["file_path", "old_string", "new_string"]),
    "multi_edit_file": (["file_path", "edits"], ["file_path", "edits"]),
    "glob": (["pattern", "path"], ["pattern"]),
    "grep": (["pattern", "path", "glob", "ignore_case", "output_mode", "context", "max_results"], ["pattern"]),
    "execute": (["command", "timeout", "background", "sandbox", "network", "reason"], ["command"]),
    "read_background_output": (["id"], ["id"]),
    "stop_background": (["id"], ["id"]),
    "write_todos": (["todos"], ["todos"]),
    "web_search": (["query", "max_results"], ["query"]),
    "fetch_url": (["url", "max_chars"], ["url"]),
    "task": (["description", "prompt", "agent"], ["description", "prompt"]),
}
READ_ONLY = {"ls", "read_file", "glob", "grep", "web_search", "fetch_url", "read_background_output"}
CONCURRENT = READ_ONLY | {"task"}  # sub-agents run side by side; their own calls are approved one by one
DESTRUCTIVE = {"write_file", "edit_file", "multi_edit_file", "execute"}


def test_names_parameters_and_flags_are_the_contract(tmp_path: Path) -> None:
    tools = get_builtin_tools(tmp_path)
    assert [type(t) for t in tools] == [BuiltinFileTool, BuiltinExecuteTool, BuiltinTodoTool, BuiltinWebSearchTool,
                                        BuiltinFetchUrlTool, BuiltinTaskTool]
    functions = {name: fn for tool in tools for name, fn in tool.functions.items()}
    assert set(functions) == set(CONTRACT)
    for name, (params, required) in CONTRACT.items():
        schema = functions[name].parameters
        assert list(schema["properties"]) == params, name
        assert schema.get("required", []) == required, name
        fn = functions[name]
        assert fn.is_read_only == (name in READ_ONLY), name
        assert fn.concurrency_safe == (name in CONCURRENT), name
        assert fn.is_destructive == (name in DESTRUCTIVE), name
        assert fn.description.strip(), name
    assert functions["grep"].parameters["properties"]["output_mode"]["enum"] == [
        "content", "files_with_matches", "count"
    ]


def test_exclude_drops_tools_and_single_functions(tmp_path: Path) -> None:
    tools = get_builtin_tools(tmp_path, exclude=("task", "web_search", "execute", "write_file"))
    names = {name for tool in tools for name in tool.functions}
    # execute's background-process functions go with it: nothing else could start one
    assert names == set(CONTRACT) - {"task", "web_search", "execute", "write_file", "read_background_output",
                                     "stop_background"}
    assert not any(isinstance(t, (BuiltinTaskTool, BuiltinWebSearchTool, BuiltinExecuteTool)) for t in tools)


def test_whole_default_prompt_stays_under_16kb(tmp_path: Path) -> None:
    agent = DeepAgent(OpenAIChat(id="m", api_key="sk-x", base_url="http://127.0.0.1:9/v1"), work_dir=tmp_path)
    schemas = json.dumps([fn.to_openai() for fn in agent.functions.values()], ensure_ascii=False)
    total = len(agent.system_prompt().encode()) + len(schemas.encode())
    assert set(agent.functions) == set(CONTRACT)
    assert total < 16 * 1024, f"system prompt + tool schemas = {total} bytes"


def test_readme_builtin_tools_example_runs(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from readme_support import DOCS, python_blocks

    block = python_blocks("Builtin tools", DOCS / "tools.md")[0]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-readme-example")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(block, str(DOCS / "tools.md"), "exec"), namespace)
    agent = namespace["agent"]
    assert set(agent.functions) == set(CONTRACT) - {"web_search", "task"}  # type: ignore[attr-defined]
    file_tool = next(t for t in namespace["tools"] if isinstance(t, BuiltinFileTool))  # type: ignore[attr-defined]
    # relative folders are relative to the current directory, like every path a program is given
    assert file_tool.sandbox.roots == ((tmp_path / "my-project").resolve(), (tmp_path.parent / "shared-lib").resolve())


def test_folders_are_resolved_once_against_the_cwd_and_shared_by_every_tool_and_sub_agent(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    (home / "proj").mkdir(parents=True)
    (tmp_path / "lib").mkdir()
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    tools = get_builtin_tools("~/proj", allowed_dirs=["lib"])  # "lib" is ./lib, not ~/proj/lib
    by_type = {type(t): t for t in tools}
    roots = (home / "proj", tmp_path / "lib")
    assert by_type[BuiltinFileTool].sandbox.roots == roots
    assert by_type[BuiltinExecuteTool].work_dir == home / "proj"
    task = by_type[BuiltinTaskTool]
    assert (task.work_dir, task.allowed_dirs) == (str(roots[0]), (str(roots[1]),))
    # a later chdir changes nothing: the sub-agent's file tool gets the very same roots
    monkeypatch.chdir(elsewhere)
    sub_tools = task.sub_agent_tools(parent=None)
    sub_files = next(t for t in sub_tools if isinstance(t, BuiltinFileTool))
    assert sub_files.sandbox.roots == roots
    assert next(t for t in sub_tools if isinstance(t, BuiltinExecuteTool)).work_dir == home / "proj"
