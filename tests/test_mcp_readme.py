"""The MCP example of docs/mcp.md runs: its server file, served over stdio, and its client code
(with the model pointed at the scripted test server instead of a real provider)."""

from __future__ import annotations

import asyncio
import sys

from readme_support import DOCS, python_blocks

from agentica_cli.testing import turns


def test_readme_mcp_example_runs(tmp_path, monkeypatch, scripted, capsys):
    blocks = python_blocks(path=DOCS / "mcp.md")
    at = next(i for i, block in enumerate(blocks) if block.startswith("# weather_server.py\n"))
    server_code, client_code = blocks[at], blocks[at + 1]  # the server file, then the code that uses it
    (tmp_path / "weather_server.py").write_text(server_code)
    model = scripted(
        turns.tool_calls(turns.call("weather_server__get_weather", {"city": "Paris"}, id="w1")),
        turns.text("It is sunny in Paris."),
    )
    # Only two things change: the interpreter that has the SDK, and where the model is.
    client_code = client_code.replace('"python weather_server.py"', repr(f"{sys.executable} weather_server.py"))
    client_code = client_code.replace(
        'OpenAIChat(id="gpt-4o")', f'OpenAIChat(id="gpt-4o", base_url={model.base_url!r}, api_key="sk-test")'
    )
    assert "weather_server.py" in client_code and model.base_url in client_code
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "home"))
    exec(compile(client_code, str(DOCS / "mcp.md"), "exec"), {"__name__": "readme_example", "asyncio": asyncio})
    assert capsys.readouterr().out.splitlines() == [
        "['weather_server__get_weather']",
        "Sunny in Paris, 22°C",
        "It is sunny in Paris.",
    ]
    tool_message = next(m for m in model.requests[1]["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "Sunny in Paris, 22°C"
    assert (tmp_path / "home" / "logs" / "mcp" / "weather_server.log").is_file()
