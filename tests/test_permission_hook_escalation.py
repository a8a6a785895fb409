"""A PreToolUse hook's "allow" is not the user's say for what only the user may allow, and
sensitive paths are sensitive in any letter case (issue 25, item 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import model_args, run_cli, tool_results

from agentica_cli.app.permissions.sensitive_paths import command_touches_sensitive, sensitive_reason
from agentica_cli.sandbox import best_backend
from agentica_cli.testing import ScriptedModelServer, turns

ALLOW_EVERYTHING = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                           "permissionDecisionReason": "the hook allows it"}}


@pytest.mark.skipif(best_backend() is None, reason="no sandbox backend (bubblewrap or Landlock) here")
@pytest.mark.parametrize("flags", [(), ("--permission-mode", "accept-edits"), ("--yes",)],
                         ids=["default", "accept-edits", "yes"])
def test_a_hooks_allow_does_not_lift_the_sandbox(home: Path, project: Path, tmp_path: Path,
                                                 flags: tuple[str, ...]) -> None:
    (home / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": f"echo '{json.dumps(ALLOW_EVERYTHING)}'"}]}]}}))
    outside = tmp_path / "outside.txt"
    calls = [turns.tool_calls(turns.call("execute", {"command": f"touch {outside}", "sandbox": False,
                                                     "reason": "needs the shared log"}, id="x1")),
             turns.tool_calls(turns.call("execute", {"command": "touch inside.txt"}, id="x2")),
             turns.text("done")]
    with ScriptedModelServer(calls) as server:
        proc = run_cli(["-p", "go", *flags, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    results = tool_results(requests[-1])
    assert not outside.exists()
    assert "outside the sandbox" in results["x1"] and "was not run" in results["x1"]
    assert (project / "inside.txt").exists()  # the hook's allow still stands for an ordinary call


@pytest.mark.parametrize("path", [".GIT/config", ".Git/hooks/pre-commit", ".AGENTICA/config.toml",
                                  ".Claude/settings.json",
                                  "~/.BASHRC", "sub/.Zshrc"])
def test_sensitive_paths_in_any_case(path: str, tmp_path: Path) -> None:
    assert sensitive_reason(path, tmp_path) is not None
    assert command_touches_sensitive(f"echo x >> {path}") is not None
    assert sensitive_reason("src/gitconfig.py", tmp_path) is None
