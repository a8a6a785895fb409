"""Claude's model names in commands and agents, for a session that talks to another provider.

`model: claude-sonnet-4-0` in a command or `model: opus` in an agent means "a model of the
kind Claude Code runs"; sent unchanged to DeepSeek or GLM it is an error. So a Claude model
id or alias means the session's model, or what the user's `[models] aliases` table says:

    [models.aliases]
    opus = "deepseek-reasoner"
    "claude-sonnet-4-0" = "deepseek-chat"

unless the provider serves that id: the session's own model is a Claude model (a gateway
that serves Claude), or the id is one of `[model] choices`. Any other id is kept as written (a
model of the same provider).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Claude Code's aliases (`inherit` is the parent's model), and the shape of Claude's model ids:
# claude-3-5-sonnet-20241022, claude-opus-4-1, anthropic/claude-sonnet-4, claude-sonnet-4-5@20250929
ALIASES = ("inherit", "default", "sonnet", "opus", "haiku", "opusplan", "sonnet[1m]", "opus[1m]")
_CLAUDE_ID = re.compile(r"^(?:[\w.-]+/)?(?:anthropic\.)?claude[-\w.@:\[\]]*$", re.IGNORECASE)


def is_claude_model(name: str) -> bool:
    return name.strip().lower() in ALIASES or bool(_CLAUDE_ID.match(name.strip()))


@dataclass
class ModelNames:
    aliases: dict[str, str] = field(default_factory=dict)  # [models.aliases]: a Claude name -> a model id here
    served: set[str] = field(default_factory=set)  # ids the provider serves ([model] choices)
    session_model: str = ""  # the session's model id

    def resolve(self, name: str | None) -> str | None:
        """The model id to use; None: the session's (the parent's) model."""
        if not name or not name.strip():
            return None
        name = name.strip()
        if name.lower() == "inherit":
            return None
        mapped = self.aliases.get(name, self.aliases.get(name.lower()))
        if mapped:
            return mapped
        if not is_claude_model(name):
            return name
        if name in self.served or (is_claude_model(self.session_model) and name.lower() not in ALIASES):
            return name
        return None
