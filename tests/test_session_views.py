"""The data behind /context and /export (app/session_views), in process: what each part of the
context costs by the agent's own estimator, and an export that only writes where the path
sandbox allows and never replaces a file unasked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentica_cli.agent import Agent
from agentica_cli.agent.context import estimate_tokens
from agentica_cli.app.session_views.context_usage import context_usage
from agentica_cli.app.session_views.export import ExportError, ExportMeta, export_conversation, to_markdown
from agentica_cli.testing import ScriptedModel, turns
from agentica_cli.tools import tool

EDIT_CALL = {"id": "e1", "type": "function", "function": {"name": "edit_file", "arguments": json.dumps(
    {"file_path": "notes.txt", "old_string": "hello", "new_string": "goodbye"})}}
MESSAGES = [
    {"role": "user", "content": 'fix it\n\n<file path="notes.txt">\n' + "hello " * 400 + "\n</file>"},
    {"role": "assistant", "content": "Editing.", "tool_calls": [EDIT_CALL]},
    {"role": "tool", "tool_call_id": "e1", "content": "Edited notes.txt"},
    {"role": "assistant", "content": "Done, with ``` backticks inside."},
]
META = ExportMeta("abc123", "/work/project", "scripted-model")


def test_context_usage_counts_each_part_with_the_agents_estimator() -> None:
    @tool(is_read_only=True)
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    agent = Agent(ScriptedModel([turns.text("unused")]), tools=[lookup], instructions="Be brief.")
    agent.messages = [dict(m) for m in MESSAGES]
    usage = context_usage(agent, instruction_texts=["Be brief."], instruction_names=["AGENTS.md"], compact_keep=2)
    parts = {part.label: part for part in usage.parts}
    attached = estimate_tokens(MESSAGES[0]["content"]) - estimate_tokens("fix it\n\n")
    assert abs(parts["attachments"].tokens - attached) <= 2
    assert parts["instruction files"].tokens == estimate_tokens("Be brief.") and parts["instruction files"].detail
    assert parts["tools"].tokens == estimate_tokens(json.dumps([agent.functions["lookup"].to_openai()]))
    assert usage.used == sum(p.tokens for p in usage.parts) and usage.free == usage.window - usage.used
    # /compact keeping 2 would start the tail at a tool result: it keeps the call too (3), frees the first
    assert usage.compact_keeps == 3
    assert usage.compact_frees == estimate_tokens(MESSAGES[0])


def test_markdown_export_has_the_calls_diffs_and_results_in_order() -> None:
    text = to_markdown(MESSAGES, META)
    assert text.index("## You") < text.index("**Tool call:** `edit_file`") < text.index("**Result**")
    assert "```diff\n--- a/notes.txt\n+++ b/notes.txt\n" in text and "-hello\n+goodbye" in text
    assert "````" not in text.split("Done, with")[0]  # only a block with backticks gets a longer fence


def test_export_stays_in_the_sandbox_and_never_replaces_unasked(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "keep.md").write_text("mine")
    (project / "link.md").symlink_to(tmp_path / "outside.md")
    first = export_conversation(MESSAGES, META, None, project)
    assert first.path == project / "agentica-abc123.md" and not first.replaced
    second = export_conversation(MESSAGES, META, None, project)
    assert second.path.name == "agentica-abc123-2.md"  # the default name never collides
    with pytest.raises(ExportError, match="exists"):
        export_conversation(MESSAGES, META, "keep.md", project)
    assert (project / "keep.md").read_text() == "mine"
    for escape in ("../outside.md", "link.md", str(tmp_path / "outside.md")):
        with pytest.raises(ExportError):
            export_conversation(MESSAGES, META, escape, project)
    assert not (tmp_path / "outside.md").exists()
    replaced = export_conversation(MESSAGES, META, "keep.md", project, as_json=True, overwrite=True)
    assert replaced.replaced and json.loads((project / "keep.md").read_text())["diffs"]["e1"].startswith("--- a/")
    assert export_conversation(MESSAGES, META, "sub/conv.JSON", project).path == project / "sub" / "conv.JSON"


# A stream cut inside a call's arguments (the model wrote an escape sequence in them): the JSON
# never closes. The transcript (--continue, /resume) and /export read calls through one
# calls_by_id, which keeps such arguments as the raw text; both show it neutralised.
CUT_CALL = {"id": "x1", "type": "function", "function": {"name": "execute",
                                                          "arguments": '{"command": "make \x1b[2Jall'}}
CUT = [{"role": "user", "content": "build it"},
       {"role": "assistant", "content": "", "tool_calls": [CUT_CALL]},
       {"role": "tool", "tool_call_id": "x1", "content": "Error: malformed arguments"}]


def test_malformed_arguments_are_shown_as_their_raw_text_neutralised_in_both_views() -> None:
    from agentica_cli.app.session_views.tool_calls import calls_by_id
    from agentica_cli.tui.transcript import replay

    assert calls_by_id(CUT) == {"x1": ("execute", {"arguments": '{"command": "make \x1b[2Jall'})}
    call_line = next(line for line, _ in replay(CUT) if line.startswith("●"))
    assert "make" in call_line and "all" in call_line and "\x1b" not in call_line  # was "● execute": nothing
    text = to_markdown(CUT, META)
    assert "\x1b" not in text and '"arguments": "{\\"command\\": \\"make \\u001b[2Jall"' in text
