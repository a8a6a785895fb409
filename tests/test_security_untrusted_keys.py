"""Which keys an untrusted project's `.agentica/config.toml` may set: only those that cannot
start a program, send the key or data somewhere new, ask less, or let a run hang or spend
(docs/security.md lists the rest). The real `agentica` command for what the user sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import model_args, run_cli

from agentica_cli.app.settings.config import (
    PROJECT_KEYS_WITHOUT_TRUST,
    SCHEMA,
    UNTRUSTED_PROJECT_KEYS,
    CheckpointSettings,
    load_settings,
)
from agentica_cli.testing import ScriptedModelServer, turns

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".git").mkdir(parents=True)
    (path / "notes.txt").write_text("hello\n")
    return path


def _schema_keys(schema: dict[str, Any], prefix: str = "") -> set[str]:
    """Every dotted key of SCHEMA down to a leaf, a '*' table or an array of tables."""
    keys: set[str] = set()
    for key, kind in schema.items():
        dotted = prefix + key
        if isinstance(kind, dict) and "*" not in kind:
            keys |= _schema_keys(kind, dotted + ".")
        else:
            keys.add(dotted)
    return keys


def _covered(dotted: str, listed: tuple[str, ...]) -> bool:
    return any(dotted == key or dotted.startswith(key + ".") for key in listed)


def test_every_config_key_is_either_held_back_or_declared_harmless() -> None:
    keys = _schema_keys(SCHEMA)
    unclassified = {k for k in keys if not _covered(k, UNTRUSTED_PROJECT_KEYS + PROJECT_KEYS_WITHOUT_TRUST)}
    assert unclassified == set()
    both = {k for k in keys if _covered(k, UNTRUSTED_PROJECT_KEYS) and _covered(k, PROJECT_KEYS_WITHOUT_TRUST)}
    assert both == set()
    documented = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text()
    for key in UNTRUSTED_PROJECT_KEYS:
        assert f"`{key}`" in documented, key


PROJECT_CONFIG = """\
instructions = "long text"
[model]
name = "project-model"
vision = true
request_timeout = 0
attempt_timeout = 86400
stall_timeout = 0
[tools]
max_turns = 100000
tool_call_limit = 100000
max_result_tokens = 10000000
context_overflow_threshold = 0.99
compress_tool_results = false
enable = ["shell"]
exclude = ["web_search"]
[ui]
history = true
markdown = false
[checkpoints]
keep_days = 0
[sandbox]
hide = ["secrets"]
"""


def test_untrusted_project_cannot_raise_limits_or_enable_toolkits(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    (home / "config.toml").write_text("[model]\nrequest_timeout = 120\n[ui]\nhistory = false\n")
    (project / ".agentica").mkdir()
    (project / ".agentica" / "config.toml").write_text(PROJECT_CONFIG)
    untrusted = load_settings(project, {}, trusted=False, environ={})
    assert set(untrusted.held_back) == {
        "instructions", "model.request_timeout", "model.attempt_timeout", "model.stall_timeout",
        "tools.max_turns", "tools.tool_call_limit", "tools.max_result_tokens",
        "tools.context_overflow_threshold", "tools.compress_tool_results", "tools.enable",
        "ui.history", "checkpoints",
    }
    assert untrusted.get("model.request_timeout") == 120  # the user's own limit stays
    assert untrusted.get("ui.history") is False
    assert untrusted.tools.max_turns is None
    assert untrusted.checkpoints == CheckpointSettings()  # the defaults: the project's keep_days = 0 held back
    # what cannot hurt still applies
    assert untrusted.model_name == "project-model" and untrusted.get("model.vision") is True
    assert untrusted.tools.exclude == ("web_search",) and untrusted.get("ui.markdown") is False
    assert untrusted.sandbox.hide == ("secrets",)
    trusted = load_settings(project, {}, trusted=True, environ={})
    assert trusted.held_back == {}
    assert trusted.get("model.request_timeout") == 0 and trusted.get("tools.max_turns") == 100000


def test_untrusted_project_cannot_lift_the_users_request_timeout(home: Path, project: Path) -> None:
    (home / "config.toml").write_text("[model]\nrequest_timeout = 1\n")
    (project / ".agentica").mkdir()
    config = project / ".agentica" / "config.toml"
    config.write_text("[model]\nrequest_timeout = 0\nattempt_timeout = 0\nstall_timeout = 0\n")
    with ScriptedModelServer([turns.hang(limit=30)] * 3) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home)
    assert proc.returncode == 1, proc.stderr
    for key in ("model.request_timeout", "model.attempt_timeout", "model.stall_timeout"):
        assert f"agentica: ignoring '{key}' from untrusted {config} (run with --trust to use it)" in proc.stderr
    assert "no complete answer within 1 s (request_timeout" in proc.stderr


def test_untrusted_project_max_turns_waits_for_trust(home: Path, project: Path) -> None:
    (project / ".agentica").mkdir()
    config = project / ".agentica" / "config.toml"
    config.write_text("[tools]\nmax_turns = 1\n")
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1")), turns.text("done")]
    with ScriptedModelServer(script * 2) as server:
        untrusted = run_cli(["-p", "read", *model_args(server)], cwd=project, home=home)
        trusted = run_cli(["-p", "read", "--trust", *model_args(server)], cwd=project, home=home)
    assert untrusted.returncode == 0, untrusted.stderr
    assert untrusted.stdout.strip() == "done"
    assert f"agentica: ignoring 'tools.max_turns' from untrusted {config} (run with --trust to use it)" in (
        untrusted.stderr)
    assert trusted.returncode == 3, trusted.stderr
    assert "stopped at the max-turns limit" in trusted.stderr and "ignoring" not in trusted.stderr
