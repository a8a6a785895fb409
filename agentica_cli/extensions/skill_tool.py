"""The `skill` tool: loads a skill's instructions when the model asks for them."""

from __future__ import annotations

from agentica_cli.extensions.places import UnreadableFile
from agentica_cli.extensions.skills import Skill
from agentica_cli.tools.base import Tool
from agentica_cli.tools.listing import fit_listing, listing_budget, listing_order, matching_names

MAX_LISTED_FILES = 50


class SkillTool(Tool):
    """`skill(name)`: a skill's instructions, its folder and its files; the list of skills
    (names and descriptions only) is this tool's part of the system prompt."""

    def __init__(self, skills: dict[str, Skill], budget: int | None = None):
        """`budget`: characters the listing in the system prompt may take (tools/listing.py;
        None: the share of a 128k-token window). Skills left out are still loaded by name."""
        super().__init__(name="skill")
        self.skills = dict(skills)
        self.register(self.skill, is_read_only=True, concurrency_safe=True)
        self.listing = fit_listing(((s.name, s.description) for s in listing_order(self.skills.values())),
                                   budget if budget is not None else listing_budget(None))
        names = sorted(self.skills)
        if names and self.listing.complete:  # the schema names the choices, so a typo is caught before the call
            self.functions["skill"].parameters["properties"]["name"]["enum"] = names

    @property
    def left_out(self) -> list[str]:
        return self.listing.left_out

    def get_system_prompt(self) -> str:
        if not self.skills:
            return ""
        lines = ["Skills: instructions for particular jobs, loaded on demand. When a request matches a skill's "
                 "description, call skill(name) first and follow what it says."]
        lines += [f"- {line}" for line in self.listing.lines]
        if self.left_out:
            lines.append(f"- {len(self.left_out)} more skills are not listed here: load one the user names, or "
                         "call skill with words of what you need to get the names that match.")
        return "\n".join(lines)

    def unknown_skill(self, name: str) -> str:
        if len(self.skills) <= 30:
            known = ", ".join(sorted(self.skills)) or "none"
            return f"Error: no skill named {name!r}. Skills: {known}."
        found = matching_names(name, ((n, s.description) for n, s in sorted(self.skills.items())))
        hint = f"Skills that match: {', '.join(found)}." if found else "No skill name or description matches it."
        return f"Error: no skill named {name!r}. {hint} ({len(self.skills)} skills in all.)"

    def skill(self, name: str) -> str:
        """Load a skill: its instructions, its folder and the scripts and files in it.

        Args:
            name: The skill's name, as listed in the system prompt or as the user names it.
        """
        found = self.skills.get(name)
        if found is None:
            return self.unknown_skill(name)
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
