"""`agentica -p`: one writer per --output-format, and stream-json input. A front end over
agentica_cli.app; it never imports another front end."""
