"""`agentica doctor` as a subprocess: what a session in the folder finds, loads and skips, and
why, in 80 columns with control characters neutralised, or as JSON; nothing is started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import cli_env, run_cli
from extension_support import write


@pytest.fixture
def repo(project: Path, tmp_path: Path) -> Path:
    (project / ".git").mkdir()
    write(project / "CLAUDE.md", "# CLAUDE.md\n\nSee @docs/testing.md\n")
    (project / "AGENTS.md").symlink_to("CLAUDE.md")
    write(project / "docs/testing.md", "Run make test.\n")
    write(project / ".claude/commands/review.md", "---\ndescription: Review a file\n---\nReview $1.\n")
    write(project / ".claude/agents/scout.md", "---\nname: scout\ndescription: Finds code fast\n---\nSearch.\n")
    write(project / ".claude/skills/pdf/SKILL.md", "---\nname: pdf\n---\nFill PDF forms \x1b[2J\x1b[31mnow\n")
    write(tmp_path / "outside.md", "not for the model\n")
    (project / ".claude/commands/leak.md").symlink_to(tmp_path / "outside.md")
    marker = tmp_path / "hook-ran"
    write(project / ".claude/settings.json", json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"touch {marker}; ./.claude/hooks/guard.py"}]}]}}))
    server_marker = tmp_path / "server-ran"
    write(project / ".mcp.json", json.dumps({"mcpServers": {"files": {
        "command": "sh", "args": ["-c", f"touch {server_marker}"]}}}))
    return project


def doctor(repo: Path, home: Path, user_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["doctor", *args], cwd=repo, home=home, env=cli_env(home, HOME=str(user_home)))


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


class Fitted:
    """The output, checked to fit 80 columns with no escape sequence; `needle in it` compares
    without whitespace, as wrapping may break a long path anywhere."""

    def __init__(self, text: str):
        assert all(len(line) <= 80 for line in text.splitlines()), max(text.splitlines(), key=len)
        assert "\x1b" not in text
        self.squeezed = "".join(text.split())

    def __contains__(self, needle: str) -> bool:
        return "".join(needle.split()) in self.squeezed


fitted = Fitted


def test_doctor_in_an_untrusted_clone_lists_what_is_held_back_and_starts_nothing(
        repo: Path, home: Path, user_home: Path, tmp_path: Path) -> None:
    proc = doctor(repo, home, user_home)
    assert proc.returncode == 0, proc.stderr
    out = fitted(proc.stdout)
    assert f"project: {repo}, not trusted" in out
    assert f"CLAUDE.md: not repeated, the same file as {repo / 'AGENTS.md'}" in out
    assert "docs/testing.md: 15 bytes (project, imported by AGENTS.md)" in out
    assert f"{repo / '.claude/commands/leak.md'} skipped: it leads outside the project" in out
    assert "held back until the project is trusted" in out
    assert ".claude/settings.json: held back until trusted (hooks)" in out
    for line in ("command review: .claude/commands/review.md", "agent scout: .claude/agents/scout.md",
                 "skill pdf: .claude/skills/pdf/SKILL.md", "hook PreToolUse: .claude/settings.json"):
        assert line in out
    assert "files: stdio sh -c touch" in out and "held back until trusted" in out
    assert not (tmp_path / "hook-ran").exists() and not (tmp_path / "server-ran").exists()


def test_doctor_in_a_trusted_project_names_each_file_and_why_one_was_skipped(
        repo: Path, home: Path, user_home: Path) -> None:
    write(home / "trusted_projects.json", json.dumps({"trusted": [str(repo.resolve())]}))
    proc = doctor(repo, home, user_home)
    assert proc.returncode == 0, proc.stderr
    assert "commands (1):\n  /review (project): Review a file\n      .claude/commands/review.md" in proc.stdout
    assert "sub-agents (1):\n  scout (project): Finds code fast\n      .claude/agents/scout.md" in proc.stdout
    out = fitted(proc.stdout)
    assert f"project: {repo}, trusted" in out
    assert "skills (1): pdf (project): Fill PDF forms" in out and "[31mnow" in out  # shown, not obeyed
    assert "PreToolUse [Bash] command: touch" in out and ".claude/settings.json" in out
    assert "MCP servers (not started) (1): files: stdio sh -c touch" in out and ".mcp.json, configured" in out
    assert "held back" not in out and ".claude/settings.json: read (hooks)" in out
    assert f"skipped (1): {repo / '.claude/commands/leak.md'} skipped: it leads outside the project" in out

    data = json.loads(doctor(repo, home, user_home, "--json").stdout)
    assert data["trusted"] is True
    assert [c["name"] for c in data["commands"]] == ["review"]
    assert [(f["path"], f["imported_by"]) for f in data["instructions"]["loaded"]] == [
        (str(repo / "AGENTS.md"), None), (str(repo / "docs/testing.md"), str(repo / "AGENTS.md"))]
    assert data["instructions"]["repeats"] == [{"path": str(repo / "CLAUDE.md"),
                                                "why": f"the same file as {repo / 'AGENTS.md'}"}]
    assert data["hooks"][0]["source"] == str(repo / ".claude/settings.json")
    assert [s["name"] for s in data["mcp_servers"]] == ["files"]
    assert len(data["skipped"]) == 1 and "leak.md skipped" in data["skipped"][0]


def test_doctor_help_and_a_missing_folder(home: Path, project: Path, user_home: Path) -> None:
    proc = run_cli(["doctor", "--help"], cwd=project, home=home)
    assert proc.returncode == 0 and "--json" in proc.stdout
    proc = run_cli(["doctor", "-C", str(project / "nope")], cwd=project, home=home)
    assert proc.returncode == 2 and "no such folder" in proc.stderr


def test_the_command_line_does_not_import_the_doctor_until_it_runs() -> None:
    code = ("import sys; from agentica_cli.cli import commands; commands._root_app(); commands._commands_app(); "
            "print(sorted(m for m in sys.modules if m.startswith('agentica_cli.cli.doctor')"
            " or m.startswith('agentica_cli.extensions')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
