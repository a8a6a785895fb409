"""Split a shell command into the simple commands it runs, for permission decisions.

A grant for `pytest` must not approve `pytest; rm x`, `pytest && rm x`, `pytest | sh` or
`pytest $(rm x)`. This is not a shell parser: it finds what a grant can be checked against
(the simple commands between `;`, `&&`, `||`, `|`, `&` and newlines, as words) and flags
what no grant may cover (command or process substitution, backticks, redirections to files,
subshells, compound statements). When in doubt it says "not grantable", which means the
user is asked: the safe side.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

_SEPARATORS = ("&&", "||", "|&", ";;", ";", "|", "&", "\n")
# Redirections that neither read nor write a file: fd duplication and the null device.
_HARMLESS_REDIRECT_TARGETS = ("/dev/null",)
_COMPOUND_WORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "function",
     "select", "{", "}", "(", ")", "[[", "]]", "coproc"}
)


@dataclass
class ShellCommand:
    """What a command line runs: its simple commands, and what makes it ungrantable."""

    parts: list[list[str]] = field(default_factory=list)  # each simple command, as words
    raw_parts: list[str] = field(default_factory=list)
    hazards: list[str] = field(default_factory=list)  # why no grant can approve it, for the question
    nested: list[str] = field(default_factory=list)  # bodies of $(...), `...`, <(...): checked by deny rules

    @property
    def grantable(self) -> bool:
        return not self.hazards and bool(self.parts)


def _read_nested(text: str, start: int, opener: str, closer: str) -> int:
    """Index just past the `closer` matching the `opener` at text[start-1] (quote-aware)."""
    depth = 1
    i = start
    quote = ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "\\":
            i += 2
            continue
        elif ch in ("'", '"'):
            quote = ch
        elif ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def parse_command(command: str) -> ShellCommand:
    result = ShellCommand()
    hazards: set[str] = set()
    current: list[str] = []
    i = 0
    quote = ""
    n = len(command)

    def close_part() -> None:
        raw = "".join(current).strip()
        current.clear()
        if raw:
            result.raw_parts.append(raw)

    while i < n:
        ch = command[i]
        if quote == "'":
            current.append(ch)
            if ch == "'":
                quote = ""
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if command[i + 1] == "\n":  # a line continuation joins lines
                i += 2
                continue
            current.append(command[i : i + 2])
            i += 2
            continue
        if ch == "`":
            end = command.find("`", i + 1)
            end = n if end < 0 else end
            hazards.add("a `...` command substitution")
            result.nested.append(command[i + 1 : end])
            current.append(command[i : end + 1])
            i = end + 1
            continue
        if ch == "$" and command.startswith("$(", i):
            end = _read_nested(command, i + 2, "(", ")")
            hazards.add("a $(...) command substitution")
            result.nested.append(command[i + 2 : end - 1])
            current.append(command[i:end])
            i = end
            continue
        if quote == '"':
            current.append(ch)
            if ch == '"':
                quote = ""
            i += 1
            continue
        if ch in ("'", '"'):
            quote = ch
            current.append(ch)
            i += 1
            continue
        if ch in "<>" and command.startswith("(", i + 1):
            end = _read_nested(command, i + 2, "(", ")")
            hazards.add("a <(...) process substitution")
            result.nested.append(command[i + 2 : end - 1])
            current.append(command[i:end])
            i = end
            continue
        if ch == "#" and (not current or current[-1][-1:].isspace()):
            end = command.find("\n", i)
            i = n if end < 0 else end  # a comment runs to the end of the line
            continue
        separator = next((s for s in _SEPARATORS if command.startswith(s, i)), None)
        if separator is not None and not _is_redirect_ampersand(command, i):
            close_part()
            i += len(separator)
            continue
        if ch in "<>":
            i = _scan_redirect(command, i, current, hazards)
            continue
        current.append(ch)
        i += 1
    if quote:
        hazards.add("an unterminated quote")
    close_part()
    for raw in result.raw_parts:
        try:
            words = shlex.split(raw, comments=False, posix=True)
        except ValueError:
            hazards.add("text the permission check cannot split into words")
            continue
        if not words:
            continue
        if words[0] in _COMPOUND_WORDS or raw.startswith(("(", "{")):
            hazards.add("a compound statement or subshell")
        result.parts.append(words)
    result.hazards = sorted(hazards)
    return result


def _is_redirect_ampersand(command: str, i: int) -> bool:
    """`2>&1`, `>&2`, `&>file`: the `&` belongs to a redirection, not a background separator."""
    if command[i] != "&":
        return False
    return (i > 0 and command[i - 1] in "<>") or command.startswith("&>", i)


def _scan_redirect(command: str, i: int, current: list[str], hazards: set[str]) -> int:
    """Read one redirection at command[i] (`>`, `>>`, `<`, `<<`, `>|`, `>&2` ...), add it to the
    current part, and flag it unless it only duplicates a descriptor or targets /dev/null."""
    start = i
    if command.startswith("<<", i):
        hazards.add("a here-document")
    while i < len(command) and command[i] in "<>|&":
        i += 1
    while i < len(command) and command[i] in " \t":
        i += 1
    target_start = i
    while i < len(command) and not command[i].isspace() and command[i] not in ";|&<>":
        i += 1
    target = command[target_start:i].strip("'\"")
    op = command[start:target_start].strip()
    if op.endswith("&") and (target.isdigit() or target == "-"):
        pass  # 2>&1, >&2, <&0: descriptor duplication
    elif target in _HARMLESS_REDIRECT_TARGETS:
        pass
    elif not op.startswith("<<"):
        hazards.add("a redirection to or from a file")
    current.append(command[start:i])
    return i


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
