"""The local machine, for every tool that works on it: the builtin coding tools (builtin_tools/)
and the toolkits (agentica_cli/toolkits/) share these, so neither imports the other.

- safe_open, paths: files opened beneath a root without following symlinks; PathSandbox
- text_format, file_read: reading a file as a tool shows it (binary sniffing, pages, images)
- output_capture, process_group, background: running a command in its own process group,
  its output capped head and tail; background processes
- execute: the shell engine (BuiltinExecuteTool, which the toolkits' ShellTool builds on)

Imports nothing here: a module is loaded when a tool needs it.
"""
