"""The typer command line's subcommands: `agentica mcp list|add|remove`, `agentica sessions
list|show|rm`, `agentica acp`, and shell completion. The config edits are checked in-process
(the functions the commands call); each command's wiring once through the real `agentica`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from cli_support import cli_env, run_cli

from agentica_cli.app.sessions import SessionStore
from agentica_cli.app.settings.config import ConfigError, load_settings, load_toml
from agentica_cli.cli.mcp_config_edit import add_server, remove_server, server_table

USER_CONFIG = """\
# my settings
[model]
name = "gpt-4o"  # the default

[mcp_servers.keep]
command = "keep-server"
"""


@pytest.fixture
def user_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    (home / "config.toml").write_text(USER_CONFIG)
    return home


def test_mcp_add_appends_a_checked_table_and_keeps_the_rest(user_home: Path, tmp_path: Path) -> None:
    table = server_table(command=["python", "-m", "srv", "--root", 'a "b"\\c'], env=["TOKEN=${MY_TOKEN}", "X=1=2"])
    path = add_server("files", table)
    assert path == user_home / "config.toml"
    text = path.read_text()
    assert text.startswith(USER_CONFIG)  # comments and order as the user wrote them
    servers = load_settings(tmp_path, {}, trusted=False).mcp_servers
    assert servers["files"] == {"command": "python", "args": ["-m", "srv", "--root", 'a "b"\\c'],
                                "env": {"TOKEN": "${MY_TOKEN}", "X": "1=2"}}
    assert servers["keep"] == {"command": "keep-server"}
    add_server("web", server_table(url="http://127.0.0.1:9/mcp", headers=["Authorization: Bearer x"]))
    assert load_toml(path)["mcp_servers"]["web"] == {"url": "http://127.0.0.1:9/mcp",
                                                    "headers": {"Authorization": "Bearer x"}}


def test_mcp_add_refuses_what_start_up_would_refuse_and_leaves_the_file(user_home: Path) -> None:
    path = user_home / "config.toml"
    with pytest.raises(ConfigError, match="already there"):
        add_server("keep", server_table(command=["other"]))
    with pytest.raises(ConfigError, match="letters, digits"):
        add_server("bad name", server_table(command=["x"]))
    with pytest.raises(ConfigError, match="env"):  # env belongs to a command server
        add_server("web", server_table(url="http://127.0.0.1:9/mcp", env=["A=1"]))
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        server_table(command=["x"], env=["novalue"])
    assert path.read_text() == USER_CONFIG
    add_server("keep", server_table(command=["other"]), replace=True)
    assert load_toml(path)["mcp_servers"]["keep"] == {"command": "other"}
    assert path.read_text().startswith("# my settings\n[model]\nname = \"gpt-4o\"  # the default\n")


def test_mcp_remove_cuts_the_table_with_its_sub_tables(user_home: Path) -> None:
    path = user_home / "config.toml"
    path.write_text(USER_CONFIG + '\n[mcp_servers.gone]\ncommand = "x"\n\n[mcp_servers.gone.env]\nA = "1"\n'
                    '\n[ui]\nmarkdown = false\n')
    remove_server("gone")
    data = load_toml(path)
    assert "gone" not in data["mcp_servers"] and data["ui"] == {"markdown": False}
    assert path.read_text().startswith(USER_CONFIG)
    with pytest.raises(ConfigError, match="no MCP server named 'gone'"):
        remove_server("gone")
    path.write_text('[mcp_servers]\ninline = { command = "x" }\n')  # not a table of its own: not cut blindly
    with pytest.raises(ConfigError, match="by hand"):
        remove_server("inline")
    assert path.read_text() == '[mcp_servers]\ninline = { command = "x" }\n'


def test_mcp_commands_through_the_cli(home: Path, tmp_path: Path) -> None:
    added = run_cli(["mcp", "add", "files", "--", "python", "-m", "srv", "-v"], cwd=tmp_path, home=home)
    assert added.returncode == 0, added.stderr
    listed = run_cli(["mcp", "list"], cwd=tmp_path, home=home)
    assert listed.returncode == 0
    assert f"files  stdio python -m srv -v  [{home / 'config.toml'}]" in listed.stdout
    again = run_cli(["mcp", "add", "files", "--", "x"], cwd=tmp_path, home=home)
    assert again.returncode == 2 and "already there" in again.stderr
    neither = run_cli(["mcp", "add", "y"], cwd=tmp_path, home=home)
    assert neither.returncode == 2 and "either a command" in neither.stderr
    removed = run_cli(["mcp", "remove", "files"], cwd=tmp_path, home=home)
    assert removed.returncode == 0 and "removed MCP server files" in removed.stdout
    assert "no MCP servers configured" in run_cli(["mcp", "list"], cwd=tmp_path, home=home).stdout
    assert run_cli(["mcp", "remove", "files"], cwd=tmp_path, home=home).returncode == 2
    assert run_cli(["mcp", "frobnicate"], cwd=tmp_path, home=home).returncode == 2


def test_sessions_list_show_rm(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    session = SessionStore().create(project.resolve(), "scripted-model")
    session.append({"role": "user", "content": "read the notes\x1b[2J"})
    session.append({"role": "assistant", "content": "They say hello."})
    session.close()
    other = SessionStore().create(tmp_path.resolve())
    other.close()

    here = run_cli(["sessions", "list"], cwd=project, home=home)
    assert here.returncode == 0 and session.id in here.stdout and other.id not in here.stdout
    assert "read the notes" in here.stdout and "\x1b" not in here.stdout
    everywhere = run_cli(["sessions", "list", "--all"], cwd=project, home=home)
    assert session.id in everywhere.stdout and other.id in everywhere.stdout
    shown = run_cli(["sessions", "show", session.id[:-1]], cwd=project, home=home)  # a unique prefix
    assert shown.returncode == 0, shown.stderr
    assert "you: read the notes" in shown.stdout and "agent: They say hello." in shown.stdout
    assert "\x1b" not in shown.stdout  # the stored escape is shown, not obeyed
    removed = run_cli(["sessions", "rm", session.id], cwd=project, home=home)
    assert removed.returncode == 0 and not session.path.exists()
    missing = run_cli(["sessions", "show", session.id], cwd=project, home=home)
    assert missing.returncode == 2 and "no session" in missing.stderr


def test_sessions_rm_refuses_a_session_another_process_has_open(home: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    session = SessionStore().create(tmp_path)  # held open (and locked) by this test process
    busy = run_cli(["sessions", "rm", session.id], cwd=tmp_path, home=home)
    assert busy.returncode == 2 and "open in another agentica" in busy.stderr
    assert session.path.exists()
    session.close()


@pytest.mark.skipif(importlib.util.find_spec("agentica_cli.acp") is not None, reason="the ACP server is built in")
def test_acp_without_the_acp_module_is_a_clear_usage_error(home: Path, tmp_path: Path) -> None:
    proc = run_cli(["acp"], cwd=tmp_path, home=home)
    assert proc.returncode == 2 and "agentica acp" in proc.stderr and "Traceback" not in proc.stderr


def test_shell_completion_offers_flags_choices_and_subcommands(home: Path, tmp_path: Path) -> None:
    def complete(words: str, index: int) -> list[str]:
        env = cli_env(home, _AGENTICA_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(index))
        proc = run_cli([], cwd=tmp_path, home=home, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert complete("agentica --outp", 1) == ["--output-format"]
    assert complete("agentica --permission-mode a", 2) == ["accept-edits", "auto"]
    assert complete("agentica se", 1) == ["sessions"]
    assert complete("agentica mcp ", 2) == ["list", "add", "remove", "serve"]
    script = run_cli(["--show-completion", "bash"], cwd=tmp_path, home=home)
    assert script.returncode == 0 and "_AGENTICA_COMPLETE=complete_bash" in script.stdout


def test_subcommand_help_and_unknown_flags(home: Path, tmp_path: Path) -> None:
    helped = run_cli(["mcp", "add", "--help"], cwd=tmp_path, home=home)
    assert helped.returncode == 0 and "--url" in helped.stdout and "--env" in helped.stdout
    bare = run_cli(["sessions"], cwd=tmp_path, home=home)
    assert bare.returncode == 0 and "list" in bare.stdout and "rm" in bare.stdout
    wrong = run_cli(["sessions", "list", "--bogus"], cwd=tmp_path, home=home)
    assert wrong.returncode == 2 and "agentica: error: No such option: --bogus" in wrong.stderr


def test_a_bare_agentica_skips_the_parser_with_the_same_flags_it_would_give(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.cli import commands, launch

    seen: list[object] = []
    monkeypatch.setattr(launch, "start", lambda args: seen.append(args) or 0)
    assert commands.run([]) == 0
    assert seen == [launch.default_args()]


def test_the_cached_command_line_parses_as_a_fresh_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root command is built once a process and parses every command line after it: each
    parse gives what a freshly built command gives, with nothing carried over from the one
    before (list options, defaults)."""
    import typer

    from agentica_cli.cli import commands, launch

    seen: list[object] = []
    monkeypatch.setattr(launch, "start", lambda args: seen.append(args) or 0)
    assert commands.click_command(False) is commands.click_command(False)
    lines = [["-p", "--model", "m1", "--allowedTools", "read_file", "--add-dir", "/tmp", "say hi"],
             ["-p", "--output-format", "stream-json", "-C", "/tmp", "--max-turns", "3"],
             ["-p", "--model", "m1", "--allowedTools", "read_file", "--add-dir", "/tmp", "say hi"],
             ["the prompt", "in words"]]
    for argv in lines:
        assert commands.run(list(argv)) == 0
        cached = seen.pop()
        fresh = typer.main.get_command(commands._root_app())
        assert fresh.main(args=commands._worktree_name_optional(list(argv)), prog_name="agentica",
                          standalone_mode=False) == 0
        assert vars(cached) == vars(seen.pop())


def test_the_command_lines_flags_are_annotated_with_objects_not_strings() -> None:
    """typer reads each flag off its parameter's annotation. Under `from __future__ import
    annotations` those are strings, which typer evaluates (compiles) again at every start:
    ~50 M instructions, ~12 ms of `agentica -p` before its first request. The three modules
    that declare typer commands keep their annotations evaluated."""
    import inspect

    import typer

    from agentica_cli.cli import batch_commands, commands, subcommands

    checked = 0
    for module in (commands, subcommands, batch_commands):
        for name, function in vars(module).items():
            if not inspect.isfunction(function) or function.__module__ != module.__name__:
                continue
            defaults = inspect.signature(function).parameters.values()
            if not any("typer" in repr(p.annotation) or isinstance(p.default, typer.models.ParameterInfo)
                       for p in defaults):
                continue
            checked += 1
            strings = [k for k, v in function.__annotations__.items() if isinstance(v, str)]
            assert strings == [], f"{module.__name__}.{name}: string annotations {strings}"
    assert checked >= 10  # the main command and the subcommands were found


def test_the_version_imports_neither_typing_nor_re() -> None:
    """`agentica --version` is the one answer that needs no parser: the package's `__init__`
    names its types without importing `typing` (~7 ms with `re` under it)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "agentica_cli", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("agentica ")
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "agentica_cli" in imported
    assert not imported & {"typing", "re"}, sorted(imported)
