"""The interactive session (the REPL): prompt input, rendering, status line, approval prompt, diff
view. A front end over agentica_cli.app; it never imports another front end."""
