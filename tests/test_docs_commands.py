"""The README and docs/ say only what works: the safe commands they show run as written, every
`agentica` flag they use exists, their TOML examples are valid config, their links and anchors
resolve, the start pages' Python examples run, and the test command is the one CI runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from readme_support import DOCS, README, ROOT, doc_pages, fenced_blocks, python_blocks, section

from agentica_cli.testing import ScriptedModelServer, turns

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

BIN = Path(sys.executable).parent
# Pages other branches add; links to them are checked once they exist.
PENDING_PAGES = {"toolkits.md", "toolkits-code-media.md", "extensions.md", "editor.md"}
SUBCOMMANDS = {"acp", "mcp", "sessions", "doctor", "worktrees", "batch"}
SHELL_OPERATORS = {"|", "||", "&&", ";", "&", "<", ">", "2>", ">>"}


def shell_lines() -> list[tuple[Path, str]]:
    """Every command line of every ```bash block, continuation lines joined."""
    found = []
    for page in doc_pages():
        for block in fenced_blocks(page.read_text(encoding="utf-8"), "bash"):
            for line in block.replace("\\\n", " ").splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    found.append((page, line.strip()))
    return found


def agentica_invocations(line: str) -> list[list[str]]:
    """The argument lists of each `agentica` command on a shell line (up to a shell operator)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    calls, i = [], 0
    while i < len(tokens):
        if tokens[i] == "agentica" and (i == 0 or tokens[i - 1] in SHELL_OPERATORS):
            j = i + 1
            while j < len(tokens) and tokens[j] not in SHELL_OPERATORS:
                j += 1
            calls.append(tokens[i + 1 : j])
            i = j
        else:
            i += 1
    return calls


def cli_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTICA_", "OPENAI_"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp), AGENTICA_HOME=str(tmp / ".agentica"),
               NO_COLOR="1")
    return env


@cache
def help_flags(command: tuple[str, ...] = ()) -> frozenset[str] | None:
    """The flags `agentica [subcommand ...] --help` lists, or None when there is no such subcommand."""
    args = [*command, "--help"]
    proc = subprocess.run([str(BIN / "agentica"), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        return None
    return frozenset(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", proc.stdout))


def is_safe(args: list[str]) -> bool:
    """Commands that only print (help, version, listings), so a test may run them as written."""
    if args in (["--help"], ["-h"], ["--version"], ["-V"]):
        return True
    if len(args) >= 2 and args[0] in SUBCOMMANDS and args[-1] in ("--help", "-h"):
        return all(not a.startswith("-") for a in args[:-1])
    return args in (["mcp", "list"], ["sessions", "list"], ["doctor"])


@pytest.mark.skipif(not (BIN / "agentica").exists(), reason="the agentica console script is not installed")
def test_safe_commands_in_the_docs_run_as_written(tmp_path: Path) -> None:
    safe = sorted({line for _, line in shell_lines()
                   if (calls := agentica_invocations(line)) and all(is_safe(c) for c in calls)
                   and not re.search(r"[|;&<>`$]", line.split("#", 1)[0])})
    assert any("agentica --help" in line for line in safe) and any("agentica --version" in line for line in safe)
    for line in safe:
        proc = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=cli_env(tmp_path), capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"{line!r} exited {proc.returncode}: {proc.stderr[-2000:]}"
        if re.search(r"--help|-h\b|--version|-V\b", line.split("#", 1)[0]):
            assert proc.stdout.strip(), f"{line!r} printed nothing"


@pytest.mark.skipif(not (BIN / "agentica").exists(), reason="the agentica console script is not installed")
def test_every_agentica_flag_shown_in_the_docs_exists() -> None:
    unknown = []
    checked = 0
    for page, line in shell_lines():
        for args in agentica_invocations(line):
            command: tuple[str, ...] = ()
            if args and args[0] in SUBCOMMANDS and help_flags((args[0],)) is not None:
                if args[0] == "acp":
                    continue  # its arguments go to the ACP server unchanged
                command = (args[0],)
                if len(args) > 1 and re.fullmatch(r"[a-z]+", args[1]) and help_flags((args[0], args[1])):
                    command = (args[0], args[1])
            known = help_flags(command)
            assert known is not None
            if "--" in args:
                args = args[: args.index("--")]  # what follows is another program's command line
            for arg in args:
                flag = arg.split("=", 1)[0]
                if re.fullmatch(r"--?[A-Za-z][\w-]*", flag):
                    checked += 1
                    if flag not in known:
                        unknown.append(f"{page.relative_to(ROOT)}: {flag} in {line!r}")
    assert checked > 20  # the pages do show flags: the check is not vacuous
    assert unknown == []


def test_toml_examples_are_valid_config() -> None:
    from agentica_cli.app.settings.config import SCHEMA, ConfigError, validate

    problems, validated = [], 0
    for page in doc_pages():
        for block in fenced_blocks(page.read_text(encoding="utf-8"), "toml"):
            where = f"{page.relative_to(ROOT)}: {block.splitlines()[0]!r}"
            try:
                data = tomllib.loads(block)
            except tomllib.TOMLDecodeError as err:
                problems.append(f"{where}: {err}")
                continue
            if set(data) <= set(SCHEMA):  # agentica config (other TOML, e.g. pyproject, is only parsed)
                try:
                    validate(data, where)
                    validated += 1
                except ConfigError as err:
                    problems.append(str(err))
    assert problems == []
    assert validated >= 6


def slug(title: str) -> str:
    """GitHub's anchor for a heading."""
    title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    fence = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"#{1,6} (.*)", line)):
            base = slug(m.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
    return {name if n == 0 else f"{name}-{n}" for name, total in seen.items() for n in range(total)}


def test_links_and_anchors_resolve() -> None:
    broken = []
    for page in doc_pages():
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                if dest.name not in PENDING_PAGES:
                    broken.append(f"{page.relative_to(ROOT)}: {target}")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_readme_commands_are_the_ones_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    [pytest_line] = [line.strip() for line in ci.splitlines() if "-m pytest" in line]
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300  # a start page; the rest lives in docs/
    for page, title in ((README, "Install and run"), (ROOT / "README.zh-CN.md", "安装与运行")):
        install = fenced_blocks(section(page, title), "bash")[0]
        assert "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && agentica" in install
        tests_block = "\n".join(fenced_blocks(page.read_text(encoding="utf-8"), "bash"))
        assert '.venv/bin/pip install -e ".[test]"' in tests_block and pytest_line in tests_block, page.name
    assert '-e ".[test]"' in ci


START_PAGES = [README, ROOT / "README.zh-CN.md", DOCS / "quickstart.md", DOCS / "zh" / "quickstart.md"]


@pytest.mark.parametrize("page", START_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_start_page_python_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    blocks = python_blocks(path=page)
    assert blocks, f"{page.name} shows no Python example"
    (tmp_path / "app.py").write_text("print('hello')\n")
    with ScriptedModelServer([turns.text("It is sunny.")] * 10) as server:
        for provider in ("DEEPSEEK", "OPENAI"):
            monkeypatch.setenv(f"{provider}_BASE_URL", server.base_url)
            monkeypatch.setenv(f"{provider}_API_KEY", "sk-test")
        monkeypatch.setenv("AGENTICA_HOME", str(tmp_path / "home"))
        monkeypatch.chdir(tmp_path)
        for block in blocks:
            exec(compile(block, str(page), "exec"), {"__name__": "docs_example"})
        assert len(server.requests) == len(blocks)
    assert "It is sunny." in capsys.readouterr().out
