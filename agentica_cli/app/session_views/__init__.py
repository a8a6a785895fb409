"""Views of a session as data, for every front end: what fills the context window
(`context_usage`) and the conversation as Markdown or JSON (`export`). No UI imports."""
