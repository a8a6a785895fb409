"""Skills (the Agent Skills format): a folder with SKILL.md, and scripts or references beside it.

Only each skill's name and description go into the system prompt; the model loads a skill's
instructions when it decides it needs them, with the `skill` tool (progressive disclosure).
Scripts are not run here: the instructions name them and the model runs them with `execute`,
under the usual approvals and sandbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentica_cli.extensions.frontmatter import split
from agentica_cli.extensions.loading import first_line, read_markdown, text_field
from agentica_cli.extensions.places import Places, read_text

_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")


@dataclass
class Skill:
    name: str
    description: str
    folder: Path
    scope: str
    root: Path | None  # the project root its files must stay inside (None: the user's own)

    def instructions(self) -> str:
        """SKILL.md's body, read now (it may have changed since the session started)."""
        return split(read_text(self.folder / "SKILL.md", self.root))[1]

    def files(self) -> list[str]:
        """The other files of the skill (scripts, references), relative to its folder."""
        found = []
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder)
            if path.is_file() and rel.name != "SKILL.md" and not any(p.startswith(".") for p in rel.parts):
                found.append(str(rel))
        return found


def load_skills(places: Places, problems: list[str] | None = None) -> dict[str, Skill]:
    problems = problems if problems is not None else []
    skills: dict[str, Skill] = {}
    for folder in places.folders("skills"):
        if not folder.path.is_dir():
            continue
        for skill_file in sorted(folder.path.glob("*/SKILL.md")):
            parsed = read_markdown(skill_file, folder.root, problems)
            if parsed is None:
                continue
            meta, body = parsed
            name = text_field(meta, "name") or skill_file.parent.name
            if not _NAME.match(name):
                problems.append(f"{skill_file} skipped: '{name}' is not a usable skill name")
                continue
            description = text_field(meta, "description") or first_line(body)
            skills[name] = Skill(name, description, skill_file.parent, folder.scope, folder.root)
    return skills
