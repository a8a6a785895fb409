"""--system-prompt, --append-system-prompt and their -file forms, through the real `agentica -p`
command: what the recorded request's system message holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import model_args, run_cli

from agentica_cli.deep import CODING_AGENT_PROMPT
from agentica_cli.testing import ScriptedModelServer, turns

BASE_FIRST_LINE = CODING_AGENT_PROMPT.splitlines()[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "AGENTS.md").write_text("Project rule: AGENTS-MARK.\n")
    return path


def system_message(home: Path, project: Path, *flags: str) -> str:
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *flags, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    system = requests[0]["messages"][0]
    assert system["role"] == "system"
    return system["content"]


def test_append_goes_after_agentica_prompt_and_agents_md(home: Path, project: Path) -> None:
    system = system_message(home, project, "--append-system-prompt", "Answer in French. APPENDED-MARK")
    assert system.startswith(BASE_FIRST_LINE)
    assert system.endswith("Answer in French. APPENDED-MARK")
    assert system.index("AGENTS-MARK") < system.index("# Context") < system.index("APPENDED-MARK")


def test_system_prompt_replaces_the_base_instructions_only(home: Path, project: Path) -> None:
    system = system_message(home, project, "--system-prompt", "You write release notes. REPLACED-MARK")
    assert system.startswith("You write release notes. REPLACED-MARK\n\nInstructions from ")
    assert "Project rule: AGENTS-MARK." in system  # AGENTS.md stays
    assert BASE_FIRST_LINE not in system
    assert f"Working directory: {project}" in system  # the environment block stays
    assert "# Using the tools" in system  # and the tools' own notes


def test_the_file_forms_and_both_appends_together(home: Path, project: Path, tmp_path: Path) -> None:
    (tmp_path / "base.md").write_text("FILE-BASE-MARK: you review code.\n")
    (tmp_path / "extra.md").write_text("FILE-APPEND-MARK\n")
    system = system_message(home, project, "--system-prompt-file", str(tmp_path / "base.md"),
                            "--append-system-prompt", "TEXT-APPEND-MARK",
                            "--append-system-prompt-file", str(tmp_path / "extra.md"))
    assert system.startswith("FILE-BASE-MARK: you review code.")
    assert BASE_FIRST_LINE not in system
    assert system.endswith("TEXT-APPEND-MARK\n\nFILE-APPEND-MARK")


def test_an_empty_system_prompt_in_plan_mode_leaves_only_the_plan_note(home: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    system = system_message(home, bare, "--system-prompt", "", "--permission-mode", "plan")
    assert system.startswith("Plan mode is on")
    assert "None" not in system.split("\n\n")[0]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--system-prompt", "a", "--system-prompt-file", "AGENTS.md"],
         "agentica: use either --system-prompt or --system-prompt-file, not both\n"),
        (["--system-prompt-file", "missing.md"],
         "agentica: --system-prompt-file missing.md: cannot read: No such file or directory\n"),
        (["--append-system-prompt-file", "."], "agentica: --append-system-prompt-file .: cannot read: "),
    ],
)
def test_unusable_system_prompt_flags_exit_2(home: Path, project: Path, flags: list[str], message: str) -> None:
    with ScriptedModelServer([turns.text("never")]) as server:
        proc = run_cli(["-p", "hi", *flags, *model_args(server)], cwd=project, home=home)
        requests = server.requests
    assert proc.returncode == 2
    assert proc.stderr.startswith(message)
    assert "Traceback" not in proc.stderr
    assert requests == []


def test_continue_uses_the_flags_of_its_own_command_not_the_first_ones(home: Path, project: Path) -> None:
    # As in Claude Code: a session does not record the system prompt flags.
    first = system_message(home, project, "--append-system-prompt", "FIRST-RUN-MARK")
    assert "FIRST-RUN-MARK" in first
    with ScriptedModelServer([turns.text("again"), turns.text("and again")]) as server:
        plain = run_cli(["-p", "go on", "--continue", *model_args(server)], cwd=project, home=home)
        again = run_cli(["-p", "go on", "--continue", "--append-system-prompt", "SECOND-MARK", *model_args(server)],
                        cwd=project, home=home)
        requests = server.requests
    assert plain.returncode == 0 and again.returncode == 0, plain.stderr + again.stderr
    assert [m["content"] for m in requests[0]["messages"] if m["role"] == "user"] == ["hi", "go on"]  # resumed
    assert "FIRST-RUN-MARK" not in requests[0]["messages"][0]["content"]
    assert requests[1]["messages"][0]["content"].endswith("SECOND-MARK")
