"""MCP client features in the `agentica` command: a server prompt as a slash command, an
elicitation form and a sampling approval in the REPL (pseudo-terminal), and -p declining
what would need a person."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest
from cli_support import model_args, run_cli, tool_results
from mcp_repl_support import spawn_repl, wait_until_server_ready
from screen_support import open_screen

from agentica_cli.testing import ScriptedModelServer, turns

FEATURES = Path(__file__).resolve().parent / "mcp_servers" / "features_server.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".agentica").mkdir(parents=True)
    (path / ".agentica" / "config.toml").write_text(
        f'[mcp_servers.feat]\ncommand = "{sys.executable}"\nargs = ["{FEATURES}"]\nprotocol = "legacy"\n')
    return path


def wait_until_ready(child: pexpect.spawn) -> None:
    wait_until_server_ready(child, "feat", tries=60)
    child.expect(r"not offered: research \(needs task-augmented calls")
    child.expect(r"prompts: /mcp__feat__review")
    child.expect("❯")


def test_repl_prompt_command_elicitation_form_and_sampling_approval(home: Path, project: Path) -> None:
    script = [
        turns.text("Reviewed."),
        turns.tool_calls(turns.call("feat__register", {}, id="r1")),
        turns.text("You are registered."),
        turns.tool_calls(turns.call("feat__haiku", {"topic": "autumn"}, id="h1")),
        turns.text("leaves fall softly"),  # the sampling request, after the user said yes
        turns.text("Here is your haiku."),
        turns.text("Read it."),
    ]
    with ScriptedModelServer(script) as server:
        child = spawn_repl(home, project, server, "--yes", timeout=30)
        try:
            child.expect("❯")
            wait_until_ready(child)
            child.send("/mcp__feat__rev\t")  # completed with Tab (else: "Unknown MCP prompt")
            child.expect(r"rev(\x1b\[[0-9;?]*[A-Za-z])*iew")  # inserted: keys typed sooner could beat it
            child.send(" main.py\r")
            child.expect("Reviewed.")
            child.expect("❯")
            child.send("register me\r")
            child.expect("MCP server 'feat' asks: Who are you?")
            child.expect("Name")
            child.send("Ada\r")
            child.expect("Age")
            child.send("not a number\r")
            child.expect("expected a whole number")
            child.send("36\r")
            child.expect("You are registered.")
            child.expect("❯")
            child.send("a haiku please\r")
            child.expect("MCP server 'feat' wants to ask the model")
            child.expect("A haiku about autumn")
            child.send("y")
            child.expect("Here is your haiku.")
            child.expect("❯")
            child.send("summarise @feat:demo://rea\t")  # an MCP resource, completed with Tab
            child.expect(r"rea(\x1b\[[0-9;?]*[A-Za-z])*dme")
            child.send("\r")
            child.expect(r"attached feat:demo://readme")
            child.expect("Read it.")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    requests = server.requests
    assert requests[0]["messages"][-1]["content"] == "Please review main.py, looking for bugs."
    assert tool_results(requests[2])["r1"] == "registered Ada, 36"
    assert requests[4]["messages"][-1]["content"] == "A haiku about autumn"  # the model answered the server
    assert "tools" not in requests[4]
    assert tool_results(requests[5])["h1"] == "model wrote: leaves fall softly"
    assert requests[6]["messages"][-1]["content"] == (
        'summarise @feat:demo://readme\n\n<resource server="feat" uri="demo://readme">\n'
        "README: the demo project\n</resource>")


def test_print_mode_declines_elicitation_cleanly(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("feat__register", {}, id="r1")), turns.text("ok")]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "register me", "--trust", "--yes", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    assert "agentica: MCP server 'feat' asked for input (Who are you?); declined: -p cannot ask" in proc.stderr
    assert tool_results(server.requests[1])["r1"] == "not registered (decline)"


def test_an_elicitation_field_wider_than_the_terminal_is_on_screen_whole(home: Path, project: Path) -> None:
    script = [turns.tool_calls(turns.call("feat__subscribe", {}, id="s1")), turns.text("Subscribed.")]
    with ScriptedModelServer(script) as server:
        screen = open_screen(home, project, [*model_args(server), "--trust", "--yes"], columns=40)
        try:
            screen.child.expect("❯", timeout=30)
            wait_until_server_ready(screen.child, "feat", tries=60)  # read by pexpect, drawn on the screen too
            screen.child.expect("❯")
            screen.send("sign me up\r")
            screen.wait_whole("MCP server 'feat' asks: Where should the newsletter go?")
            screen.wait_whole("The e-mail address the weekly project newsletter is sent to:")
            screen.send("ada@example.com\r")
            screen.wait_text("Subscribed.")
        finally:
            screen.child.terminate(force=True)
    assert tool_results(server.requests[1])["s1"] == "subscribed ada@example.com"
