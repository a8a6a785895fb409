"""Toolkits in the CLI (--tools, [tools] enable, /tools) and what importing them costs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from cli_support import cli_env, model_args, run_cli
from screen_support import spawn_agentica

from agentica_cli.testing import ScriptedModelServer, turns
from agentica_cli.toolkits.catalog import TOOLKITS, import_all

SCHEMA_BUDGET = 1500  # bytes of tool definitions per toolkit in each model request


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def offered(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def test_importing_and_building_toolkits_loads_no_heavy_library() -> None:
    code = (
        "import sys, agentica_cli\n"
        "from agentica_cli.toolkits.catalog import import_all\n"
        "tools = [cls() for cls in import_all()]\n"
        "from agentica_cli import ArxivTool\n"
        "heavy = ('httpx', 'bs4', 'markdownify', 'playwright', 'pypdf', 'ddgs', 'openai')\n"
        "print([m for m in sys.modules if m.split('.')[0] in heavy])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_toolkit_schema_fits_the_budget() -> None:
    sizes = {}
    for cls in import_all():
        tool = cls()
        sizes[cls.__name__] = len(json.dumps([f.to_openai() for f in tool.get_functions()], ensure_ascii=False))
        for function in tool.get_functions():
            assert "\n" not in function.description, function.name  # one-paragraph summaries
    assert max(sizes.values()) < SCHEMA_BUDGET, sizes
    assert len(sizes) == len(TOOLKITS)


def test_tools_flag_adds_ready_toolkits_and_says_why_others_are_left_out(home: Path, project: Path) -> None:
    with ScriptedModelServer([turns.text("ok")]) as server:
        proc = run_cli(["-p", "hi", "--tools", "weather,serper", "--tools", "ArxivTool", *model_args(server)],
                       cwd=project, home=home, env=cli_env(home, SERPER_API_KEY=""))
        request = server.requests[0]
    assert proc.returncode == 0, proc.stderr
    assert "toolkit serper not loaded: missing key: set SERPER_API_KEY" in proc.stderr
    names = offered(request)
    assert {"get_weather", "arxiv_search", "arxiv_paper", "arxiv_read"} <= set(names)
    assert "serper_search" not in names and "read_file" in names  # the builtin tools are still there


def test_unknown_toolkit_is_a_usage_error(home: Path, project: Path) -> None:
    proc = run_cli(["-p", "hi", "--tools", "weather,nope", "--api-key", "k"], cwd=project, home=home)
    assert proc.returncode == 2
    assert proc.stderr == ("agentica: config error: command line: 'tools.enable': unknown toolkit 'nope'; known: "
                           f"{', '.join(TOOLKITS)}\n")


def test_config_enable_and_the_tools_command(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[tools]\nenable = ["wikipedia", "exa"]\n')
    with ScriptedModelServer([]) as server:
        child = spawn_agentica(home, project, model_args(server), columns=160, timeout=20, EXA_API_KEY="")
        try:
            child.expect("❯")
            child.send("/tools\r")
            child.expect(r"wikipedia_search\s+Search Wikipedia")
            child.expect(r"toolkits \(--tools, \[tools\] enable\):")
            child.expect(r"wikipedia\s+WikipediaTool\s+loaded: ready")
            child.expect(r"exa\s+SearchExaTool\s+not loaded: missing key: set EXA_API_KEY")
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)


def test_a_missing_extra_is_named_in_the_state_and_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from agentica_cli.toolkits import ArxivTool, BrowserTool
    from agentica_cli.toolkits.catalog import status
    from agentica_cli.tools.base import FunctionCall

    monkeypatch.setitem(sys.modules, "playwright", None)  # what an install without the extra looks like
    monkeypatch.setitem(sys.modules, "pypdf", None)
    assert status("browser").problem == 'missing extra: pip install "agentica-cli[browser]"'
    assert status("arxiv").describe() == 'ready; some functions need: pip install "agentica-cli[pdf]"'
    call = asyncio.run(FunctionCall(BrowserTool(allow_private=True).functions["browser_open"], "a",
                                    {"url": "http://127.0.0.1:9/"}).execute())
    assert call.error == ("Error: MissingExtraError: BrowserTool needs the 'playwright' package: "
                          'pip install "agentica-cli[browser]"')
    call = asyncio.run(FunctionCall(ArxivTool().functions["arxiv_read"], "b", {"paper": "1706.03762"}).execute())
    assert call.error == ("Error: MissingExtraError: ArxivTool.arxiv_read needs the 'pypdf' package: "
                          'pip install "agentica-cli[pdf]"')
