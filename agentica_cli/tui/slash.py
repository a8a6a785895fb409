"""The REPL's slash commands: /help, /clear, /compact, /model, /tools, /todos, /cost, /context,
/export, /status, /resume, /permissions, /mcp, /ps, /kill, /exit (/context and /export render what
app/session_views computes). Each `cmd_NAME(rest)` works on the running REPL (a ReplHost)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentica_cli.app.commands import help_texts
from agentica_cli.app.safe_text import safe_text
from agentica_cli.app.settings.config import PERMISSION_MODES
from agentica_cli.tui.terminal import home_relative, plain

if TYPE_CHECKING:
    from agentica_cli.tui.repl_host import ReplHost

# The REPL's share of app/commands.py's registry (name -> help), in its order.
COMMANDS: dict[str, str] = help_texts("tui")
# Every key the REPL binds (prompt_input.make_key_bindings, turn_input, the approval question) and
# prompt_toolkit's own editing keys users ask for; a test checks each binding is listed here.
KEYS: list[tuple[str, str]] = [
    ("Enter", "send (with a completion menu open: take the completion)"),
    ("Alt+Enter, Esc Enter, Ctrl-J, trailing \\", "new line"),
    ("Tab", "take the only completion, or the next one (menus open as / and @ are typed)"),
    ("Shift+Tab", "next permission mode: default, accept-edits, plan"),
    ("Esc", "during a turn: interrupt it; at a question: no, and stop"),
    ("Ctrl-C", "cancel the running turn or !command, clear the line, or (twice at an empty line) exit"),
    ("Ctrl-D", "exit"),
    ("Ctrl-O", "show the whole output of the last tool call (/expand)"),
    ("Up / Down", "input history (kept across sessions)"),
    ("Ctrl-R", "search the input history backwards; Enter sends the match, Esc edits it"),
    ("Ctrl-G", "edit the input in $VISUAL / $EDITOR"),
    ("Ctrl-V", "paste an image from the clipboard (Alt+V on Windows)"),
    ("typing during a turn", "queued: Enter sends it when the turn ends"),
]
INPUT_HELP: list[tuple[str, str]] = [
    ("@path", "attach a file (@folder/ a listing)"),
    ("!command", "run a shell command; its output goes with your next message"),
]
KEY_COLUMN = 24  # the width of the key column of /help's tables


def help_rows(rows: list[tuple[str, str]], width: int = KEY_COLUMN) -> list[str]:
    """`  key   meaning` rows; a key too long for its column gets a row of its own."""
    out: list[str] = []
    for key, meaning in rows:
        if len(key) > width:
            out += [f"  {key}", f"  {'':<{width}} {meaning}"]
        else:
            out.append(f"  {key:<{width}} {meaning}")
    return out


class SlashCommands:
    def __init__(self, repl: ReplHost):
        self.repl = repl

    async def run(self, line: str) -> bool:
        """Run a slash command; False means exit."""
        name, _, rest = line[1:].partition(" ")
        rest = rest.strip()
        handler = getattr(self, f"cmd_{name}", None) if name in COMMANDS else None
        custom = self.repl.session().find_command(line) if handler is None else None
        if custom is not None:
            from agentica_cli.tui.extension_commands import run_custom_command

            await run_custom_command(self.repl, *custom)
            return True
        if handler is None:
            import difflib

            close = difflib.get_close_matches(name, [*COMMANDS, *self.repl.extensions.commands], n=1)
            hint = f" Did you mean /{close[0]}?" if close else ""
            plain(f"Unknown command /{name}.{hint} Type /help for the list.", "33")
            return True
        result = await handler(rest)
        return result is not False

    async def run_mcp_prompt(self, line: str) -> bool:
        """`/mcp__server__prompt args`: the server's prompt becomes this turn's message."""
        from agentica_cli.app.mcp_client import prompt_text

        name, _, rest = line[1:].partition(" ")
        repl = self.repl
        mcp = repl.mcp_servers()
        commands = mcp.prompt_commands() if mcp is not None else {}
        if name not in commands:
            known = ", ".join(f"/{n}" for n in commands) or "none (see /mcp)"
            plain(f"Unknown MCP prompt /{name}. Prompts: {known}", "33")
            return True
        tool, prompt = commands[name]
        try:
            text = await prompt_text(tool, prompt, rest)
        except Exception as err:  # a bad argument, or the server's error
            plain(f"/{name}: {err}", "31")
            return True
        await repl.run_turn(text)
        return True

    async def cmd_help(self, rest: str) -> None:
        plain("commands:", "1")
        for name, text in COMMANDS.items():
            plain(f"  /{name:<12} {text}", hang=16)  # a long meaning wraps under itself
        from agentica_cli.tui.extension_commands import show_help

        show_help(self.repl.extensions.commands, COMMANDS)
        plain("keys:", "1")
        for row in help_rows(KEYS):
            plain(row, hang=KEY_COLUMN + 3)
        plain("input:", "1")
        for row in help_rows(INPUT_HELP):
            plain(row, hang=KEY_COLUMN + 3)

    async def cmd_agents(self, rest: str) -> None:
        from agentica_cli.tui.extension_commands import show_agents

        show_agents(self.repl)

    async def cmd_skills(self, rest: str) -> None:
        from agentica_cli.tui.extension_commands import show_skills

        show_skills(self.repl)

    async def cmd_init(self, rest: str) -> None:
        from agentica_cli.tui.init_command import run_init

        await run_init(self.repl)

    async def cmd_exit(self, rest: str) -> bool:
        return False

    async def cmd_clear(self, rest: str) -> None:
        repl = self.repl
        app = repl.session()
        await app.clear()  # SessionEnd hooks, a new stored session, grants forgotten, counters from zero
        repl.pending_context.clear()
        plain("Started a new conversation.", "2")
        await app.wait_session_start()  # what the new conversation's SessionStart hooks say, before the prompt

    async def cmd_compact(self, rest: str) -> None:
        repl = self.repl
        agent = await repl.ensure_agent()
        if not agent.messages:
            plain("Nothing to compact yet.", "2")
            return
        before = len(agent.messages)
        plain("Compacting…", "2")
        try:
            summary = await agent.compact(instructions=rest)  # `/compact focus on the tests`
        except Exception as exc:  # a failed request or an unusable (empty, tool call) summary
            reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            plain(f"Could not compact: {safe_text(reason)}. The conversation is unchanged ({before} messages).", "31")
            return
        if summary is None:
            plain("Nothing to compact yet: the conversation is short.", "2")
            return
        repl.session().context_tokens = None  # the last request's size no longer says how full the context is
        plain(f"Compacted: {before} messages -> {len(agent.messages)}.", "2")

    async def cmd_model(self, rest: str) -> None:
        repl = self.repl
        from agentica_cli.app.runtime import model_label

        if not rest:
            from agentica_cli.tui.model_listing import pick_model

            rest = await pick_model(repl) or ""
            if not rest:
                return
        switched = repl.session().switch_model(rest)  # a failed name leaves the settings as they were
        if not switched.ok:
            plain(switched.problem, "31")
            return
        plain(f"Switched to {model_label(switched.model)}.", "2")

    async def cmd_tools(self, rest: str) -> None:
        repl = self.repl
        agent = await repl.ensure_agent()
        from agentica_cli.app.safe_text import safe_text

        policy = repl.session().policy
        plain(f"tools, and what a call does in mode {policy.mode}:", "2")
        for name, function in agent.functions.items():
            flags = [policy.describe_tool(function)]
            if getattr(function, "is_read_only", False):
                flags.append("read-only")
            description = (function.description or "").strip().splitlines()
            summary = safe_text(description[0] if description else "", keep_newlines=False)  # MCP servers write these
            plain(f"  {safe_text(name):<22} {summary[:70]}  [{', '.join(flags)}]")
        from agentica_cli.app.toolkit_setup import status_lines

        toolkit_lines = status_lines(repl.settings)
        if toolkit_lines:
            plain("toolkits (--tools, [tools] enable):", "2")
            for line in toolkit_lines:
                plain(line)

    async def cmd_todos(self, rest: str) -> None:
        repl = self.repl
        todos = self._todo_items()
        if not todos:
            plain("No todos yet.", "2")
            return
        repl.ensure_renderer()
        repl.renderer.show_todos(todos)

    def _todo_items(self) -> list[Any]:
        repl = self.repl
        agent = repl.session().agent
        if agent is not None:
            for tool in getattr(agent, "tools", []) or []:
                items = getattr(tool, "todos", None)
                if items:
                    return [t if isinstance(t, dict) else getattr(t, "__dict__", t) for t in items]
        return list(repl.renderer.todos or []) if repl.renderer is not None else []

    async def cmd_expand(self, rest: str) -> None:
        self.repl.expand_last_output()

    # /diff /undo /redo /rewind: checkpoint_commands.py
    async def cmd_diff(self, rest: str) -> None:
        await self.repl.checkpoint_commands.diff(rest)

    async def cmd_undo(self, rest: str) -> None:
        await self.repl.checkpoint_commands.undo(rest)

    async def cmd_redo(self, rest: str) -> None:
        await self.repl.checkpoint_commands.redo(rest)

    async def cmd_rewind(self, rest: str) -> None:
        await self.repl.checkpoint_commands.rewind(rest)

    async def cmd_cost(self, rest: str) -> None:
        app = self.repl.session()
        plain(app.usage.describe())
        from agentica_cli.app.prices import format_dollars

        cost = app.cost
        if cost.known:
            plain(f"cost this session: {format_dollars(cost.dollars)} ({cost.requests} requests)")
        elif cost.requests:
            model = safe_text(getattr(app.model, "id", "") or "this model", keep_newlines=False)
            priced = f"{format_dollars(cost.dollars)} for {cost.requests - cost.unpriced} of {cost.requests} requests; "
            plain(f"cost: unknown ({priced if cost.dollars else ''}no price for {model}: "
                  "add it to [prices] in config.toml)", "2")

    async def cmd_context(self, rest: str) -> None:
        from agentica_cli.app.session_views.context_usage import context_usage
        from agentica_cli.tui.context_view import show_context

        repl = self.repl
        app = repl.session()
        agent = await repl.ensure_agent()
        await app.sync_mcp_tools()
        found = repl.instructions
        usage = context_usage(
            agent,
            mcp_tools=app.mcp.tools if app.mcp is not None else (),
            instruction_texts=list(getattr(agent, "instruction_texts", ())),
            instruction_names=[f.path.name for f in found.files] if found is not None else [],
            reported_tokens=app.context_tokens,
            compact_keep=agent.tool_config.compact_keep_messages,
        )
        show_context(usage)

    async def cmd_export(self, rest: str) -> None:
        """/export [FILE] [--json] [--force]: the conversation as Markdown (or JSON)."""
        from agentica_cli.app.runtime import model_label
        from agentica_cli.app.session_views.export import ExportError, ExportMeta, export_conversation

        repl = self.repl
        words = rest.split()
        as_json, force = "--json" in words, "--force" in words
        names = [w for w in words if w not in ("--json", "--force")]
        if len(names) > 1 or any(w.startswith("--") for w in names):
            plain("Usage: /export [FILE] [--json] [--force]", "33")
            return
        app = repl.session()
        messages = app.history
        if not messages:
            plain("Nothing to export yet.", "2")
            return
        stored = app.stored
        meta = ExportMeta(stored.id if stored is not None and stored.saved else None,
                          str(repl.work_dir), model_label(app.model))
        try:
            done = export_conversation(messages, meta, names[0] if names else None, repl.work_dir,
                                       repl.allowed_dirs, as_json=as_json, overwrite=force)
        except ExportError as err:
            plain(f"Not exported: {err}.", "31")
            return
        verb = "Replaced" if done.replaced else "Wrote"
        plain(f"{verb} {home_relative(done.path)} ({done.messages} messages).", "2")

    async def cmd_status(self, rest: str) -> None:
        from agentica_cli.app.runtime import model_label
        from agentica_cli.app.sandbox_settings import sandbox_line, unconfined_warning

        repl = self.repl
        app = repl.session()
        model = app.model
        plain(f"model: {safe_text(model_label(model))}")
        from agentica_cli.app.runtime import model_status_lines, provider_name

        provider = getattr(model, "provider", "") or provider_name(repl.settings)
        plain(f"  provider: {safe_text(str(provider))}", "2")
        plain(f"  base URL: {safe_text(str(getattr(model, 'base_url', None) or 'the provider default'))}", "2")
        for line in model_status_lines(model)[1:]:  # the first is the endpoint, said above
            plain(f"  {safe_text(line)}", "2", hang=4)
        session = app.stored
        if repl.args.no_session:
            plain("session: not saved (--no-session)")
        elif session is None or not getattr(session, "saved", True):
            plain("session: new, saved from the first message")
        else:
            plain(f"session: {session.id} (agentica --resume {session.id})", hang=9)
        folders = [home_relative(repl.work_dir), *(home_relative(Path(p)) for p in repl.allowed_dirs)]
        plain("folders: " + ", ".join(safe_text(str(f)) for f in folders), hang=9)
        from agentica_cli.app.instructions import loaded_summary

        found = repl.instructions
        loaded = loaded_summary(found, repl.work_dir) if found is not None and found.files else ""
        plain(f"instructions: {loaded or 'none (AGENTS.md, CLAUDE.md)'}", hang=14)
        plain(f"MCP servers: {self._mcp_summary()}", hang=13)
        plain(f"permission mode: {app.policy.mode}")
        sandbox = app.policy.sandbox
        if sandbox is None:
            plain("sandbox: off")
            return
        warning = unconfined_warning(sandbox)
        plain(sandbox_line(sandbox), "33" if warning or not sandbox.confines else "")
        if warning:
            plain(f"  {warning}", "33")
        elif sandbox.confines:
            writable = ", ".join(safe_text(str(p)) for p in sandbox.policy.writable(None)) or "none"
            plain(f"  writable: {writable} and a private TMPDIR; network: "
                  f"{'on' if sandbox.policy.network else 'off'}", "2")

    def _mcp_summary(self) -> str:
        """`docs (ready, 3 tools), db (failed)` for /status; what is configured when none started."""
        repl = self.repl
        mcp = repl.mcp_servers()
        if mcp is not None and repl.session().mcp_started:
            parts = []
            for status in mcp.statuses():
                tools = f", {len(status.tools)} tool{'s' if len(status.tools) != 1 else ''}" if status.tools else ""
                parts.append(f"{safe_text(status.name, keep_newlines=False)} ({status.state}{tools})")
            return ", ".join(parts) + " (/mcp for more)" if parts else "none"
        configured = [safe_text(name, keep_newlines=False) for name in repl.enabled_mcp_servers()]
        if configured:
            return ", ".join(configured) + " (not started)"
        if repl.settings.held_back.get("mcp_servers") or repl.settings.mcp_json_held_back:
            return "none: this project's are off until you trust it"
        return "none"

    async def cmd_permissions(self, rest: str) -> None:
        """/permissions: the mode, the rules and this session's grants; /permissions MODE;
        /permissions revoke N|all."""
        from agentica_cli.app.safe_text import safe_text

        app = self.repl.session()
        policy = app.policy
        if not rest:
            plain(f"mode: {policy.mode}   (modes: {', '.join(PERMISSION_MODES)}; Shift+Tab cycles)")
            egress = ("run (--yes)" if policy.mode == "auto" and policy.explicit_auto
                      else "ask in every mode unless a rule or grant allows the domain")
            plain(f"sending data off this machine (fetch_url, web_search, web toolkits): {egress}; "
                  "a rule: fetch_url(domain:docs.python.org)", "2")
            rules = [r for r in policy.rules]
            if rules:
                plain("rules (deny wins, then ask, then allow):")
                for rule in sorted(rules, key=lambda r: ("deny", "ask", "allow").index(r.kind)):
                    where = f"  ({home_relative(Path(rule.source))})" if rule.source else ""
                    plain(f"  {rule.kind:<5} {safe_text(rule.text)}{where}")
            else:
                plain("rules: none ([permissions] allow/deny/ask in config.toml)", "2")
            if policy.grants:
                plain("allowed without asking this session:")
                for number, grant in enumerate(policy.grants, 1):
                    plain(f"  {number}. {safe_text(grant.describe())}")
            else:
                plain("allowed without asking this session: nothing", "2")
            if policy.project_grants:  # numbered on from the session's: one `revoke N` for both
                plain("allowed without asking in this project (saved, ~/.agentica/project_permissions.json):")
                for number, grant in enumerate(policy.project_grants, len(policy.grants) + 1):
                    plain(f"  {number}. {safe_text(grant.describe())}")
            if policy.grants or policy.project_grants:
                plain("Revoke one with /permissions revoke N (or revoke all).", "2")
            return
        words = rest.split()
        if words[0] == "revoke":
            target = words[1] if len(words) > 1 else ""
            if target == "all":
                count = len(policy.grants) + len(policy.project_grants)
                policy.clear_grants()
                while policy.project_grants:
                    policy.revoke_project(0)
                plain(f"Revoked {count} grant(s); those calls ask again.", "2")
                return
            if target.isdigit() and 1 <= int(target) <= len(policy.grants):
                grant = policy.revoke(int(target) - 1)
                plain(f"Revoked: {safe_text(grant.describe())}. It asks again.", "2")
                return
            if target.isdigit() and 1 <= int(target) - len(policy.grants) <= len(policy.project_grants):
                grant = policy.revoke_project(int(target) - len(policy.grants) - 1)
                plain(f"Revoked in this project: {safe_text(grant.describe())}. It asks again.", "2")
                return
            plain(f"No grant {target!r}; /permissions lists them with their numbers.", "33")
            return
        if rest not in PERMISSION_MODES:
            plain(f"Unknown mode {rest!r}; choose one of {', '.join(PERMISSION_MODES)}, or revoke N.", "33")
            return
        app.set_mode(rest, explicit=True)  # typed by the user: as explicit as --yes
        plain(f"Permission mode: {rest}.", "2")

    async def cmd_resume(self, rest: str) -> None:
        from agentica_cli.app.sessions import SessionStore

        repl = self.repl
        app = repl.session()
        sessions = [s for s in SessionStore().list(repl.work_dir) if s.id != app.id]
        chosen = None
        if not rest:
            sessions = [s for s in sessions if s.messages]
            if not sessions:
                plain("No earlier sessions in this folder.", "2")
                return
            from agentica_cli.tui.session_picker import pick_session

            chosen = await pick_session(sessions)  # arrows, type to filter; /resume N or ID still work
            if chosen is None:
                return
            rest = chosen
        if rest.isdigit() and 1 <= int(rest) <= len(sessions):
            chosen = sessions[int(rest) - 1].id
        try:
            await app.resume(chosen or rest)  # its history, its counters so far, its file from now on
        except FileNotFoundError:
            plain(f"No session {rest!r}.", "33")
            return
        repl.take_restore_note()
        plain(f"Resumed {app.id} ({len(app.history)} messages).", "2")
        repl.show_transcript(app.history)
        await app.wait_session_start()  # what the resumed conversation's SessionStart hooks say

    async def cmd_ps(self, rest: str) -> None:
        registry = _background_registry()
        entries = registry.list() if registry is not None else []
        if not entries:
            plain("No background processes (the agent starts them with execute background=true).", "2")
            return
        from agentica_cli.tools.local.background import LAST_LINES, format_uptime

        for entry in entries:
            color = "32" if entry.running else "2"
            plain(f"  {entry.id:<5} {entry.state:<10} pid {entry.pid:<7} up {format_uptime(entry.uptime):<7} "
                  f"{safe_text(entry.command, keep_newlines=False)[:70]}", color)
            for line in entry.output.last_lines(LAST_LINES):
                plain(f"        │ {safe_text(line, keep_newlines=False)[:100]}", "2")
        plain("Stop one with /kill ID (or /kill all).", "2")

    async def cmd_kill(self, rest: str) -> None:
        registry = _background_registry()
        if not rest:
            plain("Usage: /kill ID (or /kill all); /ps lists the background processes.", "33")
            return
        if registry is None:
            plain(f"No background process {rest!r}.", "33")
            return
        if rest == "all":
            stopped = await asyncio.to_thread(registry.stop_all)
            plain(f"Stopped {len(stopped)} background process(es).", "2")
            return
        try:
            entry = registry.get(rest)
        except KeyError as err:
            plain(safe_text(str(err.args[0])) + "; /ps lists them.", "33")
            return
        was = entry.state
        await asyncio.to_thread(registry.stop_many, [entry])
        what = "Stopped" if was == "running" else f"Cleaned up ({was})"
        plain(f"{what} {entry.id}: {safe_text(entry.command, keep_newlines=False)[:70]}", "2")

    async def cmd_mcp(self, rest: str) -> None:
        repl = self.repl
        if not repl.settings.mcp_servers:
            if repl.settings.held_back.get("mcp_servers") or repl.settings.mcp_json_held_back:
                plain("This project's MCP servers are off until you trust it (restart with --trust).", "33")
            else:
                plain("No MCP servers configured ([mcp_servers.NAME] in config.toml, or .mcp.json).", "2")
            return
        mcp = repl.mcp_servers()
        if mcp is None:  # every one configured is disabled (enabled = false)
            plain("No MCP server is enabled ([mcp_servers.NAME] enabled = true).", "33")
            return
        repl.start_mcp()
        action, _, name = rest.partition(" ")
        if action in ("restart", "login", "logout") and name.strip():
            name = name.strip()
            if name not in mcp.names:
                plain(f"No MCP server '{name}'.", "33")
                return
            if action == "restart":
                await mcp.restart(name)
            elif action == "login":
                await mcp.login(name)
            else:
                told = await mcp.logout(name)
                plain(f"Logged out of '{name}'." if told else f"'{name}' has no stored login.", "2")
        for status in mcp.statuses():
            color = {"ready": "32", "failed": "31", "starting": "33"}.get(status.state, "2")
            plain(f"  {status.name:<16} {status.state:<9} {status.transport:<16} {status.target}", color)
            if status.auth:
                plain(f"      auth:  OAuth, {status.auth} (/mcp login {status.name}, /mcp logout {status.name})", "2")
            if status.tools:
                # A task runs on the server after the call returns its id; the line shows its status.
                tools = (f"{name} (task)" if name in status.task_tools else name for name in status.tools)
                plain(f"      tools: {', '.join(tools)}")
            if status.left_out:
                plain(f"      not offered: {', '.join(status.left_out)}", "2")
            if status.error:
                plain(f"      error: {status.error}", "31")
            if status.log_path:
                plain(f"      log:   {status.log_path}", "2")
        prompts = mcp.prompt_commands()
        if prompts:
            plain("  prompts: " + ", ".join(f"/{name}" for name in prompts), "2")


def _background_registry() -> Any:
    """The session's background processes, or None when none was ever started (the module
    is not even loaded then: /ps stays as quick as the other commands)."""
    import sys

    module = sys.modules.get("agentica_cli.tools.local.background")
    return module.background_processes() if module is not None else None
