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
# Names agent files use for a tool with an equivalent here, besides the canonical ones above:
# Claude Code's older or rarer names, lower-case spellings, and VS Code Copilot's tool sets
# (`codebase`, `editFiles`, ...) that agent collections written for both carry. Only in an
# agent's `tools:` list, not for hooks (a hook script sees Claude's canonical names).
EQUIVALENTS = {
    "NotebookRead": "read_file",
    "NotebookEdit": "edit_file",
    "KillBash": "stop_background",
    "BashOutputTool": "read_background_output",
    "bash": "execute", "read": "read_file", "write": "write_file", "edit": "edit_file",
    "multiedit": "multi_edit_file", "grep": "grep", "glob": "glob", "ls": "ls",
    "webfetch": "fetch_url", "websearch": "web_search", "todowrite": "write_todos",
    "codebase": "grep", "search": "grep", "searchResults": "grep", "findFiles": "glob",
    "readFile": "read_file", "editFiles": "edit_file", "createFile": "write_file",
    "runCommands": "execute", "runInTerminal": "execute", "terminalLastCommand": "read_background_output",
    "fetch": "fetch_url", "openSimpleBrowser": "fetch_url",
}


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


def agent_tool(name: str) -> str:
    """Our name for a tool an agent file lists, with the EQUIVALENTS besides Claude's names."""
    base = name.split("(", 1)[0].strip()
    if base in CLAUDE_TO_OURS or base.startswith("mcp__"):
        return ours(base)
    return EQUIVALENTS.get(base, EQUIVALENTS.get(base.lower(), base))
