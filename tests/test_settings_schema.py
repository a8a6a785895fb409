"""The typed config schema (app/settings/schema.py): the key table in docs/configuration.md is the
schema, key for key (type, default, trust); loaded settings are typed and frozen; a bad value stops
the command with the key, the file and what was expected."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import cli_env, run_cli

from agentica_cli.app.settings import schema
from agentica_cli.app.settings.config import (
    PROJECT_KEYS_WITHOUT_TRUST,
    ConfigError,
    ModelSettings,
    Settings,
    load_settings,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIGURATION = ROOT / "docs" / "configuration.md"

TYPE_WORDS = {"str": "string", "provider": "string", "bool": "boolean", "int": "integer", "float": "number",
              "list[str]": "array of strings", "dict[str,str]": "table of strings", "table": "table"}


def doc_table(header: str) -> list[list[str]]:
    """The rows of the Markdown table of docs/configuration.md whose header row starts with `header`."""
    lines = CONFIGURATION.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def toml_value(literal: str) -> Any:
    return tomllib.loads(f"v = {literal}")["v"]


def kind_of(dotted: str) -> Any:
    node: Any = schema.SCHEMA
    for part in dotted.replace(".NAME.", ".*.").split("."):
        node = node[part]
    return node


def as_toml(value: Any) -> Any:
    """A schema default as TOML would write it (tuples are arrays)."""
    return list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, dict) else value


# What the layer below uses for a key the config leaves unset: the doc's "not set (`N`)" must say it.
def owners_defaults() -> dict[str, Any]:
    from agentica_cli.agent import ToolConfig
    from agentica_cli.app.runtime import provider_name
    from agentica_cli.models import deadlines

    tools = ToolConfig()
    return {
        "model.provider": provider_name(Settings()),
        "model.request_timeout": deadlines.DEFAULT_REQUEST_TIMEOUT,
        "model.attempt_timeout": deadlines.DEFAULT_ATTEMPT_TIMEOUT,
        "model.stall_timeout": deadlines.DEFAULT_STALL_TIMEOUT,
        "model.tool_call_format": "native",
        "tools.max_turns": tools.max_turns,
        "tools.compress_tool_results": tools.compress_tool_results,
        "tools.context_overflow_threshold": tools.context_overflow_threshold,
        "tools.max_result_tokens": tools.max_result_tokens,
    }


def test_the_documented_key_table_is_the_schema() -> None:
    rows = doc_table("| key | type | default | untrusted project |")
    documented = {ticked(row[0])[0]: row for row in rows}
    assert len(documented) == len(rows), "a key is listed twice"
    schema_keys = {key.replace("toolkits", "toolkits.NAME", 1) if key == "toolkits" else key
                   for key in schema.key_names()}
    expected = ({k for k in schema_keys if not k.startswith(("hooks.", "toolkits", "mcp_servers"))}
                | {f"toolkits.NAME.{key}" for key in schema.TOOLKIT_OPTIONS} | {"hooks.EVENT", "mcp_servers.NAME"})
    assert set(documented) == expected
    owners = owners_defaults()
    for key, (_, type_cell, default_cell, trust_cell) in documented.items():
        held_back = not any(key == k or key.startswith(k + ".") for k in PROJECT_KEYS_WITHOUT_TRUST)
        assert trust_cell == ("held back" if held_back else "applies"), key
        if key in ("hooks.EVENT", "mcp_servers.NAME"):
            assert type_cell.startswith("array of tables" if key.startswith("hooks") else "table"), key
            continue
        kind = kind_of(key)
        if isinstance(kind, tuple):
            assert type_cell.startswith("one of ") and tuple(ticked(type_cell)) == kind, key
        else:
            assert type_cell.split(":")[0] == TYPE_WORDS[kind], key
        default = None if key.startswith("toolkits.") else schema.default_of(key)
        if default_cell.startswith("not set"):
            assert default is None, f"{key}: the schema's default is {default!r}, the doc says not set"
            if ticked(default_cell):
                assert toml_value(ticked(default_cell)[0]) == owners[key], key
            else:
                assert key not in owners, f"{key}: say the value the layer below uses"
        else:
            assert toml_value(ticked(default_cell)[0]) == as_toml(default), key


def test_the_model_tables_of_the_doc_name_schema_keys_and_the_models_defaults() -> None:
    from agentica_cli.models import deadlines

    model_keys = {f.name for f in dataclasses.fields(ModelSettings)}
    request = doc_table("| `[model]` key (flag) | what it does |")
    assert len(request) >= 5 and {ticked(row[0])[0] for row in request} <= model_keys
    limits = {ticked(row[0])[0]: row[1] for row in doc_table("| argument (`[model]` key) | default |")}
    assert limits == {"request_timeout": "900", "attempt_timeout": "600", "stall_timeout": "300"}
    documented = [float(limits[key]) for key in ("request_timeout", "attempt_timeout", "stall_timeout")]
    assert documented == [deadlines.DEFAULT_REQUEST_TIMEOUT, deadlines.DEFAULT_ATTEMPT_TIMEOUT,
                          deadlines.DEFAULT_STALL_TIMEOUT]


def test_the_schemas_value_lists_are_the_owners() -> None:
    from agentica_cli import sandbox
    from agentica_cli.agent import hooks
    from agentica_cli.models import presets, text_tool_calls
    from agentica_cli.tui import notify

    assert schema.get_args(schema.SandboxMode) == sandbox.MODES
    assert schema.SandboxSettings().mode == sandbox.DEFAULT_MODE
    assert set(schema.TOOL_CALL_FORMATS) == set(text_tool_calls.FORMATS)
    assert set(schema.PROVIDERS) <= set(presets.PROVIDERS)
    assert schema.UiSettings().notify_after == notify.DEFAULT_NOTIFY_AFTER
    assert tuple(hooks.HOOK_EVENTS) == schema.LIFECYCLE_HOOK_EVENTS


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".agentica").mkdir()
    return project


def test_loaded_settings_are_typed_and_frozen(home: Path, project: Path) -> None:
    (home / "config.toml").write_text(
        '[model]\nrequest_timeout = 120\nextra_body = {thinking = {type = "disabled"}}\n'
        '[tools]\nexclude = ["web_search"]\n[checkpoints]\nkeep_days = 7\n'
        '[toolkits.sql]\nurl = "sqlite:///a.db"\nmax_rows = 5\n[models]\naliases = {opus = "big"}\n')
    settings = load_settings(project, {"model.max_tokens": 100}, trusted=False, environ={})
    assert settings.model.request_timeout == 120.0 and isinstance(settings.model.request_timeout, float)
    assert settings.checkpoints.keep_days == 7.0 and isinstance(settings.checkpoints.keep_days, float)
    assert settings.model.max_tokens == 100 and settings.model.attempt_timeout is None
    assert settings.model.extra_body == {"thinking": {"type": "disabled"}}
    assert settings.tools.exclude == ("web_search",) and settings.sandbox.hide == ()
    assert settings.toolkit_options("sql") == {"url": "sqlite:///a.db", "max_rows": 5}
    assert settings.toolkit_options("code") == {}
    assert settings.models.aliases == {"opus": "big"}
    assert settings.ui == schema.UiSettings() and settings.permissions.mode == "default"
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.model.name = "x"  # type: ignore[misc]
    settings.model = dataclasses.replace(settings.model, name="x")  # a change replaces the table
    assert settings.model_name == "x" and settings.model.request_timeout == 120.0
    # the dotted look-up, for names that arrive as text
    assert settings.get("model.request_timeout") == 120.0 and settings.get("model.dialect", "d") == "d"
    assert settings.get("toolkits.sql.max_rows") == 5 and settings.get("toolkits.code.url") is None
    with pytest.raises(KeyError, match=r"model\.nme"):
        settings.get("model.nme")


def test_layers_keep_their_order_in_the_typed_settings(home: Path, project: Path) -> None:
    """defaults < user file < project file (trusted keys only while untrusted) < env < flags."""
    (home / "config.toml").write_text('[model]\nname = "user"\nstall_timeout = 10\n[ui]\nnotify_after = 5\n')
    (project / ".agentica" / "config.toml").write_text(
        '[model]\nname = "project"\nstall_timeout = 20\n[ui]\nnotify_after = 6\n')
    untrusted = load_settings(project, {}, trusted=False, environ={})
    assert (untrusted.model.name, untrusted.model.stall_timeout, untrusted.ui.notify_after) == ("project", 10.0, 6.0)
    assert untrusted.held_back == {"model.stall_timeout": 20}
    trusted = load_settings(project, {}, trusted=True, environ={"AGENTICA_MODEL": "env"})
    assert (trusted.model.name, trusted.model.stall_timeout) == ("env", 20.0)
    flagged = load_settings(project, {"model.name": "flag"}, trusted=True, environ={"AGENTICA_MODEL": "env"})
    assert flagged.model.name == "flag" and flagged.sources["model.name"] == "command line"


@pytest.mark.parametrize(("text", "message"), [
    ('[ui]\nnotify_after = true\n', "'ui.notify_after' must be a number, got boolean True"),
    ('[sandbox]\nhide = "~/secrets"\n', "'sandbox.hide' must be an array of strings, got string '~/secrets'"),
    ('[model]\nreasoning_effort = "ultra"\n',
     "'model.reasoning_effort' must be one of none, minimal, low, medium, high, xhigh, max, got string 'ultra'"),
    ('[models]\naliases = {opus = 1}\n', "'models.aliases' must be a table of strings, got table {'opus': 1}"),
    ('[toolkits.sql]\nmax_rows = "5"\n', "'toolkits.sql.max_rows' must be an integer, got string '5'"),
    ('[ui]\nmarkdwn = false\n', "unknown key 'ui.markdwn' (known keys here: ui.markdown, ui.show_reasoning, "
                                "ui.history, ui.statusline, ui.notify, ui.notify_after)"),
])
def test_a_bad_value_names_the_key_the_file_and_what_was_expected(home: Path, project: Path, text: str,
                                                                    message: str) -> None:
    path = project / ".agentica" / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_settings(project, {}, trusted=False, environ={})  # checked before trust holds anything back
    assert str(raised.value) == f"{path}: {message}"


def test_the_command_stops_on_a_wrong_type_in_config_toml(tmp_path: Path, home: Path) -> None:
    path = home / "config.toml"
    path.write_text('[model]\nname = "m"\n[checkpoints]\nkeep_sessions = 2.5\n')
    proc = run_cli(["-p", "hi", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"], cwd=tmp_path, home=home,
                   env=cli_env(home), timeout=60)
    assert proc.returncode == 2
    expected = f"{path}: 'checkpoints.keep_sessions' must be an integer, got float 2.5"
    assert proc.stderr == f"agentica: config error: {expected}\n"
    assert proc.stdout == ""


def test_configured_vision_reaches_the_model(home: Path, project: Path) -> None:
    """[model] vision was checked but never applied: a model whose name is not guessed to take
    images stayed refused its images whatever the config said."""
    from agentica_cli.app.runtime import build_model
    from agentica_cli.images import supports_vision

    flags = {"model.provider": "openai-like", "model.base_url": "http://127.0.0.1:9/v1", "model.name": "plain-model"}
    (home / "config.toml").write_text("[model]\nvision = true\n")
    assert supports_vision(build_model(load_settings(project, flags, trusted=False, environ={})))
    (home / "config.toml").write_text("[model]\nvision = false\n")
    assert not supports_vision(build_model(load_settings(project, {**flags, "model.name": "gpt-4o"}, trusted=False,
                                                         environ={})))
    (home / "config.toml").write_text("")
    assert supports_vision(build_model(load_settings(project, {**flags, "model.name": "gpt-4o"}, trusted=False,
                                                     environ={})))  # not set: guessed from the name


def test_importing_the_settings_loads_no_pydantic() -> None:
    code = ("import sys, agentica_cli.app.settings.config, agentica_cli.app.settings.schema; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'openai', 'httpx')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
