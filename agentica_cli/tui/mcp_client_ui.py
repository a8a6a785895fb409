"""The REPL's side of MCP client features: a server's request for input is a small form read
line by line, and a sampling request is shown and approved (y/n) before it goes to the
session's model (ReplFrontEnd's elicit and sample). Roots, -p's refusals and server prompts
are app/mcp_client.py's.
"""

from __future__ import annotations

from typing import Any

from agentica_cli.app.safe_text import safe_text
from agentica_cli.tools.mcp.client_features import (
    ElicitAnswer,
    ElicitRequest,
    SamplingRequest,
    coerce_form_value,
)

PREVIEW_CHARS = 600


def _field_hint(schema: dict[str, Any]) -> str:
    from agentica_cli.tools.mcp.client_features import field_options

    hint = ""
    if schema.get("type") == "array":
        items: dict[str, Any] = schema["items"] if isinstance(schema.get("items"), dict) else {}
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


async def _ask(repl: Any, message: str) -> str | None:
    try:
        with repl.terminal_for_question():
            return str(await repl.ask_line(message))
    except (KeyboardInterrupt, EOFError):
        return None


async def ask_form(repl: Any, request: ElicitRequest) -> ElicitAnswer:
    """A server's request for input, read in the REPL one field at a time (one question at a
    time with tool approvals: approval_lock)."""
    from rich.text import Text

    async with repl.approval_lock:
        repl.ensure_renderer()
        repl.renderer.pause()
        console = repl.console
        console.print(Text(f"MCP server '{request.server}' asks: ", style="bold yellow")
                      + Text(safe_text(request.message)))
        if request.url is not None:
            console.print(Text(f"  {safe_text(request.url)}", style="underline"))
            reply = await _ask(repl, "Open it and continue? [y/N] ")
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
                raw = await _ask(repl, f"  {safe_text(str(label))}{note}{_field_hint(schema)}: ")
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


async def approve_sampling(repl: Any, request: SamplingRequest) -> str | None:
    """A server asks to use the session's model: shown, approved (y/n), then sent."""
    from rich.text import Text

    from agentica_cli.tui.approval_prompt import Choice, read_choice

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
    model = repl.app.model  # the agent's too (AppSession.use_model keeps them one)
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    messages += [{"role": role if role in ("user", "assistant") else "user", "content": body}
                 for role, body in request.messages]
    response = await model.response(messages, None)
    return (response.content or "")[: request.max_tokens * 4]  # about max_tokens tokens
