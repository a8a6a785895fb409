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

from agentica_cli.extensions.frontmatter import read
from agentica_cli.extensions.loading import first_line, read_markdown, say_which_wins, slug, text_field
from agentica_cli.extensions.places import Places, read_text

_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")


@dataclass
class Skill:
    name: str
    description: str
    folder: Path
    scope: str
    root: Path | None  # the project root its files must stay inside (None: the user's own)
    display_name: str = ""  # the `name:` as written, when it was not usable as it is (`Agent Development`)

    def instructions(self) -> str:
        """SKILL.md's body, read now (it may have changed since the session started)."""
        return read(read_text(self.folder / "SKILL.md", self.root)).body

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
            written = text_field(meta, "name") or skill_file.parent.name
            name = written
            if not _NAME.match(name):  # `Agent Development`: the folder's name, else a slug
                folder_name = skill_file.parent.name
                name = folder_name if _NAME.match(folder_name) else slug(written)
            if not _NAME.match(name):
                problems.append(f"{skill_file} skipped: '{written}' is not a usable skill name")
                continue
            description = text_field(meta, "description") or first_line(body)
            earlier = skills.get(name)
            if earlier is not None:
                say_which_wins("skill", name, earlier.folder / "SKILL.md", skill_file, problems)
            skills[name] = Skill(name, description, skill_file.parent, folder.scope, folder.root,
                                 display_name=written if written != name else "")
    return skills
