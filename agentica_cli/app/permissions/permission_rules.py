"""Permission rules from config, in the form Claude Code users know.

    [permissions]
    allow = ["execute(pytest *)", "execute(git diff *)", "read_file"]
    deny  = ["execute(rm -rf *)", "read_file(.env)", "mcp__git__git_push"]
    ask   = ["execute(git push *)"]

A rule is a tool name (a `*` glob allowed: `mcp__git__*`), optionally with a pattern in
parentheses. For `execute` the pattern matches each simple command of the command line
(`*` is the only wildcard; `pytest *` also matches a bare `pytest`; Claude Code's
`npm run test:*` prefix form works too). For file tools it matches the path relative to the
work folder with .gitignore rules (`.env` anywhere, `src/**`, `*.key`; an absolute pattern
matches the absolute path). For other tools it matches the call's main argument.

Claude Code's tool names are understood (`Bash`, `Read`, `Edit`, `Write`, `MultiEdit`,
`Grep`, `Glob`, `WebFetch`, `WebSearch`), and MCP tools may be named `mcp__server__tool`
or by their function name here (`server__tool`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentica_cli.app.permissions.tool_kinds import COMMAND_TOOLS

RULE_KINDS = ("deny", "ask", "allow")
PATH_ARGS = ("file_path", "path", "filename", "file")
MAIN_ARGS = ("command", "file_path", "path", "pattern", "query", "url", "name")
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "Bash": ("execute",),
    "Read": ("read_file",),
    "Edit": ("edit_file", "multi_edit_file"),
    "MultiEdit": ("multi_edit_file",),
    "Write": ("write_file",),
    "Grep": ("grep",),
    "Glob": ("glob",),
    "LS": ("ls",),
    "WebFetch": ("fetch_url",),
    "WebSearch": ("web_search",),
    "Task": ("task",),
    "TodoWrite": ("write_todos",),
}
_RULE = re.compile(r"^\s*([A-Za-z0-9_.*:\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be read; the message names it."""


def _wildcard(pattern: str) -> re.Pattern[str]:
    """`*` matches anything; every other character is literal."""
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)),
                      re.DOTALL)


@dataclass(frozen=True)
class PermissionRule:
    kind: str  # deny, ask or allow
    text: str  # as written, for /permissions
    tools: tuple[str, ...]  # tool-name globs this rule covers
    pattern: str | None  # what is inside the parentheses
    source: str = ""

    @classmethod
    def parse(cls, kind: str, text: str, source: str = "") -> PermissionRule:
        match = _RULE.match(text)
        if not match:
            raise RuleError(f"permission rule {text!r} is not 'tool' or 'tool(pattern)'")
        name, pattern = match.group(1), match.group(2)
        if name.startswith("mcp__"):
            tools: tuple[str, ...] = (name, name[len("mcp__"):])
        else:
            tools = CLAUDE_NAMES.get(name, (name,))
        pattern = pattern.strip() if pattern is not None else None
        if pattern in ("", "*"):
            pattern = None
        return cls(kind, text.strip(), tools, pattern, source)

    def covers_tool(self, tool: str) -> bool:
        return any(_wildcard(glob).fullmatch(tool) for glob in self.tools)

    def matches(self, tool: str, args: dict[str, Any], work_dir: Path) -> bool:
        """Whether this rule applies to the call. For commands, an allow rule must match
        every simple command (`all_parts`); deny and ask rules match if any part does."""
        if not self.covers_tool(tool):
            return False
        if self.pattern is None:
            return True
        if tool in COMMAND_TOOLS and isinstance(args.get("command"), str):
            return self._matches_command(args["command"])
        if self.pattern.startswith("domain:"):  # fetch_url(domain:docs.python.org), Claude's WebFetch(domain:...)
            from agentica_cli.app.permissions.egress import domain_matches, host_of, url_of

            url = url_of(args)
            return url is not None and domain_matches(self.pattern[len("domain:"):], host_of(url))
        path = next((args[k] for k in PATH_ARGS if isinstance(args.get(k), str)), None)
        if path is not None:
            return self._matches_path(path, work_dir)
        main = next((args[k] for k in MAIN_ARGS if isinstance(args.get(k), str)), None)
        return main is not None and bool(_wildcard(self.pattern).fullmatch(main))

    # -- commands ------------------------------------------------------------------------

    def command_pattern(self) -> re.Pattern[str]:
        pattern = self.pattern or "*"
        if pattern.endswith(":*"):  # Claude Code's prefix form: `npm run test:*`
            pattern = pattern[:-2] + " *"
        regex = _wildcard(pattern).pattern
        if pattern.endswith(" *"):  # `pytest *` also matches a bare `pytest`
            regex = _wildcard(pattern[:-2]).pattern + "(?: .*)?"
        return re.compile(regex, re.DOTALL)

    def matches_words(self, words: list[str]) -> bool:
        return bool(self.command_pattern().fullmatch(" ".join(words)))

    def could_match_words(self, known: list[str]) -> bool:
        """Whether a command whose first words are `known` (the rest only known when it runs)
        may match: the pattern can still match something that starts with them."""
        pattern = self.pattern or "*"
        if pattern.endswith(":*"):
            pattern = pattern[:-2] + " *"
        return _prefix_can_match(pattern, " ".join(known))

    def _matches_command(self, command: str) -> bool:
        """An allow rule must match every simple command of a command line it fully
        understands; a deny or ask rule matches when any simple command (also one a wrapper
        or `bash -c` runs) may match, and always when the line cannot be accounted for."""
        # here: the shell parser (~10 ms of imports) is needed when a command is checked, not when
        # the rules are read at start-up
        from agentica_cli.app.permissions.shell_parts import DenyCheckOpaque, deny_candidates, parse_command

        parsed = parse_command(command)
        if self.kind == "allow":
            return parsed.grantable and all(self.matches_words(words) for words in parsed.parts)
        if parsed.opaque:
            return True
        try:
            for simple in deny_candidates(parsed):
                if simple.is_literal:
                    if self.matches_words(simple.words):
                        return True
                elif self.could_match_words(simple.words[: simple.known]):
                    return True
        except DenyCheckOpaque:
            return True
        return False

    # -- paths ---------------------------------------------------------------------------

    def _matches_path(self, path: str, work_dir: Path) -> bool:
        pattern = os.path.expanduser(self.pattern or "")
        full = Path(os.path.expanduser(path))
        if not full.is_absolute():
            full = work_dir / full
        real = Path(os.path.realpath(full))
        candidates = {str(real), os.path.normpath(str(full))}
        if pattern.startswith("//"):  # Claude Code's absolute form
            pattern = pattern[1:]
        if os.path.isabs(pattern):
            return any(_wildcard(pattern).fullmatch(c) for c in candidates)
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines([pattern.removeprefix("./")])
        roots = {Path(os.path.realpath(work_dir)), work_dir}
        for candidate in candidates:
            for root in roots:
                try:
                    relative = Path(candidate).relative_to(root)
                except ValueError:
                    continue
                if spec.match_file(relative.as_posix()):
                    return True
        return False


def _prefix_can_match(pattern: str, text: str) -> bool:
    """Whether some string that starts with `text` fullmatches the wildcard `pattern` (`*`
    matches anything): `text` is consumed by the pattern's tokens with a set of positions."""
    tokens = [None if part == "*" else part for part in re.split(r"(\*)", pattern) if part]
    chars: list[str | None] = []
    for token in tokens:
        if token is None:
            chars.append(None)
        else:
            chars.extend(token)
    positions = {0}

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for state in states:
            while state < len(chars) and chars[state] is None:  # a star may match nothing
                state += 1
                out.add(state)
        return out

    positions = closure(positions)
    for char in text:
        following = set()
        for state in positions:
            if state < len(chars):
                if chars[state] is None:
                    following.add(state)  # the star takes this character
                elif chars[state] == char:
                    following.add(state + 1)
        positions = closure(following)
        if not positions:
            return False
    return True


def split_rule_list(text: str) -> list[str]:
    """Rules given in one string, as --allowed-tools and --disallowed-tools take them: separated
    by commas or spaces outside parentheses (`Bash(git diff:*), Read` is two rules; a pattern
    keeps its own spaces and commas). Raises RuleError naming a rule whose brackets do not close."""
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                rules.append("".join(current))
                current = []
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                raise RuleError(f"permission rule {''.join(current) + char!r} closes a bracket it never opened")
            depth -= 1
        current.append(char)
    if depth:
        raise RuleError(f"permission rule {''.join(current)!r} opens a bracket it never closes")
    if current:
        rules.append("".join(current))
    for rule in rules:
        PermissionRule.parse("allow", rule)  # the message names the rule that is not 'tool' or 'tool(pattern)'
    return rules


def parse_rules(tables: list[tuple[str, str, str]]) -> list[PermissionRule]:
    """(kind, rule text, source) triples -> rules; a bad one raises RuleError naming its source."""
    rules = []
    for kind, text, source in tables:
        try:
            rules.append(PermissionRule.parse(kind, text, source))
        except RuleError as err:
            raise RuleError(f"{source}: permissions.{kind}: {err}") from None
    return rules
