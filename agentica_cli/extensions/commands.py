"""Custom slash commands: Markdown files whose body is sent as the prompt.

`review.md` is `/review`; `frontend/review.md` is `/frontend:review`. Front matter (all
optional): `description` (else the body's first line), `argument-hint`, `model`,
`allowed-tools`. In the body `$ARGUMENTS` is everything typed after the name and `$1`..`$9`
the words (shell quoting groups words); `@path` mentions are attached by the caller as in a
typed message. A body with neither placeholder gets the arguments appended, as Claude Code does.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from agentica_cli.extensions.frontmatter import as_list
from agentica_cli.extensions.loading import first_line, read_markdown, text_field
from agentica_cli.extensions.places import Places, markdown_files
from agentica_cli.extensions.tool_names import tool_of_rule

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9](?![0-9]))")
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

    @property
    def tool_names(self) -> set[str] | None:
        """Our tool names `allowed-tools` lets this command's turn use; None: every tool."""
        return None if self.allowed_tools is None else {tool_of_rule(t) for t in self.allowed_tools}

    def help_line(self) -> str:
        hint = f" {self.argument_hint}" if self.argument_hint else ""
        return f"{self.description or '(no description)'}{hint}  ({self.scope})"

    def expand(self, arguments: str) -> str:
        arguments = arguments.strip()
        try:
            words = shlex.split(arguments)
        except ValueError:  # an unclosed quote: plain words then
            words = arguments.split()

        def substitute(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "ARGUMENTS":
                return arguments
            index = int(key) - 1
            return words[index] if index < len(words) else ""

        if _PLACEHOLDER.search(self.body):
            return _PLACEHOLDER.sub(substitute, self.body)
        return f"{self.body}\n\nARGUMENTS: {arguments}" if arguments else self.body


def load_commands(places: Places, problems: list[str] | None = None) -> dict[str, CustomCommand]:
    """Every command by name; on a name clash the higher-precedence place wins (project over
    user, .agentica over .claude) and the hidden file is kept in `shadowed`."""
    problems = problems if problems is not None else []
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
                model=text_field(meta, "model") or None,
                allowed_tools=as_list(meta.get("allowed-tools")),
            )
            earlier = commands.get(name)
            if earlier is not None:
                command.shadowed = [*earlier.shadowed, earlier.path]
            commands[name] = command
    return commands
