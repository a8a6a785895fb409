"""Custom slash commands: Markdown files whose body is sent as the prompt.

`review.md` is `/review`; `frontend/review.md` is `/frontend:review`, and `/review` too (as
current Claude Code names it, labelled "(project:frontend)") when no other command has that
short name. Front matter (all optional): `description` (else the body's first line),
`argument-hint`, `model` (Claude's ids and aliases: extensions/model_names.py),
`allowed-tools`. In the body `$ARGUMENTS` is everything typed after the name, `$ARGUMENTS[N]`
the words by 0-based index (shell quoting groups words), and `$N` a word by position: 0-based
(`$0` the first word) in a body that uses `$0` or `$ARGUMENTS[N]`, as current Claude Code
counts; 1-based (`$1` the first) in one that does not, as the older command files were
written. A placeholder with no word for it stays as it is (as in Claude Code: an `awk '{print
$1}'` in the body survives). `@path` mentions are attached by the caller as in a typed
message. A body with no placeholder gets the arguments appended, as Claude Code does.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentica_cli.extensions.frontmatter import as_list
from agentica_cli.extensions.loading import first_line, read_markdown, text_field
from agentica_cli.extensions.model_names import ModelNames
from agentica_cli.extensions.places import Places, markdown_files
from agentica_cli.extensions.tool_names import tool_of_rule

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS\[([0-9]+)\]|ARGUMENTS|[0-9](?![0-9]))")
_ZERO_BASED = re.compile(r"\$(?:0(?![0-9])|ARGUMENTS\[[0-9]+\])")
_NAME = re.compile(r"^[\w.-]+(?::[\w.-]+)*$")


@dataclass
class CustomCommand:
    name: str
    body: str
    path: Path
    scope: str  # "user" or "project"
    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: list[str] | None = None  # as written (`Bash(git diff:*)`)
    shadowed: list[Path] = field(default_factory=list)  # files of the same name this one hides
    namespace: str = ""  # the sub-folder (`frontend` for frontend/review.md)

    @property
    def tool_names(self) -> set[str] | None:
        """Our tool names `allowed-tools` lets this command's turn use; None: every tool."""
        return None if self.allowed_tools is None else {tool_of_rule(t) for t in self.allowed_tools}

    @property
    def short_name(self) -> str:
        """The name without its namespace (`review` for `frontend:review`)."""
        return self.name.rsplit(":", 1)[-1]

    def help_line(self) -> str:
        hint = f" {self.argument_hint}" if self.argument_hint else ""
        label = f"{self.scope}:{self.namespace}" if self.namespace else self.scope
        return f"{self.description or '(no description)'}{hint}  ({label})"

    def expand(self, arguments: str) -> str:
        arguments = arguments.strip()
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words then
            words = arguments.split()

        first = 0 if _ZERO_BASED.search(self.body) else 1

        def substitute(match: re.Match[str]) -> str:
            key, indexed = match.group(1), match.group(2)
            if key == "ARGUMENTS":
                return arguments
            index = int(indexed) if indexed is not None else int(key) - first
            return words[index] if 0 <= index < len(words) else match.group(0)  # no word: as written

        if _PLACEHOLDER.search(self.body):
            return _PLACEHOLDER.sub(substitute, self.body)
        return f"{self.body}\n\nARGUMENTS: {arguments}" if arguments else self.body


def find(commands: dict[str, CustomCommand], name: str) -> CustomCommand | None:
    """The command `/name` runs: by its full name, else by its short name (`/review` for
    `frontend:review`) when exactly one command has that short name."""
    if name in commands:
        return commands[name]
    same = [c for c in commands.values() if c.short_name == name]
    return same[0] if len(same) == 1 else None


def load_commands(places: Places, problems: list[str] | None = None,
                  models: ModelNames | None = None) -> dict[str, CustomCommand]:
    """Every command by name; on a name clash the higher-precedence place wins (project over
    user, .agentica over .claude) and the hidden file is kept in `shadowed`."""
    problems = problems if problems is not None else []
    models = models if models is not None else ModelNames()
    commands: dict[str, CustomCommand] = {}
    for folder in places.folders("commands"):
        for path in markdown_files(folder.path, recursive=True):
            name = ":".join(path.relative_to(folder.path).with_suffix("").parts)
            if not _NAME.match(name):
                problems.append(f"{path} skipped: '/{name}' is not a usable command name")
                continue
            parsed = read_markdown(path, folder.root, problems)
            if parsed is None:
                continue
            meta, body = parsed
            command = CustomCommand(
                name=name,
                body=body,
                path=path,
                scope=folder.scope,
                description=text_field(meta, "description") or first_line(body),
                argument_hint=text_field(meta, "argument-hint"),
                model=models.resolve(text_field(meta, "model")),
                allowed_tools=as_list(meta.get("allowed-tools")),
                namespace=":".join(name.split(":")[:-1]),
            )
            earlier = commands.get(name)
            if earlier is not None:
                command.shadowed = [*earlier.shadowed, earlier.path]
            commands[name] = command
    return commands
