"""Guardrails on their own: verdicts, replacement, and failing closed."""

from __future__ import annotations

import asyncio
from typing import Any

from agentica_cli.tools import Function, FunctionCall, ToolInputGuardrail, ToolOutputGuardrail
from agentica_cli.tools.user_input import UserInputTool


def check_no_rm_rf(tool_name: str, args: dict[str, Any]) -> bool:
    return not (tool_name == "execute" and "rm -rf" in args.get("command", ""))


def test_input_guardrail_allows_and_blocks() -> None:
    guard = ToolInputGuardrail(check_no_rm_rf)
    ok = asyncio.run(guard.run("execute", {"command": "ls"}))
    blocked = asyncio.run(guard.run("execute", {"command": "rm -rf /"}))
    assert (ok.allowed, blocked.allowed) == (True, False)
    assert blocked.message == "guardrail 'check_no_rm_rf'"


def test_input_guardrail_reason_string_and_async_check() -> None:
    async def no_secrets(tool_name: str, args: dict[str, Any]) -> bool | str:
        return "paths under secrets/ are off limits" if "secrets/" in str(args) else True

    verdict = asyncio.run(ToolInputGuardrail(no_secrets).run("read_file", {"file_path": "secrets/x"}))
    assert (verdict.allowed, verdict.message) == (False, "paths under secrets/ are off limits")


def test_raising_guardrails_fail_closed() -> None:
    def broken(*_: Any) -> bool:
        raise KeyError("oops")

    verdict_in = asyncio.run(ToolInputGuardrail(broken).run("x", {}))
    verdict_out = asyncio.run(ToolOutputGuardrail(broken).run("x", "result"))
    assert verdict_in.allowed is False and verdict_out.allowed is False
    assert verdict_in.message == "guardrail 'broken' failed (KeyError: 'oops')"


def test_output_guardrail_blocks_or_replaces() -> None:
    def redact(tool_name: str, result: str) -> bool | str:
        if "BEGIN PRIVATE KEY" in result:
            return False
        return result.replace("hunter2", "[redacted]") if "hunter2" in result else True

    guard = ToolOutputGuardrail(redact)
    passed = asyncio.run(guard.run("read_file", "plain"))
    replaced = asyncio.run(guard.run("read_file", "password=hunter2"))
    blocked = asyncio.run(guard.run("read_file", "-----BEGIN PRIVATE KEY-----"))
    assert (passed.allowed, passed.replaced) == (True, False)
    assert (replaced.allowed, replaced.replaced, replaced.message) == (True, True, "password=[redacted]")
    assert blocked.allowed is False


def test_user_input_tool_asks_through_its_callback() -> None:
    asked = []

    def answer(prompt: str, options: list[str] | None) -> str:
        asked.append((prompt, options))
        return "yes"

    tool = UserInputTool(input_callback=answer)
    fn: Function = tool.functions["user_input"]
    call = asyncio.run(FunctionCall(fn, "c1", '{"prompt": "Delete it?", "options": ["yes", "no"]}').execute())
    assert call.result == "yes"
    assert asked == [("Delete it?", ["yes", "no"])]
    assert fn.parameters["required"] == ["prompt"]
