"""The examples of docs/library.md run as written, against the scripted
server (OPENAI_BASE_URL points the examples' OpenAIChat at it)."""

from __future__ import annotations

from readme_support import DOCS, python_blocks

from agentica_cli.testing import ScriptedModelServer, tool_call_problems, turns


def test_library_examples_run(monkeypatch, tmp_path, capsys):
    blocks = python_blocks(path=DOCS / "library.md")
    assert len(blocks) == 9  # the last one: the in-process fake model, no server request
    script = [
        turns.tool_calls(turns.call("get_weather", {"city": "Shanghai"}, id="w1")),
        turns.text("It is sunny, 24 degrees in Shanghai."),
        turns.tool_calls(turns.call("get_weather", {"city": "Paris"}, id="w2")),
        turns.text("Sunny in Paris too."),
        turns.tool_calls(turns.call("delete_file", {"path": "/etc/hosts"}, id="d1")),
        turns.text("I may not delete /etc/hosts."),
        turns.text("Noted."),
        turns.text("make all"),
    ]
    with ScriptedModelServer(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
        monkeypatch.chdir(tmp_path)
        namespace: dict[str, object] = {"__name__": "readme_example"}
        for block in blocks:
            exec(compile(block, str(DOCS / "library.md"), "exec"), namespace)
        out = capsys.readouterr().out
        assert server.pending == 0 and len(server.requests) == 8
        for body in server.requests:
            assert tool_call_problems(body["messages"]) == []
    lines = out.splitlines()
    assert lines[:2] == ["It is sunny, 24 degrees in Shanghai.", "completed"]
    assert "-> get_weather({'city': 'Paris'})" in lines
    assert "<- ok: Sunny, 24 degrees in Paris" in lines
    assert "[completed]" in lines
    assert "calling delete_file {'path': '/etc/hosts'}" in lines
    deny = "Absolute paths are off limits; only delete files inside the project."
    assert f"result {deny}" in lines
    assert server.requests[5]["messages"][-1] == {"role": "tool", "tool_call_id": "d1", "content": deny}
    assert "I may not delete /etc/hosts." in lines
    assert "make all" in lines
    assert server.requests[7]["messages"][-3:] == [
        {"role": "user", "content": "Remember: the build command is make all."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "What is the build command?"},
    ]
    assert any(line.startswith("No API key for DeepSeek: set the DEEPSEEK_API_KEY") for line in lines)
