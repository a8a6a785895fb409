"""The command line the Claude Agent SDK builds (its own transport builds it here, from real
ClaudeAgentOptions), read into agentica's flags; a flag agentica cannot honour is an error that
names it, also through the SDK."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import SCRIPT

from agentica_cli.cli.launch import default_args
from agentica_cli.headless.claude_protocol import is_claude_command_line
from agentica_cli.headless.claude_protocol.flags import ClaudeFlagError, parse_claude_command_line

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a test dependency (pip install -e .[test])")
from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, query  # noqa: E402
from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport  # noqa: E402
from sdk_support import no_real_claude  # noqa: E402, F401  (autouse: the SDK never runs Claude Code itself)


def sdk_command(**options: Any) -> list[str]:
    """argv after the executable, exactly as the SDK would start its CLI."""
    transport = SubprocessCLITransport(prompt="unused", options=ClaudeAgentOptions(cli_path="agentica", **options))
    command = transport._build_command()
    assert command[0] == "agentica"
    return command[1:]


def test_the_sdk_command_line_selects_the_claude_protocol_and_ours_does_not() -> None:
    assert is_claude_command_line(sdk_command())
    assert is_claude_command_line(["--protocol", "claude"]) and is_claude_command_line(["--protocol=claude"])
    ours = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]
    assert not is_claude_command_line(ours)  # agentica's own stream-json stays as it is
    assert not is_claude_command_line(["-p", "hello"])


def test_every_option_a_program_commonly_sets_maps_to_agentica(tmp_path: Path) -> None:
    server = create_sdk_mcp_server(name="calc", tools=[])
    argv = sdk_command(
        system_prompt={"type": "preset", "preset": "claude_code", "append": "Be brief."},
        tools=["Read", "Bash"], allowed_tools=["Read", "Bash(git status:*)"], disallowed_tools=["WebFetch"],
        max_turns=7, model="claude-sonnet-4-5", permission_mode="acceptEdits", can_use_tool=None,
        permission_prompt_tool_name="stdio", resume="20261201-101010-abcdef", fork_session=True,
        add_dirs=[str(tmp_path)], include_partial_messages=True, setting_sources=["project"],
        mcp_servers={"calc": server, "files": {"command": "python", "args": ["server.py"]}},
        max_thinking_tokens=8000, settings=json.dumps({"permissions": {"deny": ["Read(.env)"]}}),
        output_format={"type": "json_schema", "schema": {"type": "object"}},
    )
    args = parse_claude_command_line(argv, default_args(), cwd=tmp_path)
    opts = args.claude
    assert (args.print_mode, args.input_format, args.output_format) == (True, "stream-json", "stream-json")
    assert args.append_system_prompt == "Be brief." and args.system_prompt is None
    assert opts.base_tools == ["read_file", "execute"]
    assert args.allowed_tools == ["Read", "Bash(git status:*)"]
    assert args.disallowed_tools == ["WebFetch", "Read(.env)"]
    assert args.max_turns == 7 and args.permission_mode == "accept-edits" and not args.yes
    assert args.model is None and opts.model_alias == "claude-sonnet-4-5"  # a Claude name: the configured model
    assert opts.permission_prompt and opts.include_partial_messages and opts.fork_session
    assert args.resume == "20261201-101010-abcdef" and args.add_dir == [tmp_path]
    assert opts.sdk_mcp_servers == ["calc"]
    assert [json.loads(v) for v in args.mcp_config] == [{"mcpServers": {"files": {"command": "python",
                                                                                  "args": ["server.py"]}}}]
    assert args.reasoning_effort == "medium" and opts.json_schema == {"type": "object"}


def test_the_default_command_keeps_agentica_base_prompt_empty_system_prompt() -> None:
    args = parse_claude_command_line(sdk_command(), default_args())
    assert args.system_prompt == ""  # --system-prompt "": no Claude preset; agentica keeps its tool notes
    assert args.claude.claude_mode == "default" and args.permission_mode is None


def test_bypass_permissions_is_an_explicit_yes_and_other_model_ids_are_used() -> None:
    args = parse_claude_command_line(sdk_command(permission_mode="bypassPermissions", model="deepseek-chat"),
                                     default_args())
    assert args.permission_mode == "auto" and args.yes
    assert args.model == "deepseek-chat"


@pytest.mark.parametrize(("option", "value", "flag"), [
    ("max_budget_usd", 1.5, "--max-budget-usd"),
    ("fallback_model", "haiku", "--fallback-model"),
    ("betas", ["context-1m-2025-08-07"], "--betas"),
    ("permission_mode", "auto", "--permission-mode"),
    ("permission_prompt_tool_name", "mcp__auth__ask", "--permission-prompt-tool"),
    ("extra_args", {"no-such-flag": None}, "--no-such-flag"),
    ("sandbox", {"enabled": True}, "--settings: the key 'sandbox'"),
])
def test_what_agentica_cannot_honour_is_an_error_naming_the_flag(option: str, value: Any, flag: str) -> None:
    with pytest.raises(ClaudeFlagError, match=flag):
        parse_claude_command_line(sdk_command(**{option: value}), default_args())


@pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed `agentica` script as cli_path")
def test_the_sdk_reports_the_refusal_in_agenticas_words(tmp_path: Path) -> None:
    stderr: list[str] = []
    opts = ClaudeAgentOptions(cli_path=str(SCRIPT), cwd=str(tmp_path), max_budget_usd=2.0, stderr=stderr.append,
                              env={"AGENTICA_HOME": str(tmp_path / "home")})

    async def main() -> None:
        async for _ in query(prompt="hello", options=opts):
            pass

    with pytest.raises(Exception, match="--max-budget-usd is not supported") as raised:
        asyncio.run(asyncio.wait_for(main(), 60))
    assert getattr(raised.value, "exit_code", None) == 2
    assert any("--max-budget-usd" in line for line in stderr)


@pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed `agentica` script as cli_path")
def test_a_start_that_fails_tells_the_sdk_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.endswith("_API_KEY") or n.startswith("AGENTICA_")]:
        monkeypatch.delenv(name)  # the SDK hands its own environment to the CLI
    opts = ClaudeAgentOptions(cli_path=str(SCRIPT), cwd=str(tmp_path), stderr=lambda line: None,
                              env={"AGENTICA_HOME": str(tmp_path / "home")})

    async def main() -> None:
        async for _ in query(prompt="hello", options=opts):
            pass

    with pytest.raises(Exception, match="no API key configured for provider 'openai'") as raised:
        asyncio.run(asyncio.wait_for(main(), 60))
    assert getattr(raised.value, "exit_code", None) == 2


def test_help_in_the_claude_protocol_points_to_its_page(tmp_path: Path) -> None:
    from cli_support import run_cli

    proc = run_cli(["--protocol", "claude", "--help"], cwd=tmp_path, home=tmp_path)
    assert proc.returncode == 0 and "docs/sdk.md" in proc.stdout
