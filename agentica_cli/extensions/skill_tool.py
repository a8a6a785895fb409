"""The `skill` tool: loads a skill's instructions when the model asks for them."""

from __future__ import annotations

from agentica_cli.extensions.places import UnreadableFile
from agentica_cli.extensions.skills import Skill
from agentica_cli.tools.base import Tool

MAX_LISTED_FILES = 50


class SkillTool(Tool):
    """`skill(name)`: a skill's instructions, its folder and its files; the list of skills
    (names and descriptions only) is this tool's part of the system prompt."""

    def __init__(self, skills: dict[str, Skill]):
        super().__init__(name="skill")
        self.skills = dict(skills)
        self.register(self.skill, is_read_only=True, concurrency_safe=True)
        names = sorted(self.skills)
        if names:  # the schema names the choices, so a typo is caught before the call
            self.functions["skill"].parameters["properties"]["name"]["enum"] = names

    def get_system_prompt(self) -> str:
        if not self.skills:
            return ""
        lines = ["Skills: instructions for particular jobs, loaded on demand. When a request matches a skill's "
                 "description, call skill(name) first and follow what it says."]
        lines += [f"- {s.name}: {s.description}" for s in sorted(self.skills.values(), key=lambda s: s.name)]
        return "\n".join(lines)

    def skill(self, name: str) -> str:
        """Load a skill: its instructions, its folder and the scripts and files in it.

        Args:
            name: The skill's name, as listed in the system prompt.
        """
        found = self.skills.get(name)
        if found is None:
            known = ", ".join(sorted(self.skills)) or "none"
            return f"Error: no skill named {name!r}. Skills: {known}."
        try:
            body = found.instructions()
        except UnreadableFile as why:
            return f"Error: the skill {name!r} cannot be read: {why}"
        files = found.files()
        listed = "\n".join(f"- {f}" for f in files[:MAX_LISTED_FILES])
        if len(files) > MAX_LISTED_FILES:
            listed += f"\n- ... {len(files) - MAX_LISTED_FILES} more"
        parts = [f'<skill name="{name}" folder="{found.folder}">', body]
        if files:
            parts.append(f"Files in the skill's folder (run scripts with execute, paths relative to "
                         f"{found.folder}):\n{listed}")
        parts.append("</skill>")
        return "\n\n".join(parts)
