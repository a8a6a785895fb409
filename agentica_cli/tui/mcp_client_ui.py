"""The CLI's side of MCP client features: roots, elicitation forms, sampling approval and
server prompts as slash commands (`/mcp__server__prompt args`).

In the REPL a server's request for input is a small form read line by line, and a sampling
request is shown and approved (y/n) before it goes to the session's model. `agentica -p`
cannot ask anyone: it declines both, says so on stderr, and the run goes on.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentica_cli.cli.safe_text import safe_text
from agentica_cli.tools.mcp.client_features import (
    ElicitAnswer,
    ElicitRequest,
    McpClientHandlers,
    SamplingRequest,
    coerce_form_value,
)

PREVIEW_CHARS = 600


def roots_for(work_dir: Path, allowed_dirs: Iterable[Path]) -> list[Path]:
    """The folders MCP servers are told they may work in: the work folder and --add-dir folders."""
    roots = [Path(work_dir).resolve()]
    for extra in allowed_dirs:
        path = Path(extra).expanduser().resolve()
        if path not in roots:
            roots.append(path)
    return roots


def print_mode_handlers(work_dir: Path, allowed_dirs: Sequence[Path]) -> McpClientHandlers:
    """-p: roots, and a clean refusal of what would need a person."""

    async def decline_input(request: ElicitRequest) -> ElicitAnswer:
        sys.stderr.write(f"agentica: MCP server '{request.server}' asked for input "
                         f"({safe_text(request.message)[:200]}); declined: -p cannot ask\n")
        return ElicitAnswer("decline")

    async def decline_sampling(request: SamplingRequest) -> str | None:
        sys.stderr.write(f"agentica: MCP server '{request.server}' asked to use the model; declined: "
                         "-p cannot ask for approval\n")
        return None

    return McpClientHandlers(roots=roots_for(work_dir, allowed_dirs), elicit=decline_input, sample=decline_sampling)


def _field_hint(schema: dict[str, Any]) -> str:
    from agentica_cli.tools.mcp.client_features import field_options

    hint = ""
    if schema.get("type") == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        options = field_options(items)
        hint = " (comma-separated" + (": " + "/".join(str(o) for o in options) if options else "") + ")"
    elif (options := field_options(schema)) is not None:
        hint = " [" + "/".join(str(o) for o in options) + "]"
    else:
        kind = schema.get("type", "string")
        hint = {"boolean": " [y/n]", "integer": " (a whole number)", "number": " (a number)"}.get(kind, "")
    if "default" in schema:
        hint += f" (Enter: {schema['default']})"
    return hint


def repl_handlers(repl: Any) -> McpClientHandlers:
    """Forms and approvals in the REPL, one at a time with tool approvals (approval_lock)."""
    from rich.text import Text

    async def ask(message: str) -> str | None:
        try:
            with repl.terminal_for_question():
                return await repl.ask_line(message)
        except (KeyboardInterrupt, EOFError):
            return None

    async def elicit(request: ElicitRequest) -> ElicitAnswer:
        async with repl.approval_lock:
            repl.ensure_renderer()
            repl.renderer.pause()
            console = repl.console
            console.print(Text(f"MCP server '{request.server}' asks: ", style="bold yellow")
                          + Text(safe_text(request.message)))
            if request.url is not None:
                console.print(Text(f"  {safe_text(request.url)}", style="underline"))
                reply = await ask("Open it and continue? [y/N] ")
                return ElicitAnswer("accept" if (reply or "").strip().lower() in ("y", "yes") else "decline")
            console.print(Text("  (Enter on a required field declines; Ctrl-C cancels)", style="dim"))
            answers: dict[str, Any] = {}
            for name, schema in request.properties.items():
                required = name in request.required
                label = schema.get("title") or name
                note = "" if required else " (optional)"
                if schema.get("description"):
                    console.print(Text(f"  {safe_text(str(schema['description']))}", style="dim"))
                while True:
                    raw = await ask(f"  {safe_text(str(label))}{note}{_field_hint(schema)}: ")
                    if raw is None:
                        return ElicitAnswer("cancel")
                    if not raw.strip():
                        if "default" in schema:
                            answers[name] = schema["default"]
                        elif required:
                            console.print(Text("  → declined", style="dim"))
                            return ElicitAnswer("decline")
                        break
                    try:
                        answers[name] = coerce_form_value(schema, raw)
                        break
                    except ValueError as err:
                        console.print(Text(f"  expected {err}", style="red"))
            console.print(Text("  → sent", style="dim"))
            return ElicitAnswer("accept", answers)

    async def sample(request: SamplingRequest) -> str | None:
        from agentica_cli.cli.approval_prompt import Choice, read_choice

        async with repl.approval_lock:
            repl.ensure_renderer()
            repl.renderer.pause()
            console = repl.console
            console.print(Text(f"MCP server '{request.server}' wants to ask the model "
                               f"(at most {request.max_tokens} tokens):", style="bold yellow"))
            text = "\n".join(f"[{role}] {body}" for role, body in request.messages)
            preview = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"
            console.print(Text(safe_text(preview)))
            with repl.terminal_for_question():
                choice = await read_choice([Choice("y", "yes", "once"), Choice("n", "no", "no"),
                                            Choice("esc", "no", "stop")])
            console.print(Text(f"  → {'yes' if choice == 'once' else 'no'}", style="dim"))
        if choice != "once":
            return None
        model = repl.agent.model if repl.agent is not None else repl.model
        messages: list[dict[str, Any]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        messages += [{"role": role if role in ("user", "assistant") else "user", "content": body}
                     for role, body in request.messages]
        response = await model.response(messages, None)
        return (response.content or "")[: request.max_tokens * 4]  # about max_tokens tokens

    return McpClientHandlers(roots=roots_for(repl.work_dir, repl.allowed_dirs), elicit=elicit, sample=sample)


RESOURCE_MENTION = re.compile(r"(?:^|(?<=\s))@([A-Za-z0-9_-]+):(\S+)")
MAX_RESOURCE_CHARS = 100_000


async def attach_resources(text: str, servers: Any) -> tuple[str, list[str], list[str]]:
    """`explain @docs:file:///readme.md`: the message plus the resource's text. Returns the
    text, what was attached and what could not be read (with why)."""
    attached: list[str] = []
    failed: list[str] = []
    blocks: list[str] = []
    if servers is None:
        return text, attached, failed
    for match in RESOURCE_MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(".,;!?)")
        tool = servers.ready_tool(server) if server in servers.names else None
        if tool is None or f"{server}:{uri}" in attached:
            continue
        try:
            body = await tool.read_resource(uri)
        except Exception as err:
            failed.append(f"{server}:{uri} ({err})")
            continue
        attached.append(f"{server}:{uri}")
        blocks.append(f'<resource server="{server}" uri="{uri}">\n{body[:MAX_RESOURCE_CHARS]}\n</resource>')
    if blocks:
        text = text + "\n\n" + "\n\n".join(blocks)
    return text, attached, failed


def prompt_arguments(prompt: Any, text: str) -> dict[str, str]:
    """`/mcp__s__p a b key=value`: words fill the prompt's arguments in order, key=value by
    name. Raises ValueError naming a missing required argument or an unknown name."""
    declared = [a.name for a in (prompt.arguments or ())]
    required = [a.name for a in (prompt.arguments or ()) if a.required]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in shlex.split(text) if text.strip() else []:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            values[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in values]
    if len(positional) > len(free):
        if not free:
            raise ValueError(f"/{prompt.name} takes no more arguments (it has: {', '.join(declared) or 'none'})")
        positional[len(free) - 1:] = [" ".join(positional[len(free) - 1:])]  # the last one takes the rest
    values.update(zip(free, positional, strict=False))
    missing = [name for name in required if name not in values]
    if missing:
        raise ValueError(f"missing argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)} "
                         f"(usage: {usage(prompt)})")
    return values


def usage(prompt: Any) -> str:
    args = [a.name if a.required else f"[{a.name}]" for a in (prompt.arguments or ())]
    return " ".join(args) or "(no arguments)"


async def prompt_text(tool: Any, prompt: Any, rest: str) -> str:
    """The text a prompt command sends as the user's message."""
    messages = await tool.get_prompt(prompt.name, prompt_arguments(prompt, rest))
    return "\n\n".join(text for _, text in messages)
