"""Tool calls written as text (`tool_call_format`): the formats the model families' chat
templates produce, read into real calls over real HTTP; never on by default.

Formats as documented: Hermes / Qwen2.5 function calling (`<tool_call>{"name", "arguments"}
</tool_call>`, the Qwen docs' "Hermes-style tool use"); Qwen3-Coder's XML
(`<function=NAME><parameter=KEY>value</parameter></function>`, its qwen3coder_tool_parser);
Llama 3.1's `<function=NAME>{json}</function>`; Mistral's `[TOOL_CALLS][...]`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from cli_support import model_args, run_cli, tool_results
from conftest import scripted_model

from agentica_cli.models import ModelResponse, ModelTextDelta
from agentica_cli.models.text_tool_calls import parse_text_calls
from agentica_cli.testing import ScriptedModelServer, turns

TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {
    "type": "object", "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}}}}}]

HERMES = ('I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"file_path": "notes.txt"}}\n</tool_call>\n'
          '<tool_call>\n{"name": "read_file", "arguments": {"file_path": "b.txt", "limit": 5}}\n</tool_call>')
QWEN3_CODER = ("<tool_call>\n<function=read_file>\n<parameter=file_path>\nnotes.txt\n</parameter>\n"
               "<parameter=limit>\n20\n</parameter>\n</function>\n</tool_call>")
LLAMA = '<function=read_file>{"file_path": "notes.txt"}</function>'
MISTRAL = '[TOOL_CALLS][{"name": "read_file", "arguments": {"file_path": "notes.txt"}}]'


@pytest.mark.parametrize("fmt,content,text,calls", [
    ("hermes", HERMES, "I will read it.", [("read_file", {"file_path": "notes.txt"}),
                                           ("read_file", {"file_path": "b.txt", "limit": 5})]),
    ("qwen3-coder", QWEN3_CODER, "", [("read_file", {"file_path": "notes.txt", "limit": 20})]),
    ("qwen3-coder", LLAMA, "", [("read_file", {"file_path": "notes.txt"})]),
    ("mistral", MISTRAL, "", [("read_file", {"file_path": "notes.txt"})]),
    ("text", QWEN3_CODER, "", [("read_file", {"file_path": "notes.txt", "limit": 20})]),
    ("text", HERMES, "I will read it.", [("read_file", {"file_path": "notes.txt"}),
                                         ("read_file", {"file_path": "b.txt", "limit": 5})]),
])
def test_each_format_is_read_into_calls(fmt, content, text, calls) -> None:
    rest, found = parse_text_calls(content, fmt, TOOLS)
    assert rest == text
    assert [(c.name, json.loads(c.arguments)) for c in found] == calls
    assert len({c.id for c in found}) == len(found)


@pytest.mark.parametrize("content", [
    "Use `<tool_call>` tags like this: <tool_call>{not json}</tool_call>",
    "<tool_call>\n[1, 2]\n</tool_call>",
    "plain answer",
])
def test_text_that_is_not_a_valid_call_stays_text(content) -> None:
    assert parse_text_calls(content, "text", TOOLS) == (content, [])


@pytest.mark.parametrize("stream", [True, False])
def test_over_http_the_call_is_real_and_its_tags_are_not_shown_as_answer_text(stream: bool) -> None:
    with ScriptedModelServer([turns.text(HERMES)]) as server:
        model = scripted_model(server, tool_call_format="hermes", stream=stream)
        events = asyncio.run(_events(model))
    final = events[-1]
    assert isinstance(final, ModelResponse)
    assert [c.name for c in final.tool_calls] == ["read_file", "read_file"]
    assert final.finish_reason == "tool_calls" and final.content == "I will read it."
    shown = "".join(e.text for e in events if isinstance(e, ModelTextDelta))
    assert "<tool_call>" not in shown and shown.strip() == "I will read it."


def test_off_by_default_the_text_is_the_answer() -> None:
    with ScriptedModelServer([turns.text(HERMES)]) as server:
        events = asyncio.run(_events(scripted_model(server)))
    assert events[-1].tool_calls == [] and events[-1].content == HERMES


def test_held_back_text_is_shown_when_it_was_no_call_after_all() -> None:
    content = "Here is how: <tool_call>{oops</tool_call> done."
    with ScriptedModelServer([turns.text(content)]) as server:
        events = asyncio.run(_events(scripted_model(server, tool_call_format="text")))
    assert "".join(e.text for e in events if isinstance(e, ModelTextDelta)) == content
    assert events[-1].tool_calls == []


def test_the_config_key_makes_a_print_run_call_the_tool(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[model]\ntool_call_format = "qwen3-coder"\n')
    script = [turns.text("<tool_call>\n<function=read_file>\n<parameter=file_path>\nnotes.txt\n</parameter>\n"
                         "</function>\n</tool_call>"),
              turns.text("The notes say hello.")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "read the notes", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The notes say hello.\n"
    assert len(requests) == 2
    assert any("hello from the notes" in v for v in tool_results(requests[1]).values())
    assistant = [m for m in requests[1]["messages"] if m["role"] == "assistant"][-1]
    assert assistant["tool_calls"][0]["function"]["name"] == "read_file"


def test_a_bad_format_name_is_a_config_error(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[model]\ntool_call_format = "xml"\n')
    proc = run_cli(["-p", "hi"], cwd=project, home=home)
    assert proc.returncode == 2
    assert "'model.tool_call_format' must be one of native, hermes, qwen3-coder, mistral, text" in proc.stderr


async def _events(model) -> list:
    return [e async for e in model.response_stream([{"role": "user", "content": "read"}], TOOLS)]
