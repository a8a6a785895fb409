"""AppSession: one conversation of the application, whatever front end shows it.

It owns what every front end used to wire itself: the permission policy, the stored session
(app/sessions.py), the MCP servers and their client handlers (roots, elicitation, sampling), the
extensions (found once), the checkpoints, the one usage counter (app/usage.py) and the agent
(app/runtime.build_agent). A front end (the REPL, `-p`, stream-json input, ACP, the Claude SDK
protocol) only shows what the session produces and asks the user its questions:

    front = MyFrontEnd()                           # implements FrontEnd (below)
    try:
        session = AppSession.open(SessionOptions(work_dir, settings), front)
    except StartupError as err:                    # err.problem: a kind and the line to show
        ...
    await session.start()                          # MCP servers, the agent, SessionStart hooks
    async for event in session.turn("fix the test"):   # the agent's events (agent/events.py)
        render(event)
    await session.close()                          # once; a second call does nothing

Questions go out through the front end's `ask_permission(call, question)`: the question is the
policy's (`PermissionPolicy.question`, the only place an "always" is offered) and the answer
goes back through the policy (`apply_answer`, the only place one is remembered).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentica_cli.app.settings.config import PERMISSION_MODES, ConfigError, Settings

if TYPE_CHECKING:
    from agentica_cli.app.command_shell import CommandTurn
    from agentica_cli.app.commands import ModelSwitch
    from agentica_cli.app.extension_setup import Extensions
    from agentica_cli.app.instructions import Instructions
    from agentica_cli.app.permissions.approvals import Answer, PermissionPolicy, Question, Reason, Verdict
    from agentica_cli.app.prices import CostMeter
    from agentica_cli.app.runtime import PermissionModePrompt
    from agentica_cli.app.sessions import Session
    from agentica_cli.checkpoints.backups import FileBackups
    from agentica_cli.checkpoints.store import Checkpoints
    from agentica_cli.deep import DeepAgent
    from agentica_cli.extensions.commands import CustomCommand
    from agentica_cli.tools.events import Event
    from agentica_cli.tools.mcp.client_features import ElicitAnswer, ElicitRequest, SamplingRequest
    from agentica_cli.tools.mcp.servers import McpServerSet, McpServerStatus

__all__ = ["AppSession", "FrontEnd", "HeadlessFrontEnd", "SessionOptions", "StartupError", "StartupProblem",
           "options_from_args", "stop_background_processes"]

Prompt = str | list[dict[str, Any]]  # text, or content blocks (text and images) as ACP sends them


class FrontEnd(Protocol):
    """What a front end gives its AppSession: how the user is asked and told."""

    # False where nobody can answer (-p): a call the policy would ask about is refused at once
    # and the model is told why; `refused` says which flag allows it.
    can_ask: bool

    async def ask_permission(self, call: Any, question: Question) -> Answer:
        """Show the policy's question about a tool call; the user's answer."""
        ...

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        """An MCP server asks the user for input (a form or a URL)."""
        ...

    async def sample(self, request: SamplingRequest) -> str | None:
        """An MCP server asks to use the model; None declines."""
        ...

    def report(self, text: str) -> None:
        """A notice for the user: what start-up found, a failed MCP server, what hooks said."""
        ...

    def refused(self, name: str, mode: str, why: Reason) -> None:
        """The policy refused a call without asking (a deny rule, plan mode, nobody to ask)."""
        ...

    def mcp_failed(self, message: str) -> None:
        """An MCP server failed to start or stopped (told once per failure); its tools are left out."""
        ...

    async def granted(self, granted: str, mode_changed: bool) -> None:
        """An "always" answer was remembered: what it allows now, and whether the mode changed."""
        ...


class HeadlessFrontEnd:
    """A front end nobody answers (-p, stream-json input): calls that need a question are
    refused with the flag that allows them, MCP forms and sampling are declined, and every
    notice goes to stderr as an `agentica: ...` line."""

    can_ask = False

    def __init__(self, who: str = "-p") -> None:
        self.who = who

    async def ask_permission(self, call: Any, question: Question) -> Answer:
        from agentica_cli.app.permissions.approvals import Answer

        return Answer("no", f"{self.who} cannot ask")  # not reached: can_ask is False

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        from agentica_cli.app.mcp_client import decline_input

        return await decline_input(request, self.who)

    async def sample(self, request: SamplingRequest) -> str | None:
        from agentica_cli.app.mcp_client import decline_sampling

        return await decline_sampling(request, self.who)

    def report(self, text: str) -> None:
        from agentica_cli.app.safe_text import safe_text

        sys.stderr.write(f"agentica: {safe_text(text)}\n")
        sys.stderr.flush()

    def mcp_failed(self, message: str) -> None:
        self.report(message)

    def refused(self, name: str, mode: str, why: Reason) -> None:
        from agentica_cli.app.permissions.approvals import refusal_hint

        sys.stderr.write(refusal_hint(name, mode, why) + "\n")
        sys.stderr.flush()

    async def granted(self, granted: str, mode_changed: bool) -> None:
        return None


@dataclass(frozen=True)
class StartupProblem:
    """Why a session could not open, as data each front end shows its own way: `-p` and the
    REPL print `message` and exit 2; ACP answers the request with an error carrying it."""

    kind: Literal["config", "missing_key", "no_session"]
    message: str  # the line to show ("config error: ...", how to set a key, "no session 'x' ...")
    provider: str = ""  # missing_key: the provider whose key is missing (the REPL's onboarding asks for it)


class StartupError(Exception):
    def __init__(self, problem: StartupProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


CheckpointKind = Literal["project", "file-backups", "none"]
McpWait = Literal["start", "first_turn", "never"]


@dataclass(frozen=True)
class SessionOptions:
    """What a front end decides about its session; the rest comes from `settings`."""

    work_dir: Path
    settings: Settings
    add_dirs: Sequence[Path] = ()  # --add-dir and an editor's additional directories
    model: Any = None  # a model client built already (a test's fake model); None: from the settings
    # Which stored session: `resume` opens that one; `continue_latest` the folder's latest (else a new
    # one); else a new one. `save=False` (--no-session) writes nothing: a resumed one is only read.
    resume: str | None = None
    continue_latest: bool = False
    save: bool = True
    lazy_file: bool = True  # a new session's file is made by its first message (-p, the REPL)
    stored: Session | None = None  # a session the front end opened itself (the SDK's --session-id)
    session_id: str | None = None  # the id of a session that is not saved (an editor needs one)
    client_mcp_servers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # an editor's servers
    mcp_wait: McpWait = "start"  # when MCP servers are waited for: before the agent, before the first turn
    mcp_wait_timeout: float | None = None  # None: each server's own connect timeout bounds it
    base_prompt: str | None = None  # --system-prompt
    appended_prompt: str | None = None  # --append-system-prompt
    checkpoints: CheckpointKind = "project"  # "file-backups": copies of edited files (no git snapshot)
    how_to_trust: str = "run with --trust"  # in the untrusted-project notices
    tell_untrusted: bool = True  # False: the front end asked about trust itself (the REPL's question)
    mcp_live_notices: bool = False  # tell a server's failure as it happens, not at the next turn (the REPL)
    extensions: Extensions | None = None  # found already (the REPL lists them before the first turn)
    instructions: Instructions | None = None  # the instruction files read already (their problems told)


def options_from_args(args: Any, settings: Settings, work_dir: Path, **options: Any) -> SessionOptions:
    """The session `agentica`'s command line asks for (an argparse.Namespace from cli/): --add-dir,
    --resume ID / --continue, --no-session and the system-prompt flags; a new session's file is
    made by its first message. `options`: the rest, as the front end decides it."""
    from agentica_cli.app.settings.system_prompt_flags import system_prompt_options

    prompts = system_prompt_options(args)
    if getattr(args, "no_checkpoints", False):
        options["checkpoints"] = "none"
    return SessionOptions(
        work_dir, settings, add_dirs=[Path(p).expanduser() for p in args.add_dir], resume=args.resume or None,
        continue_latest=bool(args.continue_), save=not args.no_session, lazy_file=True,
        base_prompt=prompts["base_prompt"], appended_prompt=prompts["appended_prompt"], **options,
    )


def stop_background_processes() -> list[Any]:
    """Stop the background processes the agent started (agentica_cli/tools/local/background.py), if any
    was; what was stopped. Per process, not per session: a front end calls it when it exits."""
    background = sys.modules.get("agentica_cli.tools.local.background")  # loaded only once the agent started one
    if background is None:
        return []
    return list(background.background_processes().stop_all() or [])


class AppSession:
    """One conversation: built by `open`, started by `start`, run by `turn`, ended by `close`."""

    def __init__(self, options: SessionOptions, front_end: FrontEnd, *, model: Any, stored: Session | None,
                 messages: list[dict[str, Any]] | None, mcp: McpServerSet | None, notices: list[str]) -> None:
        from agentica_cli.app.permissions.approvals import policy_from_settings
        from agentica_cli.app.usage import UsageCounter

        self.options = options
        self.front_end = front_end
        self.settings = options.settings
        self.work_dir = options.work_dir
        self.add_dirs = [Path(p).expanduser().resolve() for p in options.add_dirs]
        self.model = model
        self.stored = stored  # the SessionStore session written to (None: nothing is saved)
        self.id: str | None = stored.id if stored is not None else options.session_id
        self.messages = messages  # the history the agent starts from (a resumed session's)
        self.mcp = mcp
        self.notices = notices  # what this untrusted project sets and the session ignores (told at open)
        self.usage = UsageCounter.for_session(stored)  # /cost: sub-agents and earlier processes included
        self.cost = self._cost_meter(stored)  # the money, counted like `usage` (the one place that records it)
        from agentica_cli.app.prices import CostMeter

        self.process_cost = CostMeter()  # this process's share of `cost`, whatever session it went to (--max-cost)
        self.context_tokens: int | None = None  # the prompt tokens of the agent's last request
        self.policy: PermissionPolicy = policy_from_settings(
            self.settings, self.work_dir, allowed_dirs=self.add_dirs,
            ask=self._ask if front_end.can_ask else None, on_refusal=front_end.refused, on_grant=front_end.granted,
        )
        self.agent: DeepAgent | None = None
        self.mode_prompt: PermissionModePrompt | None = None  # with the agent
        self.checkpoints: Checkpoints | FileBackups | None = None
        self.extensions: Extensions | None = options.extensions
        self._tell_extension_problems = False  # found by find_extensions: start() tells their problems
        self._mcp_started = False
        self._mcp_waited = False
        self._mcp_tools: list[Any] = []
        self._starting: asyncio.Task[list[str]] | None = None  # SessionStart hooks
        self._start_messages: list[str] | None = None
        self._turn: asyncio.Task[Any] | None = None  # the task running the current turn
        self._closed = False
        if mcp is not None and options.mcp_live_notices:
            mcp.on_change = self._mcp_changed

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(cls, options: SessionOptions, front_end: FrontEnd) -> AppSession:
        """Check the settings, tell what an untrusted project sets that is ignored, build the
        model client and open the stored session; a problem is a StartupError (as data)."""
        from agentica_cli.app.startup import check_config, untrusted_notices

        settings, work_dir = options.settings, options.work_dir
        try:
            check_config(settings, work_dir, options.add_dirs)
        except ConfigError as err:
            raise StartupError(StartupProblem("config", f"config error: {err}")) from None
        notices = untrusted_notices(settings, work_dir, options.how_to_trust) if options.tell_untrusted else []
        for line in notices:
            front_end.report(line)
        mcp = cls._mcp_servers(options, front_end)
        model = options.model
        if model is None:
            from agentica_cli.app.runtime import MissingKey, build_model

            try:
                model = build_model(settings)
            except MissingKey as err:
                raise StartupError(StartupProblem("missing_key", str(err), err.provider)) from None
        stored, messages = cls._stored_session(options, front_end, model)
        return cls(options, front_end, model=model, stored=stored, messages=messages, mcp=mcp, notices=notices)

    @staticmethod
    def _mcp_servers(options: SessionOptions, front_end: FrontEnd) -> McpServerSet | None:
        """The configured (and the editor's) MCP servers, not started yet; roots are the work
        folder and the added ones, forms and sampling go to the front end."""
        tables = {k: dict(v) for k, v in options.settings.mcp_servers.items() if v.get("enabled", True)}
        tables.update({k: dict(v) for k, v in options.client_mcp_servers.items()})
        if not tables:
            return None
        from agentica_cli.app.mcp_client import roots_for
        from agentica_cli.app.settings.config import agentica_home
        from agentica_cli.tools.mcp.client_features import McpClientHandlers
        from agentica_cli.tools.mcp.servers import McpConfigError, McpServerSet

        handlers = McpClientHandlers(roots=roots_for(options.work_dir, options.add_dirs), elicit=front_end.elicit,
                                     sample=front_end.sample)
        try:
            return McpServerSet.from_tables(tables, base_dir=options.work_dir,
                                            log_dir=agentica_home() / "logs" / "mcp", handlers=handlers)
        except McpConfigError as err:
            raise StartupError(StartupProblem("config", f"MCP server config: {err}")) from None

    @staticmethod
    def _stored_session(options: SessionOptions, front_end: FrontEnd,
                        model: Any) -> tuple[Session | None, list[dict[str, Any]] | None]:
        """The session written to (new, the latest one here, or the one asked for) and its history."""
        if options.stored is not None:
            return options.stored, list(options.stored.messages)
        from agentica_cli.app.runtime import model_label
        from agentica_cli.app.sessions import SessionStore

        store = SessionStore()
        wanted = options.resume
        if wanted is None and options.continue_latest:
            latest = store.latest(options.work_dir)
            if latest is None:
                front_end.report("no earlier session in this folder; starting a new one")
            else:
                wanted = latest.id
        if wanted is not None:
            try:
                if not options.save:
                    return None, store.load_messages(store.path_for(wanted))
                stored = store.open(wanted)
            except FileNotFoundError:
                raise StartupError(StartupProblem(
                    "no_session", f"no session '{wanted}' (see ~/.agentica/sessions or /resume in the REPL)")) from None
            if stored.notice:  # another agentica is writing the session asked for: this one forked it
                front_end.report(stored.notice)
            return stored, list(stored.messages)
        if not options.save:
            return None, None
        return store.create(options.work_dir, model_label(model), lazy=options.lazy_file), None

    def _cost_meter(self, stored: Session | None) -> CostMeter:
        """An app.prices.CostMeter going on from what `stored` recorded (its earlier processes)."""
        from agentica_cli.app.prices import CostMeter, parse_prices

        return CostMeter.from_stored(parse_prices(dict(self.settings.prices)),
                                     getattr(stored, "usage", None) or {})

    def _count_cost(self, event: Any) -> None:
        """One model request's money (a sub-agent's too) into `cost`, and beside its tokens in the
        stored session's usage file (a later --continue/--resume counts it). Front ends read
        `cost`; none records it itself, so the file is written once per request."""
        from agentica_cli.app.prices import count_request

        self.process_cost.record(count_request(self.cost, getattr(self.model, "id", ""), event, self.stored))

    def use_stored(self, stored: Session | None) -> None:
        """Write to `stored` instead (a front end's own: the SDK's --session-id, --fork-session)."""
        from agentica_cli.app.usage import UsageCounter

        self.stored = stored
        self.id = stored.id if stored is not None else self.options.session_id
        self.messages = list(stored.messages) if stored is not None else self.messages
        self.usage = UsageCounter.for_session(stored)
        self.cost = self._cost_meter(stored)
        self._bind_ids()  # hooks and checkpoints follow the session written to
        if self.checkpoints is not None and self.id is not None:
            self.checkpoints.session_id = self.id

    # -- starting ---------------------------------------------------------------------------

    def find_extensions(self) -> Extensions:
        """The custom commands, agents, skills and hooks, found once (before the agent when a front
        end lists them early); the agent gets these, and start() tells their problems."""
        if self.extensions is None:
            from agentica_cli.app.extension_setup import load_extensions

            self.extensions = load_extensions(self.settings, self.work_dir)
            self._tell_extension_problems = True
        return self.extensions

    async def start_mcp(self) -> list[Any]:
        """Start the MCP servers (once); with mcp_wait "start", wait for them and tell each
        failure. The tools of the servers that are ready."""
        if self.mcp is None:
            return []
        if not self._mcp_started:
            self.launch_mcp()
            if self.options.mcp_wait == "start":
                self._mcp_waited = True
                await self.mcp.wait_ready(timeout=self.options.mcp_wait_timeout)
                self._tell_mcp_failures()
                self._mcp_tools = self.mcp.ready_tools()  # a failed server is left out, not retried mid-run
        return list(self._mcp_tools)

    def launch_mcp(self) -> None:
        """Start the MCP servers in the background (once), waiting for none of them (the REPL
        starts them once the SDK is imported, before the agent exists)."""
        if self.mcp is not None and not self._mcp_started:
            self._mcp_started = True
            self.mcp.start()

    @property
    def mcp_started(self) -> bool:
        return self._mcp_started

    async def start(self, extra_tools: Sequence[Any] = ()) -> Any:
        """Build the agent (once): MCP servers first (see mcp_wait), then the agent with the
        policy, the stored history, the extensions and the checkpoints; SessionStart hooks
        start in the background (the first turn waits for them). Returns the agent."""
        if self._closed:
            raise RuntimeError("this session is closed")
        if self.agent is not None:
            return self.agent
        from agentica_cli.app.runtime import PermissionModePrompt, build_agent

        tools = [*(await self.start_mcp()), *extra_tools]
        if self.agent is not None:  # another task built it while this one waited for the servers
            return self.agent
        stored = self.stored
        agent = build_agent(
            self.settings, self.work_dir, model=self.model, allowed_dirs=self.add_dirs, approve=self.policy,
            messages=self.messages, on_message=self._on_message, on_history_replaced=self._on_history_replaced,
            extra_tools=tools, report=self.front_end.report,
            result_dir=stored.path.with_suffix("") / "tool-results" if stored is not None else None,
            base_prompt=self.options.base_prompt, appended_prompt=self.options.appended_prompt,
            instructions=self.options.instructions, extensions=self.extensions,
        )
        self.agent = agent
        self.extensions = agent.extensions
        if self._tell_extension_problems:
            from agentica_cli.app.extension_setup import listing_notices

            for problem in [*agent.extensions.problems, *listing_notices(agent.extensions, agent.context_window)]:
                self.front_end.report(problem)
        self.mode_prompt = PermissionModePrompt(agent)
        self.mode_prompt.apply(self.policy.mode)
        self._bind_ids()
        self._attach_checkpoints()
        self._starting = asyncio.create_task(self._session_start(agent))
        return agent

    def _on_message(self, message: dict[str, Any]) -> None:
        if self.stored is not None:
            self.stored.append(message)

    def _on_history_replaced(self, messages: list[dict[str, Any]]) -> None:
        if self.stored is not None:
            self.stored.replace_history(messages)

    def _bind_ids(self) -> None:
        """Hooks are told the session's id and its transcript file."""
        if self.agent is None:
            return
        if self.id is not None:
            self.agent.session_id = self.id
        self.agent.transcript_path = str(self.stored.path) if self.stored is not None else ""

    def _attach_checkpoints(self) -> None:
        from agentica_cli.app.checkpoint_setup import attach_checkpoints, checkpoint_options, checkpoints_from_settings

        kind = self.options.checkpoints
        if kind == "project":
            found = checkpoints_from_settings(self.settings, self.work_dir, self.id)
        elif kind == "file-backups" and checkpoint_options(self.settings)["enabled"]:
            from agentica_cli.checkpoints.backups import FileBackups

            found = FileBackups(self.work_dir, session_id=self.id)
            found.notice = ""  # chosen by the front end, not for want of git: nothing to warn about
        else:
            found = None
        self.checkpoints = attach_checkpoints(self.agent, found) if found is not None else None

    async def _session_start(self, agent: DeepAgent) -> list[str]:
        """SessionStart hooks; what they say for the user is reported, and kept for the front end."""
        try:
            messages = list((await agent.start_session()).messages)
        except Exception as exc:  # a broken hook must not cost the session its prompt
            messages = [f"SessionStart hooks failed: {type(exc).__name__}: {exc}"]
        for message in messages:
            self.front_end.report(message)
        return messages

    async def session_start_messages(self) -> list[str]:
        """What the SessionStart hooks said (waits for them), the first time it is asked; then []."""
        if self._start_messages is None:
            starting = self._starting
            self._start_messages = list(await starting) if starting is not None else []
            return list(self._start_messages)
        return []

    async def wait_session_start(self) -> None:
        """Until the SessionStart hooks running now have ended (their notices told)."""
        if self._starting is not None and not self._starting.done():
            await asyncio.wait({self._starting})

    # -- turns ------------------------------------------------------------------------------

    async def sync_mcp_tools(self) -> None:
        """Offer the tools of usable MCP servers: ready ones, and ones that stopped after starting
        (their next call restarts them); a server still starting does not hold up a turn (with
        mcp_wait "first_turn" the first turn waits for them), and one that failed is left out."""
        if self.mcp is None or self.agent is None:
            return
        if not self._mcp_waited and self.options.mcp_wait == "first_turn":
            self._mcp_waited = True
            await self.mcp.wait_ready(timeout=self.options.mcp_wait_timeout)
        self._tell_mcp_failures()
        from agentica_cli.app.mcp_client import offer_usable_tools

        offer_usable_tools(self.agent, self.mcp)

    def _mcp_changed(self, status: McpServerStatus) -> None:
        if status.state == "failed":
            self._tell_mcp_failures()

    def _tell_mcp_failures(self) -> None:
        if self.mcp is None:
            return
        for failed in self.mcp.new_failures():  # each failure is told once
            self.front_end.mcp_failed(failed.failure_message())

    async def turn(self, prompt: Prompt, images: Sequence[Any] = ()) -> AsyncGenerator[Event, None]:
        """Run one prompt; the agent's events as they happen (every `usage` event, a sub-agent's
        too, is counted in `usage`). `cancel()` cancels the task that iterates this."""
        agent = await self.start()
        await self.wait_session_start()  # their context goes with this prompt
        await self.sync_mcp_tools()
        if self.mode_prompt is not None:  # made with the agent
            self.mode_prompt.apply(self.policy.mode)  # a mode set since the last turn
        self._turn = asyncio.current_task()
        try:
            async with aclosing(agent.run_stream(prompt, images)) as events:
                async for event in events:
                    if event.type == "usage":
                        self.usage.add(event)
                        self._count_cost(event)
                        if not event.source:  # a sub-agent's is not this context
                            self.context_tokens = getattr(event, "input_tokens", None)
                    yield event
        finally:
            self._turn = None

    def cancel(self) -> bool:
        """Cancel the running turn (the task iterating `turn`); False when none runs."""
        turn = self._turn
        if turn is None or turn.done():
            return False
        turn.cancel()
        return True

    @property
    def running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    # -- the conversation ------------------------------------------------------------------

    @property
    def history(self) -> list[dict[str, Any]]:
        """The conversation so far: the agent's messages, or before it is built the stored ones."""
        if self.agent is not None:
            return list(self.agent.messages)
        return list(self.messages or [])

    async def clear(self) -> None:
        """/clear: a new conversation in the same servers, agent and checkpoints. SessionEnd
        ("clear") hooks run and SessionStart ones start (`wait_session_start`), a new stored
        session is written from its first message, this conversation's "always" answers are
        forgotten and the counters start from zero."""
        await self.wait_session_start()  # the hooks of the conversation being cleared end first
        stored = None
        if self.options.save:
            from agentica_cli.app.runtime import model_label
            from agentica_cli.app.sessions import SessionStore

            stored = SessionStore().create(self.work_dir, model_label(self.model), lazy=True)
        await self._switch_conversation("clear", "clear", stored, [])
        self.policy.clear_grants()  # "always" answers belong to the conversation they were given in

    async def resume(self, session_id: str) -> Session | None:
        """/resume ID: go on with that stored session (its history, counters and file) in the same
        servers and agent, SessionStart hooks started as after clear(); FileNotFoundError when
        there is none. Without saving (--no-session) its history is only read, and None returned."""
        from agentica_cli.app.sessions import SessionStore

        store = SessionStore()
        stored: Session | None = None
        if self.options.save:
            stored = store.open(session_id)
            messages = list(stored.messages)
        else:
            messages = store.load_messages(store.path_for(session_id))
        await self.wait_session_start()
        if stored is not None and stored.notice:  # another agentica is writing it: this one forked it
            self.front_end.report(stored.notice)
        await self._switch_conversation("other", "resume", stored, messages)
        return stored

    async def _switch_conversation(self, end_reason: str, source: str, stored: Session | None,
                                   messages: list[dict[str, Any]]) -> None:
        """Another conversation in the same agent (the caller waited for this one's SessionStart
        hooks): SessionEnd with `end_reason`, its file closed, `stored` (None: nothing saved) and
        `messages` go on, and SessionStart starts with `source`."""
        if self.agent is not None:
            await self.agent.end_session(end_reason)
            self.agent.reset(source)
            self.agent.messages.extend(messages)
        self.release()
        self.use_stored(stored)
        self.messages = messages
        self.context_tokens = None  # the status line estimates the new history's size
        self._restart_session_hooks()

    def replace_history(self, kept: list[dict[str, Any]], compacted_away: Sequence[dict[str, Any]] = ()) -> None:
        """The same conversation with a shorter history (a rewind): the agent's, the stored file's."""
        if self.agent is not None:
            self.agent.reset(source=None)  # no new session: its hooks do not run again
            self.agent.messages.extend(kept)
            self.agent.compacted_away = list(compacted_away)
        self.messages = list(kept)
        if self.stored is not None:
            self.stored.replace_history(kept)
        self.context_tokens = None

    def _restart_session_hooks(self) -> None:
        """SessionStart for the conversation just opened (after reset: its source is known), in
        the background: `wait_session_start` waits for them, and so does the next turn."""
        if self.agent is not None:
            self._start_messages = None
            self._starting = asyncio.create_task(self._session_start(self.agent))

    # -- custom commands -------------------------------------------------------------------

    def find_command(self, text: str) -> tuple[CustomCommand, str] | None:
        """`/review app.py` -> (the custom command, its arguments); None for any other text."""
        from agentica_cli.app.extension_setup import Extensions, find_command

        return find_command(text.strip(), self.extensions or Extensions())

    async def expand_command(self, name: str, arguments: str, show: Callable[[str], None] | None = None) -> CommandTurn:
        """The command's prompt (its !`commands` run first, each line to `show`, else reported)
        with its model and tools applied to the agent; the caller runs the turn, then restore()."""
        from agentica_cli.app.command_shell import command_turn
        from agentica_cli.extensions.commands import find

        agent = await self.start()
        command = find((self.extensions.commands if self.extensions is not None else {}), name)
        if command is None:
            raise KeyError(f"no custom command /{name}")
        return await command_turn(command, arguments, agent, self.work_dir, show or self.front_end.report)

    async def run_command(self, name: str, arguments: str = "", *, content: Prompt | None = None,
                          images: Sequence[Any] = (),
                          show: Callable[[str], None] | None = None) -> AsyncGenerator[Event, None]:
        """`/name arguments` as a turn: the custom command's prompt (in place of the text of
        `content`, whose images stay), its `model` and `allowed-tools` for this turn only; the
        settings are restored when the turn ends, however it ends."""
        prepared = await self.expand_command(name, arguments, show)
        try:
            async for event in self.turn(_with_text(content, prepared.prompt), images):
                yield event
        finally:
            prepared.restore()

    # -- settings of the session ----------------------------------------------------------

    def switch_model(self, name: str | None) -> ModelSwitch:
        """Model `name` (None: the preset's default) from the next request on; on failure the
        settings and the model stay as they were."""
        from agentica_cli.app.commands import switch_model

        switched = switch_model(self.settings, name)
        if switched.ok:
            self.use_model(switched.model)
        return switched

    def use_model(self, model: Any) -> None:
        self.model = model
        if self.agent is not None:
            self.agent.model = model

    def set_mode(self, mode: str, *, explicit: bool = False) -> None:
        """The permission mode from the next call on; `explicit`: auto as --yes gives it (sensitive
        writes run too). An unknown mode is a ValueError naming the ones there are."""
        if mode not in PERMISSION_MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(PERMISSION_MODES)}")
        self.policy.set_mode(mode, explicit=explicit)
        if self.mode_prompt is not None:
            self.mode_prompt.apply(mode)

    def set_can_ask(self, can_ask: bool) -> None:
        """Whether the user can be asked from now on (`agentica mcp serve`: per client, whether it
        answers elicitation); when not, a call the policy would ask about is refused at once."""
        self.policy.ask = self._ask if can_ask else None

    # -- questions ----------------------------------------------------------------------------

    async def _ask(self, call: Any, verdict: Verdict) -> Answer:
        """The policy asks: Notification hooks, then the policy's question through the front end."""
        if self.agent is not None:
            await self.agent.notify(f"agentica needs your permission to use {getattr(call, 'name', '?')}")
        return await self.front_end.ask_permission(call, self.policy.question(call, verdict))

    # -- the end ------------------------------------------------------------------------------

    @property
    def save_error(self) -> str:
        """Why the conversation stopped being saved (a full disk); "" while it is saved."""
        return getattr(self.stored, "save_error", "") if self.stored is not None else ""

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self, reason: str = "other") -> None:
        """End the session, once: the running turn is cancelled, SessionEnd hooks run (`reason`:
        "other", "prompt_input_exit", "clear"), the MCP servers stop, old checkpoints are pruned
        and the stored session is closed. A second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.cancel()
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        if self.agent is not None:
            try:
                await self.agent.end_session(reason)  # once, if the session started
            except Exception as exc:
                self.front_end.report(f"SessionEnd hooks failed: {type(exc).__name__}: {exc}")
        if self.mcp is not None:
            try:
                await self.mcp.close()
            except Exception:
                pass
        if self.checkpoints is not None:
            try:
                await asyncio.to_thread(self.checkpoints.prune)  # old sessions' snapshots go
            except Exception:
                pass
        self.release()

    def release(self) -> None:
        """The part of `close` that needs no event loop: the stored session's file is closed
        (idempotent; a front end calls it when its loop ended before `close` could run)."""
        if self.stored is not None:
            self.stored.close()


def _with_text(content: Prompt | None, text: str) -> Prompt:
    """`content` with `text` in place of its text (its images stay); `text` alone without content."""
    if isinstance(content, list):
        return [{"type": "text", "text": text},
                *(part for part in content if isinstance(part, dict) and part.get("type") != "text")]
    return text
