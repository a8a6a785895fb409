"""Which tool names edit files and which run shell commands: one set each, shared by the approval
policy, the permission rules and the renderer (a module of its own so none imports another for it)."""

EDIT_TOOLS = frozenset({"write_file", "edit_file", "multi_edit", "multi_edit_file", "create_file", "str_replace"})
COMMAND_TOOLS = frozenset({"execute", "shell", "bash", "run_command"})  # tools whose `command` runs in a shell
