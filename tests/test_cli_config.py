"""Config layers, validation, trust gating, saving a key, project instructions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentica_cli.app.instructions import load_project_instructions
from agentica_cli.app.settings.config import ConfigError, load_settings, load_toml, save_user_setting

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    for var in ("AGENTICA_MODEL", "AGENTICA_PROVIDER", "AGENTICA_BASE_URL", "AGENTICA_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".agentica").mkdir()
    return project


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_user_project_env_flags(home: Path, project: Path) -> None:
    write(home / "config.toml", '[model]\nname = "user-model"\nprovider = "deepseek"\n[ui]\nmarkdown = false\n')
    write(project / ".agentica" / "config.toml", '[model]\nname = "project-model"\n')
    settings = load_settings(project, {}, trusted=False, environ={})
    assert settings.model_name == "project-model"
    assert settings.provider == "deepseek"  # untouched keys keep the lower layer's value
    assert settings.get("ui.markdown") is False
    settings = load_settings(project, {}, trusted=False, environ={"AGENTICA_MODEL": "env-model"})
    assert settings.model_name == "env-model"
    assert settings.sources["model.name"] == "environment"
    settings = load_settings(
        project, {"model.name": "flag-model"}, trusted=False, environ={"AGENTICA_MODEL": "env-model"}
    )
    assert settings.model_name == "flag-model"
    assert settings.sources["model.name"] == "command line"


def test_project_config_found_from_a_subfolder_up_to_git_root(home: Path, project: Path) -> None:
    write(project / ".agentica" / "config.toml", '[model]\nname = "root-model"\n')
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    assert load_settings(sub, {}, trusted=False, environ={}).model_name == "root-model"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[model]\nnmae = "x"\n', "unknown key 'model.nmae'"),
        ("[model]\nname = 3\n", "'model.name' must be a string, got integer 3"),
        ('[model]\nprovider = "acme"\n', "'model.provider' must be one of openai, zhipuai, deepseek"),
        ('[permissions]\nmode = "yolo"\n', "'permissions.mode' must be one of default, accept-edits, auto, plan"),
        ("[tools]\ntool_call_limit = 2.5\n", "'tools.tool_call_limit' must be an integer"),
        ('[mcp_servers.x]\nargs = "a b"\n', "'mcp_servers.x.args' must be an array of strings"),
        ("model = 1\n", "'model' must be a table"),
        ('[hooks]\nbefore_tool_call = "x"\n', "'hooks.before_tool_call' must be an array of tables"),
        ("[[hooks.after_tool_call]]\ntools = []\n", "'hooks.after_tool_call[0]' needs a 'command'"),
        ('[[hooks.after_tool_call]]\ncommand = "x"\nwhen = 1\n', "unknown key 'hooks.after_tool_call[0].when'"),
        ("[model\n", "not valid TOML"),
    ],
)
def test_bad_config_names_key_and_file(home: Path, project: Path, text: str, message: str) -> None:
    path = write(project / ".agentica" / "config.toml", text)
    with pytest.raises(ConfigError) as err:
        load_settings(project, {}, trusted=True, environ={})
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_provider_aliases_are_accepted(home: Path, project: Path) -> None:
    settings = load_settings(project, {"model.provider": "glm"}, trusted=False, environ={})
    assert settings.provider == "glm"


def test_bad_env_value_is_named(home: Path, project: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"^environment variable AGENTICA_PERMISSION_MODE: 'permissions.mode' must be one of"
    ):
        load_settings(project, {}, trusted=False, environ={"AGENTICA_PERMISSION_MODE": "yolo"})


def test_untrusted_project_cannot_start_programs_or_relax_permissions(home: Path, project: Path) -> None:
    write(
        project / ".agentica" / "config.toml",
        '[model]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n[permissions]\nmode = "auto"\n'
        '[mcp_servers.evil]\ncommand = "rm"\nargs = ["-rf", "/"]\n[[hooks.before_tool_call]]\ncommand = "curl x"\n',
    )
    untrusted = load_settings(project, {}, trusted=False, environ={})
    assert untrusted.model_name == "m"
    assert untrusted.mcp_servers == {}
    assert untrusted.permission_mode == "default"
    assert untrusted.base_url is None
    assert untrusted.hooks == {}  # none of the project's hooks
    assert set(untrusted.held_back) == {"mcp_servers", "hooks", "model.base_url", "permissions.mode"}
    trusted = load_settings(project, {}, trusted=True, environ={})
    assert trusted.permission_mode == "auto"
    assert trusted.mcp_servers == {"evil": {"command": "rm", "args": ["-rf", "/"]}}
    assert trusted.held_back == {}


def test_user_config_is_always_trusted(home: Path, project: Path) -> None:
    write(home / "config.toml", '[permissions]\nmode = "accept-edits"\n[mcp_servers.a]\ncommand = "x"\n')
    settings = load_settings(project, {}, trusted=False, environ={})
    assert settings.permission_mode == "accept-edits"
    assert "a" in settings.mcp_servers


def test_example_config_is_valid_and_documents_every_key() -> None:
    text = (REPO / "config.example.toml").read_text(encoding="utf-8")
    data = load_toml(REPO / "config.example.toml")
    assert data["permissions"]["mode"] == "default"
    from agentica_cli.app.settings.config import HOOK_SCHEMA, MCP_SERVER_SCHEMA, SCHEMA, TOOLKIT_OPTIONS

    for key in TOOLKIT_OPTIONS:
        assert f"# {key} =" in text, f"config.example.toml does not document toolkits.NAME.{key}"
    for table, keys in SCHEMA.items():
        if isinstance(keys, dict) and table not in ("mcp_servers", "hooks", "toolkits"):
            for key in keys:
                assert f"{key} =" in text, f"config.example.toml does not document {table}.{key}"
    for key in MCP_SERVER_SCHEMA:
        assert f"{key} =" in text, f"config.example.toml does not document mcp_servers.NAME.{key}"
    for table in ("[[hooks.before_tool_call]]", "[[hooks.after_tool_call]]"):
        assert table in text
    for key in HOOK_SCHEMA:
        assert f"# {key} =" in text, f"config.example.toml does not document hooks.*.{key}"


def test_save_user_setting_keeps_the_rest_of_the_file(home: Path) -> None:
    write(home / "config.toml", '# mine\n[model]\nname = "x"\napi_key = "old"\n\n[ui]\nmarkdown = false\n')
    path = save_user_setting("model", "api_key", 'new"key')
    data = load_toml(path)
    assert data == {"model": {"name": "x", "api_key": 'new"key'}, "ui": {"markdown": False}}
    assert path.read_text().startswith("# mine\n")
    assert path.stat().st_mode & 0o777 == 0o600
    save_user_setting("permissions", "mode", "plan")
    assert load_toml(path)["permissions"] == {"mode": "plan"}


def test_project_instructions_from_home_and_git_root_down(home: Path, project: Path) -> None:
    write(home / "AGENTS.md", "personal rule")
    write(project / "AGENTS.md", "root rule")
    sub = project / "pkg"
    write(sub / "AGENTS.md", "package rule")
    write(project.parent / "AGENTS.md", "outside the repo")
    text = load_project_instructions(sub)
    assert text.index("personal rule") < text.index("root rule") < text.index("package rule")
    assert "outside the repo" not in text


def test_cli_reports_bad_config_and_exits_2(home: Path, project: Path) -> None:
    path = write(project / ".agentica" / "config.toml", "[tools]\nmax_turns = \"many\"\n")
    proc = subprocess.run(
        [sys.executable, "-m", "agentica_cli.cli.app", "-p", "hi", "--api-key", "k"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"agentica: config error: {path}: 'tools.max_turns' must be an integer, got string 'many'\n"
    assert proc.stdout == ""
