"""Claude Code's tool names and ours, both ways.

Our builtin tools take the same argument names as Claude Code's (`command`, `file_path`,
`old_string`, ...), so mapping the name is enough for a user's hook script or agent file to
work unchanged. MCP tools: Claude's `mcp__server__tool` is our `server__tool`.
"""

from __future__ import annotations

CLAUDE_TO_OURS = {
    "Bash": "execute",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "multi_edit_file",
    "Grep": "grep",
    "Glob": "glob",
    "LS": "ls",
    "WebFetch": "fetch_url",
    "WebSearch": "web_search",
    "TodoWrite": "write_todos",
    "Task": "task",
    "BashOutput": "read_background_output",
    "KillShell": "stop_background",
    "Skill": "skill",
}
OURS_TO_CLAUDE = {ours: claude for claude, ours in CLAUDE_TO_OURS.items()}


def ours(name: str) -> str:
    """Our name for a tool named either way (`Bash` -> `execute`, `mcp__s__t` -> `s__t`)."""
    name = name.strip()
    if name.startswith("mcp__"):
        return name[len("mcp__"):]
    return CLAUDE_TO_OURS.get(name, name)


def claude(name: str) -> str:
    """Claude Code's name for one of our tools (`execute` -> `Bash`); an MCP tool
    (`server__tool`) becomes `mcp__server__tool`; anything else stays as it is."""
    if name in OURS_TO_CLAUDE:
        return OURS_TO_CLAUDE[name]
    return f"mcp__{name}" if "__" in name else name


def tool_of_rule(entry: str) -> str:
    """The tool a permission-style entry names: `Bash(git diff:*)` -> `execute`."""
    return ours(entry.split("(", 1)[0])
