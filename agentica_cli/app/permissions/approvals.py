"""Who may run a tool call: rules, the permission mode, grants, and the terminal question.

Modes:
  default       ask before any destructive call
  accept-edits  file edits inside the work dir (and --add-dir folders) run; the rest asks
  auto          never ask (--yes)
  plan          only read-only tools run (and the todo list); the model presents a plan

Order of decision: a deny rule refuses (every mode); plan mode refuses anything not
read-only; a command that asks to run outside the OS sandbox (execute sandbox=false) or to
use the network inside it (network=true, unless [sandbox] network already allows it) asks
with its reason in every mode and is refused under auto, where nobody can answer; a call
that sends data off the machine (fetch_url, web_search, web toolkits: cli/egress.py) asks in
every mode unless an allow rule or grant covers it (per domain) or --yes was given; a write
to a sensitive place (agentica's or git's config and hooks, shell start-up
files) asks in every mode but an explicit --yes; an ask rule asks; auto allows; an allow
rule or a session grant allows; a call that is not destructive runs; accept-edits allows
edits inside the folders and commands the workspace sandbox confines (no network); anything
else asks.

`PermissionPolicy` is the agent's `approve` hook (and its `needs_review` tells the loop
which non-destructive calls it must see). It asks through `ask` when one is given (the
REPL's terminal question); without it (a -p run, a pipe, CI) a call that needs asking is
refused at once, the model is told why, and `on_refusal` reports the flag that allows it.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentica_cli.app.permissions.tool_kinds import COMMAND_TOOLS, EDIT_TOOLS
from agentica_cli.tools.callables import accepts_positional, require_positional

if TYPE_CHECKING:  # imported when a call is decided: agentica_cli.agent is too heavy for the REPL's first paint
    from agentica_cli.agent.approval import Decision
    from agentica_cli.app.settings.config import Settings
    from agentica_cli.project_grants import StoredGrant

PATH_KEYS = ("file_path", "path", "filename", "file")
COMMAND_KEYS = ("command", "cmd")


@dataclass(frozen=True)
class Answer:
    choice: str  # "once", "always", "project" (always, saved for this project) or "no"
    message: str = ""


class AskUser(Protocol):
    """The front end's question about one call: `ask(call, verdict) -> Answer`, awaited when it
    is a coroutine. (A one-argument `ask(call)` is adapted where the policy is given it.)"""

    def __call__(self, call: Any, verdict: Verdict, /) -> Answer | Awaitable[Answer]: ...


class RefusalHook(Protocol):
    """Told of each call the policy refused: `on_refusal(name, mode, why)` (-p reports the flag
    that would allow it). (A two-argument `on_refusal(name, mode)` is adapted where it is given.)"""

    def __call__(self, name: str, mode: str, why: Reason, /) -> None: ...


ASK_SHAPE = "ask(call, verdict) -> Answer (sync or async), or ask(call)"
REFUSAL_SHAPE = "on_refusal(name, mode, why) -> None, or on_refusal(name, mode)"


def as_asker(ask: Callable[..., Answer | Awaitable[Answer]] | None) -> AskUser | None:
    """`ask` in the two-argument shape; TypeError at once for a callable of neither shape."""
    if ask is None or accepts_positional(ask, 2):
        return ask
    require_positional(ask, 1, ASK_SHAPE)
    one_argument = ask

    def ask_without_verdict(call: Any, verdict: Verdict, /) -> Answer | Awaitable[Answer]:
        return one_argument(call)

    return ask_without_verdict


def as_refusal_hook(on_refusal: Callable[..., None] | None) -> RefusalHook | None:
    """`on_refusal` in the three-argument shape; TypeError at once for a callable of neither shape."""
    if on_refusal is None or accepts_positional(on_refusal, 3):
        return on_refusal
    require_positional(on_refusal, 2, REFUSAL_SHAPE)
    two_arguments = on_refusal

    def refused_without_reason(name: str, mode: str, why: Reason, /) -> None:
        two_arguments(name, mode)

    return refused_without_reason


def call_args(call: Any) -> dict[str, Any]:
    args = getattr(call, "args", None)
    if isinstance(args, dict):
        return args
    raw = getattr(call, "arguments", None)
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        import json

        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def edit_path(name: str, args: dict[str, Any]) -> str | None:
    if name not in EDIT_TOOLS:
        return None
    for key in PATH_KEYS:
        if isinstance(args.get(key), str):
            return args[key]
    return None


def resolve_edit_path(path: str, work_dir: Path) -> Path:
    """Where an edit lands, resolved the way the file tools do (`~` expanded, relative to the work dir)."""
    expanded = os.path.expanduser(path)
    return Path(expanded) if os.path.isabs(expanded) else work_dir / expanded


def is_inside(path: Path, folders: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(real == f or f in real.parents for f in folders)


@dataclass(frozen=True)
class Grant:
    """A "yes, and don't ask again" answer: a tool, or for commands a prefix of words
    (`pytest`, `git status`) or one exact command."""

    tool: str
    words: tuple[str, ...] = ()
    exact: bool = False
    domain: str = ""  # for a tool that sends data off the machine: the one host it may reach

    def describe(self) -> str:
        if self.domain:
            return f"{self.tool}: {self.domain}"
        if not self.words:
            return f"{self.tool} (every call)"
        from agentica_cli.app.permissions.shell_parts import display_words

        shown = display_words(list(self.words))
        return f"{self.tool}: exactly `{shown}`" if self.exact else f"{self.tool}: `{shown}` commands"

    def scope(self) -> str:
        """What the "always" answer offers, for the question (the caller makes it safe to print)."""
        if self.domain:
            return f"{self.tool} to {self.domain}"
        if not self.words:
            return self.tool
        from agentica_cli.app.permissions.shell_parts import display_words

        shown = display_words(list(self.words))
        return f"exactly `{shown}`" if self.exact else f"`{shown}` commands"

    def covers(self, words: list[str]) -> bool:
        from agentica_cli.app.permissions.shell_parts import starts_with

        return list(self.words) == words if self.exact else starts_with(words, list(self.words))

    def stored(self) -> StoredGrant:
        return {"tool": self.tool, "words": list(self.words), "exact": self.exact, "domain": self.domain}

    @classmethod
    def from_stored(cls, entry: StoredGrant) -> Grant:
        return cls(entry["tool"], tuple(entry["words"]), entry["exact"], entry["domain"])


def scopes_text(grants: list[Grant]) -> str:
    """What several grants (one per part of a compound command) allow, for the question."""
    scopes = list(dict.fromkeys(g.scope() for g in grants))
    return scopes[0] if len(scopes) == 1 else ", ".join(scopes[:-1]) + " and " + scopes[-1]


class Reason(str, Enum):
    """Why the policy refuses or asks. A str Enum: `verdict.why == "network"` still holds, and
    the reason's value is what -p's stream-json and the hooks see."""

    PLAIN = ""  # a destructive call in a mode that asks
    PLAN = "plan"  # plan mode refuses what is not read-only
    RULE = "rule"  # a deny or ask rule (or a PreToolUse hook that asks)
    SENSITIVE = "sensitive"  # agentica's or git's config and hooks, shell start-up files
    OUTSIDE = "outside"  # an edit outside the work folders (accept-edits)
    ESCALATION = "escalation"  # execute(sandbox=false): out of the OS sandbox
    NETWORK = "network"  # execute(network=true) in a sandbox that keeps the network out
    EGRESS = "egress"  # sends data off this machine (fetch_url, web_search, web toolkits)
    CHANGING = "changing"  # the path could not be checked: the folder tree is changing

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Verdict:
    """What the policy decided before asking anyone: allow, deny or ask (and why)."""

    kind: str  # "allow", "deny" or "ask"
    message: str = ""  # for deny: what the model reads
    why: Reason = Reason.PLAIN  # for deny/ask
    note: str = ""  # for ask: a line the question shows (a sensitive path, the rule that asks)

    def __post_init__(self) -> None:
        object.__setattr__(self, "why", Reason(self.why))  # a plain string from older callers


# Reasons whose question offers no "always": asked every time.
ASKED_EVERY_TIME = frozenset({Reason.SENSITIVE, Reason.RULE, Reason.ESCALATION, Reason.NETWORK})

# What a PreToolUse hook's "allow" does not lift: only the user may answer these.
USER_ONLY = frozenset({Reason.ESCALATION, Reason.NETWORK})


@dataclass(frozen=True)
class Question:
    """What every front end asks the user about one call: the same note and the same "always"
    offer in the REPL's prompt and in ACP's session/request_permission (docs/permissions.md)."""

    name: str
    args: dict[str, Any]
    reason: Reason
    note: str  # the line that says why it asks ("" for the plain case), safe to print
    always: str | None  # what "always" would allow, safe to print; None: not offered


@dataclass(frozen=True)
class Settled:
    """An answer applied: the decision, and for a remembered "always" what it now allows."""

    decision: Decision
    granted: str | None = None
    mode_changed: bool = False  # "always" for an edit switched default to accept-edits

PLAN_MODE_TOOLS = frozenset({"write_todos", "todo_write", "update_todos", "todos", "task", "ask_user"})


class PermissionPolicy:
    """Decides each tool call: deny rules, sensitive files, plan mode, ask rules, the mode,
    allow rules and this session's grants, in that order; then asks or refuses."""

    _ask: AskUser | None
    _on_refusal: RefusalHook | None

    def __init__(
        self,
        mode: str,
        work_dir: Path,
        *,
        allowed_dirs: tuple[Path, ...] | list[Path] = (),
        always_allow: tuple[str, ...] | list[str] = (),
        rules: list[Any] | None = None,
        explicit_auto: bool = False,
        ask: Callable[..., Answer | Awaitable[Answer]] | None = None,
        on_refusal: Callable[..., None] | None = None,
    ):
        from agentica_cli.app.permissions.permission_rules import PermissionRule

        self.mode = mode
        self.explicit_auto = explicit_auto  # --yes / --permission-mode auto: even sensitive writes run
        self.work_dir = work_dir
        self.folders = [Path(os.path.realpath(p)) for p in (work_dir, *allowed_dirs)]
        self.rules: list[PermissionRule] = list(rules or [])
        self.rules += [PermissionRule.parse("allow", text, "") for text in always_allow]
        self.grants: list[Grant] = []  # this session's "always" answers, in order
        self.project_grants: list[Grant] = []  # "always in this project" answers (project_grants.py)
        self.project_grants_home: Path | None = None  # where they are saved; None: not saved (tests, ACP)
        self.ask = ask
        self.on_refusal = on_refusal
        # Told what an "always" answer now allows (and whether it changed the mode), for the
        # front end to say so: the REPL prints it, ACP sends the new mode.
        self.on_grant: Callable[[str, bool], Awaitable[None] | None] | None = None
        self.refusals: list[str] = []
        # The agentica_cli.sandbox.Sandbox that execute's commands run in (set by the CLI);
        # None: commands run unconfined and nothing is asked less because of it.
        self.sandbox: Any = None

    @property
    def ask(self) -> AskUser | None:
        """Who is asked when a call needs asking; None: nobody can be (the call is refused)."""
        return self._ask

    @ask.setter
    def ask(self, ask: Callable[..., Answer | Awaitable[Answer]] | None) -> None:
        self._ask = as_asker(ask)

    @property
    def on_refusal(self) -> RefusalHook | None:
        return self._on_refusal

    @on_refusal.setter
    def on_refusal(self, on_refusal: Callable[..., None] | None) -> None:
        self._on_refusal = as_refusal_hook(on_refusal)

    # -- mode and grants ----------------------------------------------------------------

    def set_mode(self, mode: str, *, explicit: bool = False) -> None:
        self.mode = mode
        self.explicit_auto = mode == "auto" and explicit

    def revoke(self, index: int) -> Grant:
        return self.grants.pop(index)

    def clear_grants(self) -> None:
        self.grants.clear()

    def load_project_grants(self, home: Path) -> None:
        """This project's saved "always in this project" answers, from the user's file in `home`."""
        from agentica_cli.project_grants import load_project_grants

        self.project_grants_home = home
        self.project_grants = [Grant.from_stored(g) for g in load_project_grants(self.work_dir, home)]

    def revoke_project(self, index: int) -> Grant:
        grant = self.project_grants.pop(index)
        self._save_project_grants()
        return grant

    def _save_project_grants(self) -> None:
        if self.project_grants_home is None:
            return
        from agentica_cli.project_grants import save_project_grants

        save_project_grants(self.work_dir, [g.stored() for g in self.project_grants], self.project_grants_home)

    def grants_for(self, call: Any) -> list[Grant] | None:
        """What "always" would grant for this call: one grant, or for a compound command
        (`git status && pytest`) one per part; None when some part cannot be granted (an
        opaque part, a sensitive path): that call is asked each time."""
        name = _call_name(call)
        command = _command_of(call_args(call))
        if name in EDIT_TOOLS or command is None:
            single = self.grant_for(call)
            return [single] if single is not None else None
        from agentica_cli.app.permissions.sensitive_paths import command_touches_sensitive
        from agentica_cli.app.permissions.shell_parts import parse_command

        parsed = parse_command(command)
        if not parsed.grantable or not parsed.parts or command_touches_sensitive(command):
            return None
        return list(dict.fromkeys(_grant_for_words(name, words) for words in parsed.parts))

    def grant_for(self, call: Any) -> Grant | None:
        """What "always" would grant for this call when one grant covers it, else None (a
        compound command: see grants_for)."""
        name = _call_name(call)
        args = call_args(call)
        if name in EDIT_TOOLS:
            return Grant(name)  # answered by switching to accept-edits (see `remember`)
        from agentica_cli.app.permissions.egress import EGRESS_TOOLS, host_of, url_of

        if name in EGRESS_TOOLS:
            url = url_of(args)
            if url is None:
                return Grant(name)  # a search: every query (the user was shown this one)
            host = host_of(url)
            return Grant(name, domain=host) if host else None
        command = _command_of(args)
        if command is None:
            return Grant(name)
        from agentica_cli.app.permissions.sensitive_paths import command_touches_sensitive
        from agentica_cli.app.permissions.shell_parts import parse_command

        parsed = parse_command(command)
        if not parsed.grantable or len(parsed.parts) != 1 or command_touches_sensitive(command):
            return None
        return _grant_for_words(name, parsed.parts[0])

    def always_scope(self, call: Any, verdict: Verdict) -> str | None:
        """What an "always" answer would allow, for the question; None when it is not offered:
        sensitive files, ask rules, runs outside the sandbox or with network are asked each time,
        an edit in accept-edits mode (outside the folders) cannot be widened by a grant, and a
        compound command is offered it only when every part can be granted (each part's)."""
        if verdict.why in ASKED_EVERY_TIME:
            return None
        from agentica_cli.app.safe_text import safe_text

        if _call_name(call) in EDIT_TOOLS:
            return "file edits in this folder (accept-edits)" if self.mode == "default" else None
        grants = self.grants_for(call)  # a compound command: one per part, when every part can be granted
        return None if not grants else safe_text(scopes_text(grants), keep_newlines=False)

    def question(self, call: Any, verdict: Verdict) -> Question:
        """The question for a call this policy asks about, as every front end shows it."""
        return Question(_call_name(call), call_args(call), verdict.why, verdict.note, self.always_scope(call, verdict))

    def apply_answer(self, call: Any, verdict: Verdict, answer: Answer) -> Settled:
        """The user's answer to `question(call, verdict)`: "always" is remembered only where the
        question offered it (the guard every front end goes through), then the call runs."""
        from agentica_cli.agent.approval import Decision

        name = _call_name(call)
        if answer.choice in ("once", "always", "project"):  # project: always, saved for this project
            if answer.choice != "once" and self.always_scope(call, verdict) is not None:
                mode = self.mode
                granted = self.remember(call, project=answer.choice == "project")
                return Settled(Decision.allow(), granted, mode != self.mode)
            return Settled(Decision.allow())
        reason = f"The user declined to run '{name}'."
        if answer.message:
            reason += f" They said: {answer.message}"
        return Settled(Decision.deny(reason))

    def remember(self, call: Any, *, project: bool = False) -> str:
        """Record an "always" answer (`project`: saved for this project, beyond this session);
        returns what it now allows, for the user. Front ends answer through `apply_answer`,
        which calls this only where "always" was offered."""
        name = _call_name(call)
        if name in EDIT_TOOLS:
            if self.mode == "default":
                self.mode = "accept-edits"
                return "file edits inside the work folder, for this session (mode accept-edits)"
            return "this edit"
        grants = self.grants_for(call)
        if grants is None:
            return "this call only (part of this command cannot be granted, so it is asked each time)"
        kept = self.project_grants if project else self.grants
        for grant in grants:
            if grant not in kept:
                kept.append(grant)
        if project:
            self._save_project_grants()
        where = "in this project" if project else "this session"
        return "; ".join(g.describe() for g in grants) + f" ({where})"

    def _granted(self, name: str, args: dict[str, Any]) -> bool:
        grants = [g for g in (*self.grants, *self.project_grants) if g.tool == name]
        if not grants:
            return False
        if any(g.domain for g in grants):
            from agentica_cli.app.permissions.egress import domain_matches, host_of, url_of

            url = url_of(args)
            host = host_of(url) if url is not None else None
            if any(g.domain and domain_matches(g.domain, host) for g in grants):
                return True
        if any(not g.words and not g.domain for g in grants):
            return True
        command = _command_of(args)
        if command is None:
            return False
        from agentica_cli.app.permissions.shell_parts import parse_command

        parsed = parse_command(command)  # (a sensitive command never gets here: evaluate() asks first)
        if not parsed.grantable:
            return False
        return all(any(g.covers(words) for g in grants if g.words) for words in parsed.parts)

    # -- deciding -------------------------------------------------------------------------

    def _edit_inside_work_dir(self, name: str, args: dict[str, Any]) -> bool:
        path = edit_path(name, args)
        if path is None:
            return False
        return is_inside(resolve_edit_path(path, self.work_dir), self.folders)

    def _rule(self, kind: str, name: str, args: dict[str, Any]) -> Any:
        return next((r for r in self.rules if r.kind == kind and r.matches(name, args, self.work_dir)), None)

    def _sensitive(self, name: str, args: dict[str, Any]) -> str | None:
        from agentica_cli.app.permissions.sensitive_paths import command_touches_sensitive, sensitive_reason

        path = edit_path(name, args)
        if path is not None:
            reason = sensitive_reason(path, self.work_dir)
            return f"{path}: {reason}" if reason else None
        command = _command_of(args)
        if command is not None:
            return command_touches_sensitive(command)
        return None

    def _sandbox_confines(self) -> bool:
        return self.sandbox is not None and bool(getattr(self.sandbox, "confines", False))

    def _sandboxed_command(self, name: str) -> bool:
        """An execute call that runs confined to the work folders with no network."""
        return (name == "execute" and self._sandbox_confines() and not self.sandbox.policy.network
                and self.sandbox.policy.mode in ("workspace-write", "read-only"))

    def _escalation(self, name: str, args: dict[str, Any]) -> Verdict | None:
        """execute(sandbox=false): asked in every mode with the reason, refused where nobody
        can be asked (--yes): only the user lifts the sandbox (--sandbox off)."""
        if name != "execute" or "sandbox" not in args or args["sandbox"] is True or not self._sandbox_confines():
            return None
        reason = args.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            reason = "(no reason given)"
        if self.mode == "auto":
            return Verdict("deny", f"'{name}' was not run: it asked to run outside the sandbox, and this run "
                                   "cannot ask the user, so it was refused. Do not retry it or try another way; "
                                   "tell the user what you needed and why. Only the user can lift the sandbox "
                                   "(agentica --sandbox off).", Reason.ESCALATION)
        from agentica_cli.app.safe_text import safe_text

        shown = safe_text(reason, keep_newlines=False)
        return Verdict("ask", why=Reason.ESCALATION, note=f"runs OUTSIDE the sandbox: {shown}")

    def _network_request(self, name: str, args: dict[str, Any]) -> Verdict | None:
        """execute(network=true) in a sandbox that keeps the network out: asked in every mode
        with the reason, refused where nobody can be asked. Nothing to decide when commands
        reach the network anyway ([sandbox] network = true, a backend that cannot confine it)."""
        # Anything but an explicit false is a request: a "true" string may be coerced to True later.
        if name != "execute" or args.get("network", False) in (False, None) or not self._sandbox_confines():
            return None
        if not getattr(self.sandbox, "network_confined", False):
            return None
        if self.mode == "auto":
            return Verdict("deny", f"'{name}' was not run: it asked for the network, and this run cannot ask the "
                                   "user, so it was refused. Do not retry it or try another way; tell the user "
                                   "what you needed and why.", Reason.NETWORK)
        from agentica_cli.app.safe_text import safe_text

        reason = args.get("reason")
        shown = safe_text(reason, keep_newlines=False) if isinstance(reason, str) and reason.strip() else (
            "(no reason given)")
        return Verdict("ask", why=Reason.NETWORK, note=f"uses the NETWORK (still sandboxed for files): {shown}")

    def _egress(self, name: str, args: dict[str, Any]) -> Verdict | None:
        """A call that sends data off the machine (fetch_url, web_search, web toolkits): asked
        in every mode, unless an allow rule or grant covers it (per domain for URLs) or the
        person running agentica chose --yes. None: not such a call, or --yes."""
        from agentica_cli.app.permissions.egress import EGRESS_TOOLS, what_leaves

        if name not in EGRESS_TOOLS or (self.mode == "auto" and self.explicit_auto):
            return None
        rule = self._rule("ask", name, args)
        if rule is not None:
            return Verdict("ask", why=Reason.RULE, note=f"a permission rule asks: {rule.text}")
        if self._rule("allow", name, args) is not None or self._granted(name, args):
            return Verdict("allow")
        return Verdict("ask", why=Reason.EGRESS, note=f"sends data off this machine: {what_leaves(name, args)}")

    def evaluate(self, call: Any) -> Verdict:
        """The decision that needs no one: allow, deny, or ask (when someone can be asked).

        Rules and folders are judged by where paths really lead (realpath); a path that
        changes while it is looked at (a symlink turned into a folder: readlink EINVAL, a
        loop: ELOOP) cannot be judged, so the call is refused with a reason, never let through
        and never left to escape as an internal error."""
        try:
            return self._evaluate(call)
        except (OSError, ValueError) as err:
            name = _call_name(call)
            why = getattr(err, "strerror", None) or str(err)
            return Verdict("deny", f"'{name}' was not run: its path could not be checked ({why}); something is "
                                   "changing the folder tree. Try again once it is stable.", Reason.CHANGING)

    def _evaluate(self, call: Any) -> Verdict:
        name = _call_name(call)
        args = call_args(call)
        function = getattr(call, "function", None)
        destructive = bool(getattr(function, "is_destructive", True))
        read_only = bool(getattr(function, "is_read_only", False))
        rule = self._rule("deny", name, args)
        if rule is not None:
            where = f" ({rule.source})" if rule.source else ""
            return Verdict("deny", f"'{name}' was not run: a permission rule denies it: {rule.text}{where}. "
                                   f"{_opaque_note(args)}Do not try to get around the rule; tell the user if you "
                                   "need it.", Reason.RULE)
        if self.mode == "plan" and not (read_only or name in PLAN_MODE_TOOLS):
            return Verdict(
                "deny",
                f"Plan mode is on: '{name}' is not a read-only tool, so it was not run. Do not try other ways to "
                "make changes; finish by presenting your plan (the files and the edits or commands you would "
                "make) for the user to approve.",
                Reason.PLAN,
            )
        escalation = self._escalation(name, args) or self._network_request(name, args) or self._egress(name, args)
        if escalation is not None:
            return escalation
        sensitive = self._sensitive(name, args) if (destructive or name in EDIT_TOOLS) else None
        if sensitive and not (self.mode == "auto" and self.explicit_auto):
            return Verdict("ask", why=Reason.SENSITIVE, note=f"sensitive: {sensitive}")
        rule = self._rule("ask", name, args)
        if rule is not None and not (self.mode == "auto" and self.explicit_auto):
            return Verdict("ask", why=Reason.RULE, note=f"a permission rule asks: {rule.text}")
        if self.mode == "auto":
            return Verdict("allow")
        if self._rule("allow", name, args) is not None or self._granted(name, args):
            return Verdict("allow")
        if not destructive:
            return Verdict("allow")
        if self.mode == "accept-edits" and self._edit_inside_work_dir(name, args):
            return Verdict("allow")
        if self.mode == "accept-edits" and self._sandboxed_command(name):
            return Verdict("allow")  # it can change only what an edit could, and reach no network
        outside = self.mode == "accept-edits" and edit_path(name, args) is not None
        return Verdict("ask", why=Reason.OUTSIDE if outside else Reason.PLAIN)

    def describe_tool(self, function: Any) -> str:
        """What happens to a call of this tool in the current mode, for /tools."""
        name = getattr(function, "name", "")
        destructive = bool(getattr(function, "is_destructive", False))
        read_only = bool(getattr(function, "is_read_only", False))
        covering = [r for r in self.rules if r.covers_tool(name)]
        if any(r.kind == "deny" and r.pattern is None for r in covering):
            return "denied by a rule"
        if self.mode == "plan" and not (read_only or name in PLAN_MODE_TOOLS):
            return "refused in plan mode"
        some = " (some calls: rules)" if covering else ""
        from agentica_cli.app.permissions.egress import EGRESS_TOOLS

        if name in EGRESS_TOOLS and not (self.mode == "auto" and self.explicit_auto):
            if any(g.tool == name and not g.words and not g.domain for g in self.grants) or any(
                r.kind == "allow" and r.pattern is None for r in covering
            ):
                return "runs (allowed this session)"
            domains = [g.domain for g in self.grants if g.tool == name and g.domain]
            allowed = f" (allowed: {', '.join(domains)})" if domains else ""
            return "asks: sends data off this machine" + allowed + some
        if self.mode == "auto" or not destructive:
            sensitive = " (sensitive files ask)" if name in EDIT_TOOLS or name in COMMAND_TOOLS else ""
            return ("runs" + (sensitive if self.mode == "auto" and not self.explicit_auto else "")) + some
        if any(g.tool == name and not g.words for g in self.grants) or any(
            r.kind == "allow" and r.pattern is None for r in covering
        ):
            return "runs (allowed this session)"
        granted = [g for g in self.grants if g.tool == name]
        if granted:
            some = f" ({len(granted)} command prefix(es) granted)" + some
        if self.mode == "accept-edits" and name in EDIT_TOOLS:
            return "runs inside the work folders, asks elsewhere" + some
        if self.mode == "accept-edits" and self._sandboxed_command(name):
            return "runs in the sandbox; asks to run outside it or with network" + some
        return "asks" + some

    def needs_review(self, call: Any) -> bool:
        """Whether a call the loop would run without asking (not destructive) needs this
        policy's decision: a deny or ask rule names it, or plan mode refuses it."""
        return self.evaluate(call).kind != "allow"

    async def __call__(self, call: Any) -> Decision:
        from agentica_cli.agent.approval import Decision

        name = _call_name(call)
        verdict = self.evaluate(call)
        if verdict.kind == "allow":
            return Decision.allow()
        if verdict.kind == "deny":
            self._refused(name, verdict.why)
            return Decision.deny(verdict.message)
        return await self._ask_user(call, verdict)

    async def confirm(self, call: Any, reason: str) -> Decision:
        """A PreToolUse hook said "ask": the user decides, in every mode (deny rules still win)."""
        from agentica_cli.agent.approval import Decision

        verdict = self.evaluate(call)
        if verdict.kind == "deny":
            self._refused(_call_name(call), verdict.why)
            return Decision.deny(verdict.message)
        return await self._ask_user(call, Verdict("ask", why=Reason.RULE, note=f"a hook asks: {reason}"))

    async def hook_allowed(self, call: Any) -> Decision:
        """A PreToolUse hook said "allow": no question, but deny rules and plan mode still refuse,
        and what only the user may allow (running outside the sandbox, a sandboxed command's
        network) is still asked, or refused where nobody can be asked: a hook is a program the
        repository or a plugin may have put there."""
        from agentica_cli.agent.approval import Decision

        verdict = self.evaluate(call)
        if verdict.kind == "deny":
            self._refused(_call_name(call), verdict.why)
            return Decision.deny(verdict.message)
        if verdict.kind == "ask" and verdict.why in USER_ONLY:
            return await self._ask_user(call, verdict)
        return Decision.allow()

    async def _ask_user(self, call: Any, verdict: Verdict) -> Decision:
        from agentica_cli.agent.approval import Decision

        name = _call_name(call)
        if self.ask is None:
            self._refused(name, verdict.why)
            return Decision.deny(self._cannot_ask_message(name, verdict))
        answer = self.ask(call, verdict)
        if inspect.isawaitable(answer):
            answer = await answer
        settled = self.apply_answer(call, verdict, answer)
        if settled.granted is not None and self.on_grant is not None:
            told = self.on_grant(settled.granted, settled.mode_changed)
            if inspect.isawaitable(told):
                await told
        return settled.decision

    def _refused(self, name: str, why: Reason) -> None:
        self.refusals.append(name)
        if self.on_refusal is not None:
            self.on_refusal(name, self.mode, why)

    def _cannot_ask_message(self, name: str, verdict: Verdict) -> str:
        if verdict.why == Reason.SENSITIVE:
            what = verdict.note.removeprefix("sensitive: ")
            return (f"'{name}' was not run: it changes a sensitive file or setting ({what}), which always "
                    "needs the user's confirmation, and this run cannot ask. Do not retry it or "
                    "try another way; tell the user what you would have changed.")
        if verdict.why == Reason.ESCALATION:
            return (f"'{name}' was not run: it asked to run outside the sandbox, which always needs the user's "
                    "confirmation, and this run cannot ask. Do not retry it or try another way; tell the user "
                    "what you needed and why. Only the user can lift the sandbox (agentica --sandbox off).")
        if verdict.why == Reason.NETWORK:
            return (f"'{name}' was not run: it asked for the network, which always needs the user's confirmation, "
                    "and this run cannot ask. Do not retry it or try another way; tell the user what you needed "
                    "and why.")
        if verdict.why == Reason.EGRESS:
            what = verdict.note.removeprefix("sends data off this machine: ")
            return (f"'{name}' was not run: it sends data off this machine ({what}), which needs the user's "
                    "permission, and this run cannot ask. Do not retry it or try another way; tell the user what "
                    "you wanted to fetch or search. They can allow a domain with a rule such as "
                    f"{name}(domain:docs.python.org).")
        if verdict.why == Reason.OUTSIDE:
            return (f"'{name}' was not run: it edits a file outside the work folder, and this run cannot ask. "
                    "Do not retry it; tell the user, who can allow that folder with --add-dir.")
        return (f"'{name}' was not run: it needs the user's permission and this run cannot ask "
                f"(agentica -p, permission mode '{self.mode}'). Do not retry it; tell the user "
                "what you would have done, and that they can allow it with --yes or --permission-mode.")


def _grant_for_words(name: str, words: list[str]) -> Grant:
    """The grant for one simple command: its prefix (`git status`, `pytest`), or exactly the
    command for a wrapper (`sudo x`, `env A=1 x`) whose own words say nothing."""
    from agentica_cli.app.permissions.shell_parts import _WRAPPERS, grant_prefix

    prefix = grant_prefix(words)
    exact = prefix == words and words[0].rsplit("/", 1)[-1] in _WRAPPERS
    return Grant(name, tuple(prefix), exact=exact)


def _opaque_note(args: dict[str, Any]) -> str:
    """For a command a deny rule matched only because the check cannot read it: why."""
    command = _command_of(args)
    if command is None:
        return ""
    from agentica_cli.app.permissions.shell_parts import parse_command

    parsed = parse_command(command)
    if not parsed.opaque:
        return ""
    return (f"The command could not be fully checked against the rules ({parsed.opaque}), so every deny rule "
            "matches it; if it does not do what the rule forbids, write it without that (plain quotes, no "
            "here-document or substitution; write files with write_file). ")


def _call_name(call: Any) -> str:
    return getattr(call, "name", "") or getattr(getattr(call, "function", None), "name", "") or ""


def _command_of(args: dict[str, Any]) -> str | None:
    for key in COMMAND_KEYS:
        if isinstance(args.get(key), str):
            return args[key]
    return None


def refusal_hint(name: str, mode: str, why: str = Reason.PLAIN) -> str:
    """What stderr says when a -p run refused a call."""
    if why == Reason.RULE:
        return (f"agentica: refused '{name}': a deny rule matches it ([permissions] deny in config, "
                "or --disallowed-tools)")
    if mode == "plan" or why == Reason.PLAN:
        return f"agentica: refused '{name}' (plan mode is read-only); run without --permission-mode plan to allow it"
    if why == Reason.SENSITIVE:
        return (f"agentica: refused '{name}': it changes agentica's or git's config, hooks or a shell start-up "
                "file, which always asks; only an explicit --yes allows it")
    if why == Reason.ESCALATION:
        return (f"agentica: refused '{name}': it asked to run outside the sandbox, which is never allowed "
                "without asking; re-run with --sandbox off to lift the sandbox")
    if why == Reason.NETWORK:
        return (f"agentica: refused '{name}': it asked for the network, which is never allowed without asking; "
                "set network = true under [sandbox] in the config to let sandboxed commands connect")
    if why == Reason.EGRESS:
        example = f'"{name}(domain:HOST)"' if name == "fetch_url" else f'"{name}"'
        return (f"agentica: refused '{name}': it sends data off this machine, which -p runs never allow "
                f"unasked; allow it with --allowed-tools {example} or [permissions] allow, or --yes")
    if why == Reason.OUTSIDE:
        return f"agentica: refused '{name}': the file is outside the work folder; allow its folder with --add-dir"
    edit = name in EDIT_TOOLS
    if edit and mode == "accept-edits":
        return f"agentica: refused '{name}': re-run with --add-dir for that folder, or --yes"
    allow = "--permission-mode accept-edits (edits inside the work dir) or --yes" if edit else "--yes"
    return f"agentica: refused '{name}': -p runs never ask for permission; re-run with {allow} to allow it"


def policy_from_settings(
    settings: Settings,
    work_dir: Path,
    *,
    allowed_dirs: list[Path] | tuple[Path, ...] = (),
    ask: Callable[..., Answer | Awaitable[Answer]] | None = None,
    on_refusal: Callable[..., None] | None = None,
    on_grant: Callable[[str, bool], Awaitable[None] | None] | None = None,
) -> PermissionPolicy:
    """The policy for a run: the mode, every layer's [permissions] rules (a project's only
    once trusted: config holds them back before), and who to ask."""
    from agentica_cli.app.permissions.permission_rules import parse_rules
    from agentica_cli.app.sandbox_settings import sandbox_for

    policy = PermissionPolicy(
        settings.permission_mode,
        work_dir,
        allowed_dirs=allowed_dirs,
        rules=parse_rules(list(settings.permission_rules)),
        explicit_auto=settings.explicit_auto,
        ask=ask,
        on_refusal=on_refusal,
    )
    policy.on_grant = on_grant
    policy.sandbox = sandbox_for(settings, work_dir, allowed_dirs)
    from agentica_cli.private_files import agentica_home

    policy.load_project_grants(agentica_home())  # "always in this project" answers given before
    return policy
