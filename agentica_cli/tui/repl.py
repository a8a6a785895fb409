"""The interactive session: read a message, run the agent, render its events, repeat.

Start-up order is chosen for speed: the prompt is painted first; rich, the agent loop, the
builtin tools and the openai SDK are imported in a background thread while the user types.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from prompt_toolkit.formatted_text import FormattedText

from agentica_cli.app import exitcodes
from agentica_cli.app.edit_preview import preview_edit
from agentica_cli.app.permissions.approvals import Answer, Question, call_args
from agentica_cli.app.session import AppSession, SessionOptions, StartupError, options_from_args
from agentica_cli.app.settings.config import (
    ConfigError,
    Settings,
    agentica_home,
    load_settings,
)
from agentica_cli.app.startup_gc import release
from agentica_cli.tui.checkpoint_commands import CheckpointCommands
from agentica_cli.tui.prompt_input import PastedTexts, attach_mentions, make_session
from agentica_cli.tui.repl_front_end import ReplFrontEnd
from agentica_cli.tui.sigint_wakeup import SigintWakeup
from agentica_cli.tui.slash import COMMANDS, SlashCommands
from agentica_cli.tui.status_line import StatusLine
from agentica_cli.tui.terminal import home_relative, plain, typeahead_kept


def _preload(with_mcp: bool) -> None:
    """The heavy imports, off the main thread, while the user reads the prompt."""
    import agentica_cli.app.runtime
    import agentica_cli.tui.render

    try:
        from agentica_cli.models import chat_http

        chat_http.tls_context()  # the model transport, with its CA certificates loaded
        import agentica_cli.agent  # noqa: F401
    except Exception:
        pass  # reported properly when the agent is built
    if with_mcp:
        try:
            from agentica_cli.tools.mcp import _import_sdk

            _import_sdk()  # ~0.7 s: never on the event loop, where it would freeze the prompt
        except Exception:
            pass


class Repl:
    def __init__(self, args: argparse.Namespace, settings: Settings, work_dir: Path):
        self.first_images = list(getattr(args, "image", None) or [])  # --image: sent with the first message
        self.args = args
        self.settings = settings
        self.work_dir = work_dir
        self.allowed_dirs = [Path(p).expanduser().resolve() for p in args.add_dir]  # --add-dir
        # The conversation: its policy, stored session, MCP servers, agent, checkpoints and
        # counters (app/session.py); opened after the trust question and onboarding.
        self.app: AppSession | None = None
        self.told_save_error = ""  # a session write that failed (full disk), once told
        self.model: Any = None  # built (or onboarded) before the AppSession opens with it
        self.building: asyncio.Task[None] | None = None  # the agent built early for SessionStart hooks
        self.console: Any = None
        self.renderer: Any = None
        self.turn_task: asyncio.Task[Any] | None = None
        self.pending_context: list[str] = []
        self.approval_lock = asyncio.Lock()
        history = None if not settings.ui.history else self._history_path()
        self.pastes = PastedTexts()
        self.status = StatusLine(self)
        from agentica_cli.app.extension_setup import Extensions

        self.extensions = Extensions()  # found after the trust question (load_extensions)
        self.instructions: Any = None  # AGENTS.md, CLAUDE.md... read after the trust question
        self.command_help = dict(COMMANDS)  # what Tab completes: built-in and custom commands
        self.prompt = make_session(history, self.command_help, work_dir, status=self.status, pastes=self.pastes,
                                   on_shift_tab=self.status.cycle_mode, on_expand=self.expand_last_output,
                                   editing_mode=settings.ui.editing_mode)
        self.question = make_session(None, {}, work_dir)
        self.preloader: threading.Thread | None = None
        self._on_interrupt: Any = None
        self.sigint_wakeup: SigintWakeup | None = None
        self.pending_interrupt = False
        self.turn_input: Any = None  # turn_input.TurnInput while a turn runs
        self.queued_messages: list[str] = []  # lines typed with Enter during a turn, sent next
        self.next_default = ""  # text typed during a turn without Enter: the next prompt's input
        self.commands = SlashCommands(self)
        completer = getattr(self.prompt, "completer", None)
        if completer is not None and hasattr(completer, "dynamic"):
            completer.dynamic = self.mcp_prompt_completions
            completer.resources = lambda: mcp.resource_uris() if (mcp := self.mcp_servers()) is not None else {}
        self.checkpoint_commands = CheckpointCommands(self)

    @staticmethod
    def _history_path() -> Path:
        return agentica_home() / "history"

    # -- start-up ---------------------------------------------------------------------------

    def preload_after_first_paint(self) -> None:
        """Start the heavy imports once the prompt is on screen, so they never delay it; then
        the garbage collector collects as usual again (app/startup_gc.py)."""
        if self.preloader is not None:  # started before the prompt (SessionStart hooks): it is up now
            release()
            return
        app = self.prompt.app

        def painted(_: Any) -> None:
            app.after_render -= painted
            release()
            self.start_preload()

        app.after_render += painted

    def start_preload(self) -> None:
        if self.preloader is not None:
            return
        loop = asyncio.get_running_loop()
        servers = self.enabled_mcp_servers()

        index = getattr(getattr(self.prompt, "completer", None), "index", None)
        if index is not None:
            index.refresh_in_background()  # the project's files for `@`, listed before the first `@`

        def work() -> None:
            _preload(bool(servers))
            if servers:
                loop.call_soon_threadsafe(self.start_mcp)  # the SDK is imported: starting them no longer blocks

        self.preloader = threading.Thread(target=work, name="agentica-preload", daemon=True)
        self.preloader.start()

    async def ask_line(self, message: str, *, password: bool = False) -> str:
        return await self.question.prompt_async(FormattedText([("ansiyellow", message)]), is_password=password)

    async def ask_yes_no(self, question: str, *, default: bool) -> bool:
        """A yes/no question at one key (approval_prompt.read_yes_no); Esc/Ctrl-C raise KeyboardInterrupt."""
        from agentica_cli.tui.approval_prompt import read_yes_no

        return await read_yes_no(question, default=default)

    def load_extensions(self) -> None:
        """Custom commands (and what else the agent will load) for /help and Tab completion."""
        from agentica_cli.app.extension_setup import load_extensions
        from agentica_cli.tui.extension_commands import completion_entries

        self.extensions = load_extensions(self.settings, self.work_dir)
        from agentica_cli.app.instructions import read_instructions

        self.instructions = read_instructions(self.work_dir)
        self.command_help.clear()
        self.command_help.update(completion_entries(self.extensions.commands))
        self.command_help.update(COMMANDS)  # a built-in command wins a name clash

    async def ensure_trust(self) -> None:
        from agentica_cli.app.extension_setup import untrusted_project_extensions

        files = untrusted_project_extensions(self.work_dir)
        mcp_json = self.settings.mcp_json_held_back
        if not self.settings.held_back and not files and not mcp_json:
            return
        if self.settings.held_back:
            keys = ", ".join(sorted(self.settings.held_back))
            plain(f"{self.settings.project_file} sets {keys}.", "33")
        if mcp_json:
            from agentica_cli.app.safe_text import safe_text

            plain(safe_text(f"{self.settings.mcp_json_file} defines MCP servers: {', '.join(mcp_json)}.",
                            keep_newlines=False), "33")
        if files:
            plain(f"This project has its own {', '.join(files)} (.agentica/ or .claude/).", "33")
        plain(
            "These can start programs, send your API key or data elsewhere, skip confirmations "
            "or raise time and spending limits, "
            "so they are off until you trust this project.",
            "33",
        )
        try:
            trusted = await self.ask_yes_no("Trust this project? [y/N] ", default=False)  # one key
        except (KeyboardInterrupt, EOFError):
            trusted = False
        if trusted:
            from agentica_cli.app.settings.flags import flag_settings
            from agentica_cli.app.settings.trust import trust

            trust(self.work_dir)
            # the project's [permissions], prices and servers: the AppSession opens with these
            self.settings = load_settings(self.work_dir, flag_settings(self.args), trusted=True,
                                          mcp_flags=getattr(self.args, "mcp_flags", None))
            plain("Trusted. (Remembered in ~/.agentica/trusted_projects.json.)", "32")
        else:
            plain("Not trusted: those settings are ignored this time.", "2")

    async def ensure_model(self) -> bool:
        """Build the model client (cheap: openai is imported later). Without a key, onboarding:
        pick a provider, paste a key, check it, save it; False when the user leaves (told why)."""
        from agentica_cli.app.runtime import MissingKey, build_model

        try:
            self.model = build_model(self.settings)
            return True
        except MissingKey as err:
            from agentica_cli.tui.onboarding import Onboarding

            self.model = await Onboarding(self.settings, self.ask_line, self).run(err.provider, err.detail)
            return self.model is not None

    def welcome(self) -> None:
        from agentica_cli import __version__
        from agentica_cli.app.runtime import model_label

        where = home_relative(self.work_dir)
        from agentica_cli.tui.wrapping import pack_fields, terminal_columns

        app = self.session()
        fields = [f"agentica {__version__}", model_label(app.model), where, f"mode {app.policy.mode}"]
        for row in pack_fields(fields, terminal_columns()):  # a long folder: rows break between the fields
            plain(row, "1")
        from agentica_cli.app.sandbox_settings import sandbox_line, unconfined_warning

        sandbox = app.policy.sandbox
        if sandbox is not None:
            warning = unconfined_warning(sandbox)
            plain(sandbox_line(sandbox) + (f" ({warning})" if warning else ""),
                  "33" if warning or not sandbox.confines else "2")
        if self.extensions.commands or self.extensions.agents or self.extensions.skills:
            found = [f"{len(items)} {kind}{'s' if len(items) != 1 else ''}" for kind, items in (
                ("command", self.extensions.commands), ("agent", self.extensions.agents),
                ("skill", self.extensions.skills)) if items]
            listed = [c for c, items in (("/help", self.extensions.commands), ("/agents", self.extensions.agents),
                                        ("/skills", self.extensions.skills)) if items]  # what lists them
            plain(f"Extensions: {', '.join(found)} ({', '.join(listed)}).", "2")
        self.show_start_problems()
        if app.messages:
            plain(f"Resumed session {app.id} ({len(app.messages)} messages).", "2")
            self.show_transcript(app.messages)
        plain("Type a message, /help for commands, Ctrl-D to exit.", "2")

    def show_start_problems(self) -> None:
        """Which instruction files are in the prompt, and every file left out and why, before
        the first message (not at the first turn, when the agent is built)."""
        from agentica_cli.app.instructions import loaded_summary
        from agentica_cli.app.safe_text import safe_text

        if self.instructions is not None and self.instructions.files:
            plain(f"Instructions: {loaded_summary(self.instructions, self.work_dir)}.", "2")
        from agentica_cli.app.extension_setup import listing_notices

        problems = [*(self.instructions.problems if self.instructions is not None else ()), *self.extensions.problems,
                    *listing_notices(self.extensions, getattr(self.session().model, "context_window", None))]
        for problem in problems:
            plain(safe_text(problem, keep_newlines=False), "33")

    def show_transcript(self, messages: list[dict[str, Any]]) -> None:
        """Where the resumed conversation left off: its last prompts, tool calls and answers,
        compactly; the answers' Markdown rendered as the live session shows it, soft-wrapped
        under their text ([ui] markdown = false: as plain text)."""
        from agentica_cli.tui.transcript import MARKDOWN, MARKDOWN_UNDER, hang_of, replay

        rendered = self.settings.ui.markdown
        for text, code in replay(messages, markdown=rendered):
            if code in (MARKDOWN, MARKDOWN_UNDER):
                self.show_replayed_answer(text, labelled=code == MARKDOWN)
            else:
                plain(f"  {text}", code, hang=2 + hang_of(text))  # wrapped rows stay under the text

    def show_replayed_answer(self, text: str, *, labelled: bool) -> None:
        """An answer's Markdown rendered at the width left of `  agent: `, its rows under its text."""
        from agentica_cli.tui.terminal_markdown import TerminalMarkdown

        self.ensure_renderer()
        console = self.console
        hang = len("  agent: ")
        with console.capture() as captured:
            console.print(TerminalMarkdown(text), width=max(20, console.width - hang))
        rows = captured.get().rstrip("\n").split("\n")
        for number, row in enumerate(rows):
            lead = "  agent: " if labelled and number == 0 else " " * hang
            sys.stdout.write(lead + row + "\n")
        sys.stdout.flush()

    async def pick_initial_session(self) -> None:
        """`agentica --resume` with no ID: the picker; the session chosen is the one opened."""
        if self.args.resume != "":
            return
        from agentica_cli.app.sessions import SessionStore

        self.args.resume = None
        sessions = [s for s in SessionStore().list(self.work_dir) if s.messages]
        if not sessions:
            plain("No earlier session in this folder; starting a new one.", "2")
            return
        from agentica_cli.tui.session_picker import pick_session

        chosen = await pick_session(sessions)
        if chosen is None:
            plain("No session chosen; starting a new one.", "2")
            return
        self.args.resume = chosen

    def session_options(self) -> SessionOptions:
        return options_from_args(
            self.args, self.settings, self.work_dir, model=self.model,
            mcp_wait="never",  # a server still starting holds up nothing: its tools come when it is ready
            mcp_live_notices=True, tell_untrusted=False,  # ensure_trust asked about what they would say
            extensions=self.extensions, instructions=self.instructions,  # told in the welcome
        )

    def open_session(self) -> str | None:
        """Open the AppSession (new, --continue or --resume ID); the problem to show, if any."""
        try:
            self.app = AppSession.open(self.session_options(), ReplFrontEnd(self))
        except StartupError as err:
            return err.problem.message
        self.settings = self.app.settings
        if self.app.messages:
            self.take_restore_note()
        return None

    def session(self) -> AppSession:
        """The open AppSession (commands and turns run only once it is open)."""
        if self.app is None:
            raise RuntimeError("the REPL's session is not open yet")
        return self.app

    def mcp_servers(self) -> Any:
        """The session's McpServerSet, None when no server is configured (or not open yet)."""
        return self.app.mcp if self.app is not None else None

    def take_restore_note(self) -> None:
        """What `agentica --undo` put back since this session's last message: for the model,
        with the next one (restore_notes.py)."""
        from agentica_cli.restore_notes import take_note

        stored = self.session().stored
        note = take_note(stored.path) if stored is not None else ""
        if note:
            self.pending_context.append(note)

    # -- the agent --------------------------------------------------------------------------

    def ensure_renderer(self) -> None:
        if self.renderer is None:
            from rich.console import Console

            from agentica_cli.tui.render import EventRenderer

            # On a terminal the size is the terminal's, asked at each redraw: a COLUMNS exported by
            # the shell is fixed, and once the window is narrower every live redraw miscounts the
            # rows of its last frame and leaves a copy of the streamed text behind (issue 25, 20).
            environ = None
            if sys.stdout.isatty():
                environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
            self.console = Console(highlight=False, _environ=environ)
            self.renderer = EventRenderer(
                self.console,
                self.work_dir,
                markdown=self.settings.ui.markdown,
                show_reasoning=self.settings.ui.show_reasoning,
            )

    async def ensure_agent(self) -> Any:
        """The session's agent, built once the heavy imports are done (the preload thread)."""
        if self.preloader is not None:
            await asyncio.to_thread(self.preloader.join)
        return await self.session().start()

    def build_agent_early(self) -> None:
        """With SessionStart hooks: the agent is built now and they run while the user types
        (Claude Code runs them as the session opens); what they say is told above the prompt."""
        self.start_preload()  # the heavy imports, in a thread: the first paint is not held up

        async def build() -> None:
            try:
                await self.ensure_agent()
            except Exception:
                pass  # the first prompt or command that needs the agent says why

        self.building = asyncio.create_task(build())

    def mcp_prompt_completions(self) -> dict[str, tuple[str, list[str]]]:
        mcp = self.mcp_servers()
        if mcp is None:
            return {}
        return {name: ((prompt.description or "MCP prompt")[:60], [a.name for a in (prompt.arguments or ())])
                for name, (_, prompt) in mcp.prompt_commands().items()}

    def enabled_mcp_servers(self) -> dict[str, Any]:
        return {k: v for k, v in self.settings.mcp_servers.items() if v.get("enabled", True)}

    def start_mcp(self) -> None:
        """Start the configured MCP servers in parallel, in the background (each failure is told
        as it happens: SessionOptions.mcp_live_notices)."""
        if self.app is not None:
            self.app.launch_mcp()

    # -- approvals --------------------------------------------------------------------------

    def show_request(self, call: Any, question: Question) -> None:
        from agentica_cli.tui.approval_prompt import request_renderable

        name = getattr(call, "name", "?")
        args = call_args(call)
        diff = preview_edit(name, args, self.work_dir)
        self.console.print(request_renderable(name, args, diff, question.note))

    def show_grant(self, granted: str, mode_changed: bool) -> None:
        """The policy remembered an "always" answer: what it allows from now on."""
        from rich.text import Text

        self.console.print(Text(f"  (allowed from now on: {granted}; /permissions to review or revoke)", style="dim"))

    def expand_last_output(self) -> None:
        """Ctrl-O and /expand: the whole result of the last tool call."""
        if self.renderer is None or not self.renderer.expand_last():
            plain("No tool call has finished yet.", "2")

    def show_typeahead(self, text: str) -> None:
        """Keys typed during a turn, shown under its live area until the next prompt takes them."""
        if self.renderer is not None:
            self.renderer.set_typeahead(text)

    def terminal_for_question(self) -> Any:
        """The approval question reads the terminal itself: stop reading type-ahead meanwhile."""
        from contextlib import nullcontext

        return self.turn_input.paused() if self.turn_input is not None else nullcontext()

    async def ask_approval(self, call: Any, question: Question) -> Answer:
        """The policy's question about a call (ReplFrontEnd.ask_permission), one at a time."""
        async with self.approval_lock:
            self.ensure_renderer()
            self.renderer.pause()
            self.show_request(call, question)
            self.renderer.forget_preview(getattr(call, "call_id", ""))
            answer = await self.read_answer(call, question)
            if answer.choice != "no":  # it runs now: its spinner and clock start from here
                self.renderer.resume_tool(getattr(call, "call_id", ""))
            return answer

    async def read_answer(self, call: Any, question: Question) -> Answer:
        """One key: y once, a always (scoped), n no, e no with a reason, Esc/Ctrl-C no and stop."""
        from rich.text import Text

        from agentica_cli.app.permissions.tool_kinds import EDIT_TOOLS
        from agentica_cli.tui.approval_prompt import choices_for, choices_text, read_choice

        scope = question.always
        choices = choices_for(scope, in_project=scope is not None and getattr(call, "name", "") not in EDIT_TOOLS)
        self.console.print(choices_text(choices))
        self.notify_waiting()

        def redraw() -> None:  # the window's width changed: the box drawn at the old one is cut or broken
            sys.stdout.write("\x1b[H\x1b[2J")  # the screen only; the scrollback keeps what came before
            sys.stdout.flush()
            self.show_request(call, question)
            self.console.print(choices_text(choices))

        with self.terminal_for_question():
            choice = await read_choice(choices, redraw)
        label = next((c.label for c in choices if c.answer == choice), choice)
        self.console.print(Text(f"  → {label}", style="dim"))
        if choice == "once":
            return Answer("once")
        if choice in ("always", "project"):
            return Answer(choice)  # the policy remembers it (show_grant says what it allows)
        if choice == "reason":
            try:
                with self.terminal_for_question():
                    reason = (await self.ask_line("What should it do instead? ")).strip()
            except (KeyboardInterrupt, EOFError):
                reason = ""
            return Answer("no", reason)
        if choice == "stop":
            if self.turn_task is not None:
                self.turn_task.cancel()
                # Hold the loop here: answering would let it send another request
                # before the cancellation reaches it. The cancel arrives at this await.
                await asyncio.Event().wait()
            return Answer("no", "The user interrupted.")
        return Answer("no")

    def notify_waiting(self) -> None:
        """Tell a user looking elsewhere that a question waits (bell / OSC 9, per config)."""
        from agentica_cli.tui.notify import notify

        notify("a tool call waits for your answer", self.settings)

    # -- one turn -----------------------------------------------------------------------------

    async def run_turn(self, text: str, images: list[Any] | None = None) -> None:
        app = self.session()
        try:
            await self.ensure_agent()
        except Exception as exc:
            plain(f"error: could not start the agent: {type(exc).__name__}: {exc}", "31")
            return
        self.ensure_renderer()
        if self.pending_context:
            text = "\n\n".join([*self.pending_context, text])
            self.pending_context.clear()

        async def consume() -> None:
            # The session counts tokens and money, offers the MCP tools ready now and applies a
            # mode set since the last turn; the REPL shows the events.
            async for event in app.turn(text, images or ()):
                self.renderer.handle(event)

        from agentica_cli.tui.turn_input import TurnInput

        self.turn_task = asyncio.create_task(consume())
        turn, started = self.turn_task, asyncio.get_running_loop().time()  # for the end-of-turn notification
        self.on_interrupt = self.turn_task.cancel
        task = self.turn_task

        def cancel_turn() -> None:
            task.cancel()

        self.turn_input = TurnInput(on_escape=cancel_turn, on_change=self.show_typeahead)
        try:
            with self.turn_input:
                await self.turn_task
        except asyncio.CancelledError:
            self.renderer.cancel()
            self.console.print("[yellow](interrupted)[/yellow]")
        except Exception as exc:
            self.renderer.finish()
            from rich.text import Text

            from agentica_cli.app.safe_text import safe_text

            self.console.print(Text.assemble(("error: ", "bold red"), safe_text(f"{type(exc).__name__}: {exc}")))
        finally:
            self.on_interrupt = None
            self.turn_task = None
            messages, typed = self.turn_input.take()
            self.turn_input = None
            self.queued_messages.extend(messages)
            self.next_default = typed
            self.show_typeahead("")
            self.renderer.finish()
            self.console.print()  # a blank line between one turn and the next prompt
        from agentica_cli.tui.notify import notify_turn_end

        notify_turn_end(asyncio.get_running_loop().time() - started, self.settings, interrupted=turn.cancelled())
        if app.policy.mode == "plan" and not turn.cancelled() and turn.exception() is None:
            await self.offer_to_leave_plan_mode()
        # A server that died during the turn is noticed when its state is read: read it now,
        # so the user hears of it at the end of this turn rather than during the next one.
        await app.sync_mcp_tools()
        problem = app.save_error
        if problem and problem != self.told_save_error:  # a full disk: said once, after the turn that met it
            self.told_save_error = problem
            from agentica_cli.app.safe_text import safe_text

            plain(safe_text(problem, keep_newlines=False).capitalize() + "; this session is no longer saved.", "31")

    async def offer_to_leave_plan_mode(self) -> None:
        """After a plan-mode turn that ended with an answer (the plan): proceed? Yes switches the
        mode (accept-edits, or default: each edit asked) and tells the model to carry it out, as
        Claude Code's leaving plan mode does; no keeps planning (the next message refines it)."""
        messages = self.session().history
        last = messages[-1] if messages else {}
        if last.get("role") != "assistant" or not str(last.get("content") or "").strip():
            return
        from rich.text import Text

        from agentica_cli.tui.approval_prompt import Choice, choices_text, read_choice

        choices = [Choice("a", "yes, and accept edits", "accept-edits"),
                   Choice("y", "yes, asking before each edit", "default"),
                   Choice("n", "no, keep planning", "plan")]
        self.console.print(Text("The plan is ready. Proceed (leaves plan mode)?", style="bold"))
        self.console.print(choices_text(choices))
        self.notify_waiting()
        answer = await read_choice(choices, question="Proceed? ", escape_answer="plan")
        label = next((c.label for c in choices if c.answer == answer), "no, keep planning")
        self.console.print(Text(f"  → {label}", style="dim"))
        if answer in ("accept-edits", "default"):
            self.session().set_mode(answer)
            self.queued_messages.insert(0, "The plan is approved; carry it out now.")

    async def run_shell(self, command: str) -> None:
        """`!cmd`: run it here, show its output as it comes, keep it for the next message."""
        if not command.strip():
            return
        from agentica_cli.tui.shell_escape import run_shell_escape

        status, output = await run_shell_escape(command, self.work_dir,
                                                lambda action: setattr(self, "on_interrupt", action))
        plain(f"({status}; the output goes with your next message)", "2")
        self.pending_context.append(
            f"I ran `{command}` in the shell ({status}). Output:\n<output>\n{output[-20000:]}\n</output>"
        )

    # -- the loop ---------------------------------------------------------------------------

    @property
    def on_interrupt(self) -> Any:
        """What Ctrl-C (SIGINT) does right now; None: it counts at the next prompt."""
        return self._on_interrupt

    @on_interrupt.setter
    def on_interrupt(self, action: Any) -> None:
        self._on_interrupt = action
        if action is not None and self.sigint_wakeup is not None:
            self.sigint_wakeup.arm()  # a prompt since the last arming cleared it (sigint_wakeup.py)

    def install_sigint(self) -> None:
        """Ctrl-C outside the prompt (the terminal is in cooked mode then) arrives as SIGINT:
        it cancels the running turn or shell command, or counts as a Ctrl-C at the prompt.
        A Python-level handler, because prompt_toolkit saves and restores exactly that one."""
        loop = asyncio.get_running_loop()

        def dispatch() -> None:
            if self.on_interrupt is not None:
                self.on_interrupt()
                return
            for session in (self.prompt, self.question):
                app = session.app
                if app.is_running and app.future is not None and not app.future.done():
                    app.exit(exception=KeyboardInterrupt)  # it started after the signal came
                    return
            self.pending_interrupt = True

        signal.signal(signal.SIGINT, lambda signum, frame: loop.call_soon_threadsafe(dispatch))
        self.sigint_wakeup = SigintWakeup(loop)
        self.sigint_wakeup.arm()

    async def read_message(self) -> str | None:
        """The next message; None to exit. Handles Ctrl-C / Ctrl-D at the prompt."""
        warned = False
        while True:
            try:
                if self.pending_interrupt:
                    self.pending_interrupt = False
                    raise KeyboardInterrupt
                if self.queued_messages:  # typed (with Enter) during the last turn
                    message = self.queued_messages.pop(0)
                    from agentica_cli.app.safe_text import safe_text

                    plain(f"❯ {safe_text(message)}", "2")
                    return message
                default, self.next_default = self.next_default, ""
                line = await self.prompt.prompt_async(default=default, pre_run=self.preload_after_first_paint)
                return self.pastes.expand(line)  # large pastes were shown as placeholders
            except KeyboardInterrupt:
                if warned:
                    return None
                warned = True
                plain("(press Ctrl-C again or Ctrl-D to exit)", "2")
            except EOFError:
                return None

    async def main(self, first_prompt: str) -> int:
        with typeahead_kept():  # keys typed while no prompt reads wait for the next one, Enter included
            return await self.run_session(first_prompt)

    async def run_session(self, first_prompt: str) -> int:
        self.install_sigint()
        await self.pick_initial_session()
        await self.ensure_trust()
        self.load_extensions()
        if not await self.ensure_model():
            return exitcodes.USAGE_ERROR
        problem = self.open_session()
        if problem:
            plain(f"agentica: {problem}", "31")
            return exitcodes.USAGE_ERROR
        self.welcome()
        from agentica_cli.tui.session_hooks import has_session_start_hooks

        if has_session_start_hooks(self.extensions):
            self.build_agent_early()
        try:
            if first_prompt.strip():
                self.start_preload()
                from agentica_cli.app.safe_text import safe_text

                plain(f"❯ {safe_text(first_prompt)}", hang=2)  # in the transcript, as if typed at the prompt
                await self.handle(first_prompt)
            while True:
                line = await self.read_message()
                if line is None:
                    break
                if not await self.handle(line):
                    break
        finally:
            await self.shutdown()
        return exitcodes.OK

    async def handle(self, line: str) -> bool:
        stripped = line.strip()
        if not stripped:
            return True
        if stripped.startswith("/mcp__"):  # a server's prompt: its text is this turn's message
            return await self.commands.run_mcp_prompt(stripped)
        if stripped.startswith("/") and not stripped.startswith("//"):
            return await self.commands.run(stripped)
        if stripped.startswith("!"):
            await self.run_shell(stripped[1:])
            return True
        text, attached = attach_mentions(line, self.work_dir)
        mcp = self.mcp_servers()
        if mcp is not None and "@" in line:  # @server:uri attaches an MCP resource
            from agentica_cli.app.mcp_client import attach_resources

            text, resources, failed = await attach_resources(text, mcp)
            attached += resources
            for problem in failed:
                plain(f"(could not attach {problem})", "33")
        if attached:
            plain(f"(attached {', '.join(attached)})", "2")
        from agentica_cli.app.safe_text import safe_text
        from agentica_cli.tui.image_input import attach_images

        images, problems = attach_images(line, self.work_dir, self.first_images)
        self.first_images = []
        for problem in problems:  # the images sent are told by the turn's first notice (size, tokens)
            plain(f"(image not attached: {safe_text(problem)})", "31")
        await self.run_turn(text, images)
        return True

    async def shutdown(self) -> None:
        if self.sigint_wakeup is not None:
            self.sigint_wakeup.close()
            self.sigint_wakeup = None
        app = self.app
        if app is None:
            return
        # SessionEnd hooks, the MCP servers, old checkpoints, the stored session's file.
        await app.close("prompt_input_exit")
        from agentica_cli.app.session import stop_background_processes

        stopped = await asyncio.to_thread(stop_background_processes)
        if stopped:
            plain(f"Stopped {len(stopped)} background process(es).", "2")
        stored = app.stored
        if stored is None:
            return
        if app.save_error:
            if app.save_error != self.told_save_error:
                from agentica_cli.app.safe_text import safe_text

                plain(safe_text(app.save_error, keep_newlines=False).capitalize() + ".", "31")
        elif stored.saved:
            plain(f"Session saved: agentica --resume {stored.id}", "2")


def run_repl(args: argparse.Namespace, settings: Settings, work_dir: Path, prompt: str) -> int:
    repl = Repl(args, settings, work_dir)
    try:
        return asyncio.run(repl.main(prompt))
    except KeyboardInterrupt:
        return exitcodes.INTERRUPTED
    except ConfigError as err:
        sys.stderr.write(f"agentica: config error: {err}\n")
        return exitcodes.USAGE_ERROR
