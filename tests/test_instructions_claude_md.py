"""Claude Code's instruction files beside AGENTS.md: CLAUDE.md, .claude/CLAUDE.md,
CLAUDE.local.md and the user's ~/.claude/CLAUDE.md, their `@path` imports (five hops, inside
the project, not in code), each file once; and a SessionStart hook that prints AGENTS.md does
not send it twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import cli_env, last_user_message, model_args, run_cli
from extension_support import write
from real_sample_support import NO_SAMPLE, sample_folder

from agentica_cli.agent.lifecycle import REPEAT_NOTE, without_repeats
from agentica_cli.testing import ScriptedModelServer, turns

# Shaped like the CLAUDE.md files `claude /init` writes and people keep in their repositories.
CLAUDE_MD = """# CLAUDE.md

This file provides guidance to Claude Code (claude.ai/code) when working with code in this repository.

## Commands

- Run the tests: `make test-fast` (MARKER-CLAUDE-MD)
- One test: `pytest tests/test_api.py::test_login -q`

## Architecture

See @docs/architecture.md for the layout and @CONTRIBUTING.md for the review rules.
Questions go to @octocat on the issue tracker; mail maintainers@example.org.

```bash
# not an import: code
cat @docs/in-a-code-block.md
```

Inline code is not an import either: `@docs/in-a-code-span.md`.
A file that is not there stays text: @docs/missing.md
"""


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """HOME for the run: the machine's own ~/.claude stays out."""
    path = tmp_path / "user"
    path.mkdir()
    return path


@pytest.fixture
def repo(project: Path) -> Path:
    (project / ".git").mkdir()
    write(project / "CLAUDE.md", CLAUDE_MD)
    (project / "AGENTS.md").symlink_to("CLAUDE.md")  # the common way to serve both tools
    write(project / "docs/architecture.md", "Layout: src/app holds the code (MARKER-ARCHITECTURE).\n"
          "Naming rules: @naming.md\n")
    write(project / "docs/naming.md", "Names say what things are (MARKER-NAMING).\n")
    write(project / "CONTRIBUTING.md", "Every change needs a test (MARKER-CONTRIBUTING).\n")
    write(project / "docs/in-a-code-block.md", "MARKER-CODE-BLOCK\n")
    write(project / "docs/in-a-code-span.md", "MARKER-CODE-SPAN\n")
    write(project / ".claude/CLAUDE.md", "Team rule: small pull requests (MARKER-DOT-CLAUDE).\n")
    write(project / "CLAUDE.local.md", "My sandbox is http://localhost:3000 (MARKER-LOCAL).\n")
    return project


def system_prompt(request: dict) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def test_claude_md_its_imports_and_the_users_own_reach_the_first_request(home: Path, repo: Path,
                                                                        user_home: Path) -> None:
    write(user_home / ".claude/CLAUDE.md", "Answer briefly (MARKER-USER-CLAUDE).\n")
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=repo, home=home,
                       env=cli_env(home, HOME=str(user_home)))
        prompt = system_prompt(server.requests[0])
    assert proc.returncode == 0, proc.stderr
    order = ["MARKER-USER-CLAUDE", "MARKER-CLAUDE-MD", "MARKER-ARCHITECTURE", "MARKER-NAMING",
             "MARKER-CONTRIBUTING", "MARKER-DOT-CLAUDE", "MARKER-LOCAL"]
    assert [prompt.count(marker) for marker in order] == [1] * len(order)  # AGENTS.md -> CLAUDE.md: once
    assert [prompt.index(marker) for marker in order] == sorted(prompt.index(marker) for marker in order)
    assert "MARKER-CODE-BLOCK" not in prompt and "MARKER-CODE-SPAN" not in prompt
    assert "A file that is not there stays text: @docs/missing.md" in prompt
    assert f"Instructions from {repo / 'docs/architecture.md'} (imported by {repo / 'AGENTS.md'}):" in prompt
    assert "skipped" not in proc.stderr and "not imported" not in proc.stderr


SAMPLE = sample_folder()  # real files from public repositories, with MANIFEST.json


@pytest.mark.skipif(SAMPLE is None, reason=NO_SAMPLE)
def test_a_real_claude_md_and_the_readme_it_imports_reach_the_first_request(home: Path, project: Path,
                                                                            user_home: Path) -> None:
    assert SAMPLE is not None
    manifest = json.loads((SAMPLE / "MANIFEST.json").read_text())
    (project / ".git").mkdir()
    for entry in manifest:
        if entry["repo"] == "ciffelia/sqlpt":
            write(project / entry["path"], (SAMPLE / entry["file"]).read_text())
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", *model_args(server)], cwd=project, home=home,
                       env=cli_env(home, HOME=str(user_home)))
        prompt = system_prompt(server.requests[0])
    assert proc.returncode == 0, proc.stderr
    assert "always run `make check` to format code" in prompt
    readme = prompt.index(f"Instructions from {project / 'README.md'} (imported by {project / 'CLAUDE.md'}):")
    assert prompt.index("SQL parallel testing") > readme > prompt.index("always run `make check`")


def test_the_usual_adapter_claude_md_that_imports_agents_md_sends_it_once(home: Path, project: Path,
                                                                          user_home: Path, monkeypatch) -> None:
    """`# CLAUDE.md\\n\\n@AGENTS.md\\n`: what harness and scaffolding tools write beside AGENTS.md."""
    from agentica_cli.app.instructions import read_instructions

    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    write(project / "AGENTS.md", "# AGENTS.md\n\nRun `make test` before every commit (MARKER-ONCE).\n")
    write(project / "CLAUDE.md", "# CLAUDE.md\n\n@AGENTS.md\n")
    found = read_instructions(project)
    assert found.text.count("MARKER-ONCE") == 1
    assert [(p.name, why) for p, why in found.repeats] == [("AGENTS.md", f"the same file as {project / 'AGENTS.md'}")]


def test_stream_json_names_the_instruction_files_in_its_session_line(home: Path, repo: Path,
                                                                     user_home: Path) -> None:
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", "--output-format", "stream-json", *model_args(server)], cwd=repo, home=home,
                       env=cli_env(home, HOME=str(user_home)))
    assert proc.returncode == 0, proc.stderr
    session = json.loads(proc.stdout.splitlines()[0])
    assert session["type"] == "session"
    assert session["instructions"] == [str(repo / name) for name in (
        "AGENTS.md", "docs/architecture.md", "docs/naming.md", "CONTRIBUTING.md", ".claude/CLAUDE.md",
        "CLAUDE.local.md")]


def test_an_untrusted_clone_has_its_claude_md_read_but_no_import_leaves_the_project(
        home: Path, project: Path, user_home: Path, tmp_path: Path, monkeypatch) -> None:
    from agentica_cli.app.instructions import read_instructions

    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    write(tmp_path / "outside.md", "SECRET-OUTSIDE\n")
    write(user_home / ".ssh/id_rsa", "SECRET-KEY\n")
    write(user_home / ".claude/.credentials.json", '{"token": "SECRET-TOKEN"}\n')
    write(user_home / ".claude/my-project-notes.md", "My own notes (MARKER-HOME-NOTES).\n")
    (project / "docs").mkdir()
    (project / "docs/link.md").symlink_to(tmp_path / "outside.md")  # inside by name, outside really
    write(project / "CLAUDE.md", "Rules (MARKER-RULES).\n@../outside.md @docs/link.md @~/.ssh/id_rsa\n"
          "@~/.claude/.credentials.json @/proc/self/environ\nMine: @~/.claude/my-project-notes.md\n")
    found = read_instructions(project)
    assert "MARKER-RULES" in found.text and "MARKER-HOME-NOTES" in found.text  # Claude Code's documented use
    for secret in ("SECRET-OUTSIDE", "SECRET-KEY", "SECRET-TOKEN", "PATH="):
        assert secret not in found.text
    refused = [p for p in found.problems if "not imported: it leads outside the project" in p]
    assert [p.split(": @")[1].split(" ")[0] for p in refused] == [
        "../outside.md", "docs/link.md", "~/.ssh/id_rsa", "~/.claude/.credentials.json", "/proc/self/environ"]


def test_imports_stop_after_five_hops_and_a_loop_reads_each_file_once(project: Path, home: Path,
                                                                     user_home: Path, monkeypatch) -> None:
    from agentica_cli.app.instructions import read_instructions

    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    write(project / "CLAUDE.md", "HOP-0 @hop1.md @loop-a.md")
    for hop in range(1, 8):
        write(project / f"hop{hop}.md", f"HOP-{hop} @hop{hop + 1}.md")
    write(project / "loop-a.md", "LOOP-A @loop-b.md")
    write(project / "loop-b.md", "LOOP-B @loop-a.md @CLAUDE.md")
    found = read_instructions(project)
    assert [f"HOP-{n} " in found.text for n in range(8)] == [True] * 6 + [False] * 2  # CLAUDE.md + 5 hops
    assert found.text.count("LOOP-A") == 1 and found.text.count("LOOP-B") == 1
    assert found.text.count("HOP-0") == 1


def test_a_copy_of_agents_md_is_read_once(project: Path, home: Path, user_home: Path, monkeypatch) -> None:
    from agentica_cli.app.instructions import read_instructions

    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("AGENTICA_HOME", str(home))
    write(project / "AGENTS.md", "Use uv (MARKER-COPY).\n")
    write(project / "CLAUDE.md", "Use uv (MARKER-COPY).\n")  # a copy, not a link
    found = read_instructions(project)
    assert found.text.count("MARKER-COPY") == 1
    assert [(p.name, why) for p, why in found.repeats] == [("CLAUDE.md", f"the same text as {project / 'AGENTS.md'}")]


def test_a_session_start_hook_that_prints_agents_md_does_not_send_it_twice(home: Path, project: Path,
                                                                          user_home: Path) -> None:
    rules = "# AGENTS.md\n\n" + "".join(f"- Rule {n}: keep functions short and named for what they do.\n"
                                        for n in range(8))
    write(project / "AGENTS.md", rules)
    hooks = {"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "cat AGENTS.md"},  # the whole file again, as it is
        {"type": "command", "command": "echo 'Project rules:'; cat AGENTS.md; echo 'Branch: feature-x'"},
    ]}]}}
    write(project / ".claude/settings.json", json.dumps(hooks))
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hello", "--trust", *model_args(server)], cwd=project, home=home,
                       env=cli_env(home, HOME=str(user_home)))
        request = server.requests[0]
    assert proc.returncode == 0, proc.stderr
    assert json.dumps(request).count("Rule 7: keep functions short") == 1  # in the system prompt only
    sent = last_user_message(request)
    assert sent.startswith("hello") and "Branch: feature-x" in sent and "Project rules:" in sent
    assert REPEAT_NOTE in sent


def test_without_repeats_keeps_new_context_and_drops_what_the_prompt_has() -> None:
    whole = "\n".join(f"line {n} of the instructions, long enough to count" for n in range(6))
    prompt = f"You are a coding agent.\n\nInstructions from /p/AGENTS.md:\n\n{whole}"
    context = [whole + "\n", "Branch: main", "Branch: main", f"Header\r\n{whole}\r\nFooter", "   "]
    assert without_repeats(context, prompt, [whole]) == ["Branch: main", f"Header\n{REPEAT_NOTE}\nFooter"]
    assert without_repeats([whole[:250]], prompt, [whole]) == []  # a long piece of the prompt
    assert without_repeats(["line 1", "You are a coding agent."], prompt, [whole]) == [  # short: by chance
        "line 1", "You are a coding agent."]


def test_reading_them_stays_light_for_the_repls_first_paint(repo: Path, home: Path, user_home: Path) -> None:
    """The REPL reads the instruction files before its prompt is painted: no builtin tools,
    agent loop, pydantic, openai or rich then."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from agentica_cli.app.instructions import read_instructions; "
            "print(len(read_instructions(Path(sys.argv[1])).files)); "
            "print(sorted(m for m in ('openai', 'pydantic', 'agentica_cli.agent', 'builtin_tools', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True,
                         env=cli_env(home, HOME=str(user_home))).stdout
    assert out.split() == ["6", "[]"]  # AGENTS.md (= CLAUDE.md) and 3 imports, .claude/CLAUDE.md, CLAUDE.local.md
