"""The README's short tour is what a real session shows at 80 columns: the same session played
through a pseudo-terminal (a scripted model making the tour's calls, the real pytest run by the
execute tool in a project with the tour's failing test), its screen compared with the tour's
block line by line, with only timings, token counts and the start-up line (version, model,
folder, sandbox) allowed to differ."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from cli_support import model_args
from readme_support import README, section
from screen_support import PROMPT, Screen, open_screen

from agentica_cli.testing import ScriptedModelServer, turns

TIMING = re.compile(r"\d+\.\d+s")  # (2.5s), in 1.40s
TOKENS = re.compile(r"\d+% · [\d.]+k tokens")


def tour_block() -> list[str]:
    text = section(README, "A short tour")
    return text.split("```\n", 2)[1].split("\n```", 1)[0].splitlines()


def normalised(line: str) -> str:
    return TOKENS.sub("N% · Nk tokens", TIMING.sub("Ns", line.rstrip()))


@pytest.fixture
def calc_project(project: Path) -> Path:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    return project


def test_the_readme_tour_is_what_a_session_shows_at_80_columns(home: Path, calc_project: Path) -> None:
    pytest.importorskip("pytest")
    tests = turns.call("execute", {"command": "python -m pytest -q"}, id="t1")
    edit = {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    script = [turns.tool_calls(tests, content="Let me run the tests first."),
              turns.tool_calls(turns.call("read_file", {"file_path": "calc.py"}, id="r1")),
              turns.tool_calls(turns.call("edit_file", edit, id="e1")),
              turns.tool_calls(turns.call("execute", {"command": "python -m pytest -q"}, id="t2")),
              turns.text("Fixed: add in calc.py subtracted instead of adding. The test passes now.")]
    python_bin = str(Path(sys.executable).parent)  # `python` there runs this pytest
    with ScriptedModelServer(script) as server:
        screen: Screen = open_screen(home, calc_project, [*model_args(server), "--permission-mode", "accept-edits",
                                                          "--allowed-tools", "execute(python -m pytest *)"],
                                     columns=80, lines=24, history=200, NO_COLOR="1",
                                     PATH=f"{python_bin}{os.pathsep}{os.environ.get('PATH', '')}",
                                     PYTHONDONTWRITEBYTECODE="1",
                                     # pytest prints its failure summary untruncated where CI or
                                     # BUILD_NUMBER is set (as on a CI machine); the tour is a
                                     # user's terminal
                                     CI=None, BUILD_NUMBER=None)
        try:
            screen.wait_text(PROMPT)
            screen.send("the test fails, fix it\r")
            screen.wait_text("The test passes now.")
            screen.wait_for(lambda text: text.rstrip().splitlines()[-2:-1] == [PROMPT], what="the next prompt")
            shown = [normalised(line) for line in screen.all_text().splitlines()]
        finally:
            screen.child.terminate(force=True)
    tour = [normalised(line) for line in tour_block()]
    start = tour.index("❯ the test fails, fix it")
    assert tour[start - 1] in shown  # the start-up's last line (its first ones name a version, model, folder)
    first = shown.index("❯ the test fails, fix it")
    body = [line for line in shown[first:] if line]  # the tour has no blank lines but the one before ❯
    expected = [line for line in tour[start:] if line]
    model = expected[-1].split(" · ", 1)[0]  # the tour's model name, not the scripted one
    body[-1] = model + " · " + body[-1].split(" · ", 1)[1]
    assert "\n".join(body) == "\n".join(expected)
