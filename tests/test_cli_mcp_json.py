"""Claude Code's MCP config files in the `agentica` command: a project's `.mcp.json` (waits
for trust like the project's own [mcp_servers]), `--mcp-config FILE|JSON`, `--strict-mcp-config`,
`${VAR}` / `${VAR:-default}`, where `agentica mcp list` says each server comes from, and
`agentica mcp add|remove --scope project`. Real demo server processes, the scripted model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import cli_env, model_args, run_cli, tool_results
from mcp_repl_support import wait_until_server_ready
from screen_support import spawn_agentica

from agentica_cli.app.settings.mcp_json import parse
from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.tools.mcp.servers import McpServerConfig

DEMO = str(Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py")


def offered(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools") or []}


def demo_entry(marker: Path | None = None, **extra: Any) -> dict[str, Any]:
    """A `.mcp.json` entry that runs the demo server (writing `marker` when it starts)."""
    args = [DEMO, *(["--started-marker", str(marker)] if marker else [])]
    return {"command": sys.executable, "args": args, **extra}


def write_mcp_json(folder: Path, servers: dict[str, Any]) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def trust_folder(home: Path, folder: Path) -> None:
    (home / "trusted_projects.json").write_text(json.dumps({"trusted": [str(folder.resolve())]}))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


# -- the format -------------------------------------------------------------------------------


def test_mcp_json_entries_become_config_tables_the_server_set_accepts(tmp_path: Path) -> None:
    text = json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "srv"], "env": {"K": "${K}"}},
        "typed": {"type": "stdio", "command": "srv"},
        "api": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}},
        "events": {"type": "sse", "url": "https://h/sse"},
        "guess": {"url": "https://h/mcp"},
    }})
    found = parse(text, "f.json", cwd=tmp_path)
    assert found.problems == []
    assert found.servers == {
        "files": {"command": "npx", "args": ["-y", "srv"], "env": {"K": "${K}"}, "cwd": str(tmp_path)},
        "typed": {"command": "srv", "cwd": str(tmp_path)},
        "api": {"url": "https://h/mcp", "transport": "streamable-http", "headers": {"Authorization": "Bearer ${T}"}},
        "events": {"url": "https://h/sse", "transport": "sse"},
        "guess": {"url": "https://h/mcp"},
    }
    for name, table in found.servers.items():
        McpServerConfig.from_dict(name, table)  # what start-up checks again: never an error here


def test_bad_entries_are_named_by_file_and_server_and_the_good_ones_kept() -> None:
    text = json.dumps({"mcpServers": {
        "good": {"command": "srv"},
        "empty": {},
        "both": {"command": "a", "url": "http://h"},
        "wrongtype": {"type": "sse", "command": "a"},
        "argsurl": {"url": "http://h", "args": ["x"]},
        "envnum": {"command": "a", "env": {"PORT": 3000}},
        "odd": {"command": "a", "timeout": 5},
        "bad name": {"command": "a"},
        "notobj": ["a"],
    }})
    found = parse(text, "/p/.mcp.json")
    assert list(found.servers) == ["good"]
    assert found.problems == [
        "/p/.mcp.json: server 'empty': needs either 'command' (a stdio server) or 'url' (type http or sse)",
        "/p/.mcp.json: server 'both': has both 'command' and 'url': give one",
        "/p/.mcp.json: server 'wrongtype': type 'sse' needs 'url', not 'command'",
        "/p/.mcp.json: server 'argsurl': 'args' is for a 'command' server, not a url one",
        "/p/.mcp.json: server 'envnum': 'env' must be an object of strings, got {\"PORT\": 3000}",
        "/p/.mcp.json: server 'odd': unknown key 'timeout' (known keys: type, command, args, env, url, headers, "
        "headersHelper, cwd)",
        '/p/.mcp.json: server "bad name": a name may use only letters, digits, _ and -',
        "/p/.mcp.json: server 'notobj': must be an object, got [\"a\"]",
    ]
    assert parse("{not json", "x").problems[0].startswith("x: not valid JSON: ")
    assert parse('{"servers": {}}', "x").problems == [
        'x: expected an object {"mcpServers": {"NAME": {...}}}, found no "mcpServers" object']


def test_variables_with_defaults_are_expanded_in_command_args_env_url_and_headers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_BIN", "/opt/demo")
    monkeypatch.setenv("EMPTY_ONE", "")
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    stdio = McpServerConfig.from_dict("s", {
        "command": "${DEMO_BIN}/run", "args": ["--root", "${NOT_SET_HERE:-/srv}", "${EMPTY_ONE:-dflt}", "$HOME"],
        "env": {"TOKEN": "${DEMO_BIN:-x}-${NOT_SET_HERE:-}"}}).build_tool()
    assert (stdio.target.command, stdio.target.args) == ("/opt/demo/run", ("--root", "/srv", "dflt", "$HOME"))
    assert stdio.target.env["TOKEN"] == "/opt/demo-"
    remote = McpServerConfig.from_dict("r", {
        "url": "${NOT_SET_HERE:-http://127.0.0.1:9}/mcp", "headers": {"X": "${DEMO_BIN}"}}).build_tool()
    assert (remote.target.url, dict(remote.target.headers)) == ("http://127.0.0.1:9/mcp", {"X": "/opt/demo"})


# -- a project's .mcp.json ---------------------------------------------------------------------


def test_trusted_project_mcp_json_server_is_offered_and_called_with_variables_expanded(
        home: Path, project: Path) -> None:
    write_mcp_json(project, {"demo": {"command": "${DEMO_PYTHON}", "args": ["${DEMO_SCRIPT}"],
                                      "env": {"GREETING": "${GREETING_FROM_SHELL}",
                                              "FALLBACK": "${NOT_SET_ANYWHERE:-plan b}"}}})
    script = [
        turns.tool_calls(turns.call("demo__getenv", {"name": "GREETING"}, id="g"),
                         turns.call("demo__getenv", {"name": "FALLBACK"}, id="f"),
                         turns.call("demo__cwd", {}, id="c")),
        turns.text("done"),
    ]
    env = cli_env(home, DEMO_PYTHON=sys.executable, DEMO_SCRIPT=DEMO, GREETING_FROM_SHELL="hello")
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--trust", *model_args(server)], cwd=project, home=home, env=env)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert {"demo__getenv", "demo__add", "read_file"} <= offered(requests[0])
    results = tool_results(requests[1])
    assert (results["g"], results["f"]) == ("hello", "plan b")
    assert results["c"] == str(project.resolve())  # a .mcp.json server starts in the file's folder
    assert "ignoring" not in proc.stderr and "warning" not in proc.stderr


def test_untrusted_project_mcp_json_starts_nothing_until_trusted(home: Path, project: Path) -> None:
    marker = project.parent / "started"
    mcp_json = write_mcp_json(project, {"demo": demo_entry(marker)})
    with ScriptedModelServer([turns.text("ok"), turns.text("ok")]) as server:
        untrusted = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
        listed = run_cli(["mcp", "list"], cwd=project, home=home)
        assert not marker.exists()  # neither the run nor the listing started the server
        trusted = run_cli(["-p", "hi", "--trust", *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert untrusted.returncode == 0, untrusted.stderr
    assert (f"agentica: ignoring the MCP servers of untrusted {mcp_json} (demo) (run with --trust to use them)"
            in untrusted.stderr)
    assert not any(name.startswith("demo__") for name in offered(requests[0]))
    assert listed.stdout == f"demo  stdio {sys.executable} {DEMO} --started-marker {marker}  " \
                            f"[{mcp_json}, not trusted: agentica --trust]\n"
    assert trusted.returncode == 0, trusted.stderr
    assert "demo__add" in offered(requests[1])
    assert marker.exists()  # the marker does prove a start


def test_broken_project_mcp_json_is_a_warning_and_agentica_goes_on(home: Path, project: Path) -> None:
    trust_folder(home, project)
    (project / ".mcp.json").write_text('{"mcpServers": {"demo": ')
    with ScriptedModelServer([turns.text("still here")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "still here\n"
    assert f"agentica: warning: {project / '.mcp.json'}: not valid JSON: " in proc.stderr
    assert "going on without it" in proc.stderr

    write_mcp_json(project, {"demo": demo_entry(), "broken": {"command": sys.executable, "url": "http://h"}})
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
        tools = offered(server.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert (f"agentica: warning: {project / '.mcp.json'}: server 'broken': has both 'command' and 'url': "
            "give one; going on without it\n") in proc.stderr
    assert "demo__add" in tools  # the good server of the same file works


def test_precedence_user_then_mcp_json_then_project_config_and_mcp_list_names_each_source(
        home: Path, project: Path) -> None:
    user_config = home / "config.toml"
    user_config.write_text('[mcp_servers.shared]\ncommand = "from-user"\n\n'
                           '[mcp_servers.mine]\ncommand = "only-user"\n')
    mcp_json = write_mcp_json(project, {"shared": {"command": "from-mcp-json"},
                                        "team": {"command": "from-mcp-json"},
                                        "web": {"type": "sse", "url": "http://127.0.0.1:9/sse"}})
    (project / ".agentica").mkdir()
    project_config = project / ".agentica" / "config.toml"
    project_config.write_text('[mcp_servers.team]\ncommand = "from-project-config"\n')
    trust_folder(home, project)
    proc = run_cli(["mcp", "list"], cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.splitlines()) == sorted([
        f"shared  stdio from-mcp-json  [{mcp_json}]",
        f"mine  stdio only-user  [{user_config}]",
        f"team  stdio from-project-config  [{project_config}]",
        f"web  sse http://127.0.0.1:9/sse  [{mcp_json}]",
    ])


# -- --mcp-config and --strict-mcp-config -----------------------------------------------------


def test_mcp_config_file_and_inline_json_serve_this_run_without_trust(home: Path, project: Path,
                                                                      tmp_path: Path) -> None:
    config_file = tmp_path / "servers.json"
    config_file.write_text(json.dumps({"mcpServers": {"fromfile": demo_entry()}}))
    inline = json.dumps({"mcpServers": {"inline": demo_entry(env={"WHO": "${WHO_RUNS:-inline json}"})}})
    script = [
        turns.tool_calls(turns.call("fromfile__add", {"a": 2, "b": 3}, id="a"),
                         turns.call("inline__getenv", {"name": "WHO"}, id="w")),
        turns.text("done"),
    ]
    with ScriptedModelServer(script) as server:
        proc = run_cli(["-p", "go", "--mcp-config", str(config_file), "--mcp-config", inline, *model_args(server)],
                       cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert {"fromfile__add", "inline__getenv"} <= offered(requests[0])
    assert tool_results(requests[1]) == {"a": "5", "w": "inline json"}
    assert "ignoring" not in proc.stderr  # the user's own flags: no trust needed


def test_strict_mcp_config_hides_every_other_mcp_configuration(home: Path, project: Path, tmp_path: Path) -> None:
    user_marker, project_marker = tmp_path / "user-started", tmp_path / "project-started"
    entry = demo_entry(user_marker)
    (home / "config.toml").write_text(
        f'[mcp_servers.userdemo]\ncommand = {json.dumps(entry["command"])}\nargs = {json.dumps(entry["args"])}\n')
    write_mcp_json(project, {"projdemo": demo_entry(project_marker)})
    trust_folder(home, project)
    flag = ["--mcp-config", json.dumps({"mcpServers": {"flagdemo": demo_entry()}})]
    with ScriptedModelServer([turns.text("ok")]) as server:
        strict = run_cli(["-p", "hi", *flag, "--strict-mcp-config", *model_args(server)], cwd=project, home=home)
        tools = offered(server.requests[0])
    assert strict.returncode == 0, strict.stderr
    assert "flagdemo__add" in tools
    assert not any(name.startswith(("userdemo__", "projdemo__")) for name in tools)
    assert not user_marker.exists() and not project_marker.exists()  # not even started
    with ScriptedModelServer([turns.text("ok")]) as server:  # without --strict-mcp-config: all three
        mixed = run_cli(["-p", "hi", *flag, *model_args(server)], cwd=project, home=home)
        tools = offered(server.requests[0])
    assert mixed.returncode == 0, mixed.stderr
    assert {"flagdemo__add", "userdemo__add", "projdemo__add"} <= tools
    assert user_marker.exists() and project_marker.exists()


def test_strict_mcp_config_alone_means_no_servers_and_no_trust_notice(home: Path, project: Path) -> None:
    write_mcp_json(project, {"demo": demo_entry()})  # untrusted: would be reported as ignored
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", "--strict-mcp-config", *model_args(server)], cwd=project, home=home)
        tools = offered(server.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert not any("__" in name for name in tools)
    assert ".mcp.json" not in proc.stderr


@pytest.mark.parametrize(("value", "message"), [
    ("missing.json", "agentica: --mcp-config missing.json: no such file"),
    ('{"mcpServers": ', "agentica: --mcp-config (JSON text): not valid JSON: "),
    ('{"servers": {}}', 'agentica: --mcp-config (JSON text): expected an object {"mcpServers": {"NAME": {...}}}'),
    ('{"mcpServers": {"x": {"args": ["a"]}}}',
     "agentica: --mcp-config (JSON text): server 'x': needs either 'command' (a stdio server) or 'url'"),
    ('{"mcpServers": {"x": {"type": "http", "url": "http://127.0.0.1:9/${UNSET_IN_TEST}"}}}',
     "agentica: --mcp-config (JSON text): server 'x': url refers to ${UNSET_IN_TEST}, which is not set in the "
     "environment (or write ${UNSET_IN_TEST:-default})"),
    ("servers.json", "agentica: --mcp-config servers.json: server 'y': 'type' must be one of stdio, http, sse"),
])
def test_bad_mcp_config_is_a_usage_error_before_any_request(home: Path, project: Path, value: str,
                                                            message: str) -> None:
    (project / "servers.json").write_text('{"mcpServers": {"y": {"type": "ws", "url": "ws://h"}}}')
    with ScriptedModelServer([turns.text("never")]) as server:
        proc = run_cli(["-p", "hi", "--mcp-config", value, *model_args(server)], cwd=project, home=home)
        assert server.requests == []
    assert proc.returncode == 2
    assert proc.stderr.startswith(message), proc.stderr


# -- agentica mcp add|remove --scope project ----------------------------------------------------


def test_mcp_add_scope_project_writes_mcp_json_that_start_up_reads(home: Path, project: Path) -> None:
    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {"kept": {"command": "x"}}, "other": 1}\n')
    added = run_cli(["mcp", "add", "--scope", "project", "files", "-e", "ROOT=${ROOT:-/srv}", "--",
                     "python", "srv.py"], cwd=project, home=home)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith(f"added MCP server files to {path}\n")
    run_cli(["mcp", "add", "-s", "project", "api", "--url", "http://127.0.0.1:9/sse", "-H", "X-Key: ${KEY}"],
            cwd=project, home=home)
    assert json.loads(path.read_text()) == {"mcpServers": {
        "kept": {"command": "x"},
        "files": {"type": "stdio", "command": "python", "args": ["srv.py"], "env": {"ROOT": "${ROOT:-/srv}"}},
        "api": {"type": "sse", "url": "http://127.0.0.1:9/sse", "headers": {"X-Key": "${KEY}"}},
    }, "other": 1}
    assert not (home / "config.toml").exists()  # the user config is not touched
    again = run_cli(["mcp", "add", "--scope", "project", "files", "--", "other"], cwd=project, home=home)
    assert again.returncode == 2 and "already there (--replace to overwrite it)" in again.stderr
    oauth = run_cli(["mcp", "add", "--scope", "project", "t", "--url", "http://h/mcp", "--oauth"],
                    cwd=project, home=home)
    assert oauth.returncode == 2 and "not part of the .mcp.json format" in oauth.stderr
    env_on_url = run_cli(["mcp", "add", "-s", "project", "u", "--url", "http://h/mcp", "-e", "A=1"],
                         cwd=project, home=home)
    assert env_on_url.returncode == 2 and "mcp_servers.u.env applies to a 'command' server" in env_on_url.stderr
    assert list(json.loads(path.read_text())["mcpServers"]) == ["kept", "files", "api"]  # refused: unchanged
    trust_folder(home, project)
    listed = run_cli(["mcp", "list"], cwd=project, home=home).stdout
    assert f"files  stdio python srv.py  [{path}]" in listed
    removed = run_cli(["mcp", "remove", "--scope", "project", "files"], cwd=project, home=home)
    assert removed.returncode == 0, removed.stderr
    assert list(json.loads(path.read_text())["mcpServers"]) == ["kept", "api"]


# -- the REPL -------------------------------------------------------------------------------------


def test_repl_asks_trust_for_mcp_json_servers_then_starts_them(home: Path, project: Path) -> None:
    marker = project.parent / "started"
    mcp_json = write_mcp_json(project, {"demo": demo_entry(marker)})
    with ScriptedModelServer([]) as server:
        child = spawn_agentica(home, project, model_args(server), columns=160)
        try:
            child.expect(rf"{mcp_json} defines MCP servers: demo\.")
            child.expect(r"Trust this project\? \[y/N\] ")
            assert not marker.exists()  # nothing starts before the answer
            child.send("y\r")
            child.expect("Trusted.")
            child.expect("❯")
            wait_until_server_ready(child, "demo", tries=40)
            child.expect(r"tools: .*demo__add")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    assert marker.exists()
