"""The simple commands a command line runs, for permission decisions.

A grant for `pytest` must not approve `pytest; rm x`, `pytest && rm x`, `pytest | sh` or
`pytest $(rm x)`. The command is read with bash's grammar (shell_grammar.py, tree-sitter-bash):
this module turns that into what a grant or rule is checked against (the simple commands, as
the words bash passes them) and what no grant may cover (redirections to files, compound
statements, words only known when they run). What the grammar cannot account for at all makes
the command opaque: no grant or allow rule covers it, every deny and ask rule matches it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

from agentica_cli.app.permissions.shell_grammar import SimpleCommand, parse_shell


@dataclass
class ShellCommand:
    """What a command line runs: its simple commands, and what makes it ungrantable."""

    commands: list[SimpleCommand] = field(default_factory=list)
    hazards: list[str] = field(default_factory=list)  # why no grant can approve it, for the question
    opaque: str = ""  # why the check cannot account for it at all ("" when it can)

    @property
    def parts(self) -> list[list[str]]:
        """Each simple command, as words."""
        return [command.words for command in self.commands]

    @property
    def grantable(self) -> bool:
        return not self.hazards and bool(self.commands)


def parse_command(command: str) -> ShellCommand:
    parsed = parse_shell(command)
    if parsed.opaque:
        return ShellCommand([], [parsed.opaque], parsed.opaque)
    hazards = list(parsed.hazards)
    if any(not c.is_literal for c in parsed.commands):
        hazards.append("a word only known when it runs ($x, ~, {a,b}, a glob as the command name)")
    return ShellCommand(parsed.commands, sorted(set(hazards)))


# -- what a deny or ask rule must see ------------------------------------------------------

# Commands that run the command in their arguments (`sudo rm x`, `timeout 5 rm x`, `xargs rm`,
# `find . -exec rm {} ;`): a deny rule for `rm` must see `rm` there too.
_RUNS_ITS_ARGUMENTS = frozenset(
    {"sudo", "doas", "env", "nohup", "time", "timeout", "nice", "ionice", "command", "builtin", "exec", "xargs",
     "setsid", "stdbuf", "unbuffer", "watch", "strace", "ltrace", "chroot", "busybox", "find", "parallel", "flock",
     "taskset", "chrt", "nsenter", "unshare", "firejail", "catchsegv", "caffeinate", "entr"}
)
# Shells whose `-c` argument (and eval, whose arguments) is a command line of its own.
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "su", "script"})


class DenyCheckOpaque(Exception):
    """A command line run by another (bash -c CODE, eval) that cannot be accounted for."""


def deny_candidates(parsed: ShellCommand, depth: int = 0) -> Iterator[SimpleCommand]:
    """Every simple command a deny rule must be checked against: each one, the commands the
    wrappers among them run, and the commands inside `bash -c '...'` and `eval '...'`.
    Raises DenyCheckOpaque when one of those cannot be read."""
    for command in parsed.commands:
        yield from _expand(command, depth)


def _expand(command: SimpleCommand, depth: int) -> Iterator[SimpleCommand]:
    yield command
    if depth > 4 or not command.words:
        return
    if not command.literal[0]:
        return  # its name is unknown: every deny rule matches it already
    name = command.words[0].rsplit("/", 1)[-1]
    if name in _RUNS_ITS_ARGUMENTS:
        for start in range(1, len(command.words)):
            yield from _expand(SimpleCommand(command.words[start:], command.literal[start:]), depth + 1)
    code = _inner_code(name, command)
    if code is not None:
        inner = parse_command(code)
        if inner.opaque:
            raise DenyCheckOpaque(inner.opaque)
        yield from deny_candidates(inner, depth + 1)


def _inner_code(name: str, command: SimpleCommand) -> str | None:
    """The command line `bash -c CODE` or `eval ARGS` runs, or None. Code whose value is only
    known when it runs: DenyCheckOpaque."""
    words, literal = command.words, command.literal
    if name == "eval":
        if not all(literal[1:]):
            raise DenyCheckOpaque("eval of a word only known when it runs")
        return " ".join(words[1:])
    if name not in _SHELLS:
        return None
    for index in range(1, len(words)):
        word = words[index]
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            if index + 1 >= len(words):
                return None
            if not literal[index + 1]:
                raise DenyCheckOpaque(f"{name} -c with code only known when it runs")
            return words[index + 1]
    return None


# -- the prefix an "always" answer grants ------------------------------------------------

# Commands whose second word says what they do (`git status` vs `git push`).
_SUBCOMMAND_TOOLS = frozenset(
    {"git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry",
     "hatch", "pdm", "conda", "brew", "apt", "apt-get", "systemctl", "gh", "make", "dotnet", "mvn", "gradle",
     "rustup", "terraform", "helm", "deno", "tox", "nox", "pre-commit", "ruff"}
)
# Second words that take a third which says what they do (`npm run test`, `uv run pytest`).
_RUNNERS = frozenset({"run", "exec", "x", "dlx"})
# Commands that run other commands: a grant of their first word would grant anything.
_WRAPPERS = frozenset(
    {"sh", "bash", "zsh", "dash", "fish", "ksh", "eval", "exec", "sudo", "doas", "su", "env", "xargs", "nohup",
     "time", "timeout", "nice", "command", "builtin", "source", ".", "watch", "parallel", "find", "awk", "perl",
     "ruby", "node", "python", "python3", "py", "ssh", "script", "unbuffer", "stdbuf", "chroot", "setsid",
     "strace", "busybox", "rm", "dd", "mkfs", "chmod", "chown", "curl", "wget"}
)


def grant_prefix(words: list[str]) -> list[str]:
    """The words an "always" answer allows from now on: `pytest`, `git status`,
    `npm run test`, `python -m pytest`; the whole command when its first word can run or
    destroy anything (`bash -c ...`, `rm -rf build`)."""
    if not words:
        return []
    first = words[0]
    if "=" in first and not first.startswith("="):  # FOO=1 cmd: environment changes what runs
        return list(words)
    name = first.rsplit("/", 1)[-1]
    if name in ("python", "python3", "py") and len(words) >= 3 and words[1] == "-m":
        return words[:3]
    if name in _WRAPPERS:
        return list(words)
    if name in _SUBCOMMAND_TOOLS and len(words) >= 2 and not words[1].startswith("-"):
        if words[1] in _RUNNERS and len(words) >= 3 and not words[2].startswith("-"):
            return words[:3]
        return words[:2]
    return words[:1]


def starts_with(words: list[str], prefix: list[str]) -> bool:
    return bool(prefix) and words[: len(prefix)] == prefix


def display_words(words: list[str]) -> str:
    return shlex.join(words)
