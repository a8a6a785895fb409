"""Claude Code's `` !`command` `` in a custom command's body: run before the prompt is sent,
its output put in the command's place.

Approval is the one a model's `execute` call of the same command would get from the session's
permission policy (deny rules, sensitive files, plan mode, ask rules, the mode, allow rules,
grants), with the command file's `allowed-tools` entries (`Bash(git status:*)`) counted as allow
rules: such a command runs without a question. Where the policy would ask, the REPL asks (the
same question as for the model's calls) and `-p` refuses (it cannot ask). A refused command's
place gets a note saying so; nothing else stops the prompt.

It runs like execute runs it (the OS sandbox, the scrubbed environment, its process group,
a time limit), in the work folder, but here rather than in an editor's terminal. Its output is
held to execute's output limit and the session's result budget (max_result_tokens; the whole
output is saved to a file past it). What the user is shown of it goes through safe_text.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from agentica_cli.extensions.commands import CustomCommand
from agentica_cli.extensions.tool_names import tool_of_rule

INLINE = re.compile(r"!`([^`\n]+)`")
TIMEOUT_S = 60  # seconds for one command (Claude Code gives these no longer)
SHOWN_LINES = 4  # of each command's output, for the user


def inline_commands(text: str) -> list[str]:
    return [m.group(1).strip() for m in INLINE.finditer(text)]


async def run_inline_commands(text: str, command: CustomCommand, agent: Any,
                              show: Callable[[str], None]) -> str:
    """`text` with each `` !`cmd` `` replaced by what it printed (or why it did not run)."""
    matches = list(INLINE.finditer(text))
    if not matches:
        return text
    execute = _execute_tool(agent)
    outputs: list[str] = []
    for number, match in enumerate(matches, 1):
        line = match.group(1).strip()
        if execute is None:
            outputs.append(f"[`{line}` was not run: this session has no execute tool]")
            show(f"! {line}: not run (no execute tool)")
            continue
        refusal = await _approve(agent, execute, command, line, number)
        if refusal is not None:
            outputs.append(f"[`{line}` was not run: {refusal}]")
            show(f"! {line}: not run ({refusal})")
            continue
        output, summary = await _run(agent, execute, line, number)
        outputs.append(output)
        show(f"! {line}  ({summary})")
        preview = [x for x in output.splitlines() if x.strip()][:SHOWN_LINES]
        for shown in preview:
            show(f"  {shown[:200]}")
    pieces, last = [], 0
    for match, output in zip(matches, outputs, strict=True):
        pieces += [text[last:match.start()], output]
        last = match.end()
    return "".join([*pieces, text[last:]])


def _execute_tool(agent: Any) -> Any:
    from agentica_cli.tools.local.execute import BuiltinExecuteTool

    # Not agent.functions: a command's allowed-tools filter may leave execute out of its turn.
    return next((t for t in getattr(agent, "tools", ()) if isinstance(t, BuiltinExecuteTool)), None)


def _granted_by_command(command: CustomCommand, line: str, work_dir: Any) -> bool:
    from agentica_cli.app.permissions.permission_rules import PermissionRule, RuleError

    for entry in command.allowed_tools or ():
        if tool_of_rule(entry) != "execute":
            continue
        try:
            rule = PermissionRule.parse("allow", entry, str(command.path))
        except RuleError:
            continue
        if rule.matches("execute", {"command": line}, work_dir):
            return True
    return False


async def _approve(agent: Any, execute: Any, command: CustomCommand, line: str, number: int) -> str | None:
    """None when `line` may run; else why not (for the prompt and the user)."""
    function = next(f for f in execute.get_functions() if f.name == "execute")
    call = SimpleNamespace(name="execute", args={"command": line}, function=function, call_id=f"command-{number}")
    from agentica_cli.app.permissions.approvals import PermissionPolicy

    approve = agent.approve  # the PermissionPolicy, a library's hook (a CallableApproval), or None
    if isinstance(approve, PermissionPolicy):  # the CLI's policy
        verdict = approve.evaluate(call)
        if verdict.kind == "allow":
            return None
        if verdict.kind == "ask" and not verdict.why and _granted_by_command(command, line, approve.work_dir):
            return None  # the plain "would ask" case: allowed-tools grants it, as an allow rule would
    elif approve is None:
        return None  # a library agent that approves everything
    decision = approve(call)
    if inspect.isawaitable(decision):
        decision = await decision
    if decision.allowed:
        return None
    return _short(decision.message or "not allowed")


async def _run(agent: Any, execute: Any, line: str, number: int) -> tuple[str, str]:
    """(the text for the prompt, a summary for the user)."""
    from agentica_cli.agent.result_budget import bounded_result, temporary_results_dir
    from agentica_cli.tools.local.process_group import run_in_group

    argv, start = execute.command_launch(line)
    try:
        outcome = await run_in_group(argv, cwd=str(execute.work_dir), env=execute.command_environment(None),
                                     timeout=TIMEOUT_S, start=start)
    except (OSError, asyncio.TimeoutError) as err:
        return f"[`{line}` could not run: {err}]", "could not run"
    limit = execute.max_output_chars
    text = outcome.stdout.render(limit).rstrip("\n")
    if outcome.stderr.total_bytes:
        text = "\n".join(x for x in (text, outcome.stderr.render(max(limit // 3, 1000)).rstrip("\n")) if x)
    code = outcome.returncode
    if outcome.timed_out:
        status = f"timed out after {TIMEOUT_S} s"
        text += f"\n[`{line}` {status}; it was stopped]"
    elif code:
        status = f"exit code {code}"
        text += f"\n[`{line}` ended with {status}]"
    else:
        status = "exit code 0"
    max_tokens = agent.tool_config.max_result_tokens
    if getattr(agent, "results_dir", None) is None:
        agent.results_dir = temporary_results_dir()
    text = bounded_result(text, max_tokens=max_tokens, folder=agent.results_dir, name="command", call_id=str(number))
    lines = text.count("\n") + 1 if text else 0
    return text, f"{status}, {lines} line{'s' if lines != 1 else ''}"


def _short(message: str) -> str:
    """The first sentence of a refusal (written for a model) for the user and the prompt."""
    first = message.split(". ", 1)[0].strip().rstrip(".")
    return first.removeprefix("'execute' was not run: ")[:300]


async def expand_command(command: CustomCommand, arguments: str, agent: Any, work_dir: Any,
                         show: Callable[[str], None]) -> tuple[str, list[str]]:
    """The prompt of `/name arguments`: the body with its arguments, `@path` files attached,
    then `` !`cmd` `` run. Only the body's own commands run: never one that an attached file
    or a command's output happens to contain. Returns (prompt, the attached files' names)."""
    from agentica_cli.app.mentions import attach_mentions

    expanded = command.expand(arguments)
    with_files, attached = attach_mentions(expanded, work_dir)
    body, files = with_files[:len(expanded)], with_files[len(expanded):]  # attach_mentions appends
    return await run_inline_commands(body, command, agent, show) + files, attached


@dataclass(frozen=True)
class CommandTurn:
    """A custom command made ready for its turn: the prompt, the files attached, and what puts
    the agent's model and tool filter back after the turn (the command's `model` and
    `allowed-tools` hold for that turn only)."""

    prompt: str
    attached: list[str]
    restore: Callable[[], None]


async def command_turn(command: CustomCommand, arguments: str, agent: Any, work_dir: Any,
                       show: Callable[[str], None]) -> CommandTurn:
    """`/name arguments` in any front end: the prompt (expand_command), then the command's
    settings applied to `agent` for the turn. The caller runs the turn, then `restore()`."""
    from agentica_cli.app.extension_setup import use_command_settings

    prompt, attached = await expand_command(command, arguments, agent, work_dir, show)
    return CommandTurn(prompt, attached, use_command_settings(agent, command))

