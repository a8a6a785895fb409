"""Text the model writes before a tool call is printed once (issue 25, item 20).

The live area is redrawn in place: rich moves the cursor up by as many rows as its last frame
took. When rich's idea of the width is not the terminal's — a `COLUMNS` exported by the shell
and then a narrower window, a resized tmux pane — each long line takes more rows than rich
counted, and every redraw left a copy of the text above it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cli_support import model_args
from screen_support import PROMPT, open_screen

from agentica_cli.testing import ScriptedModelServer, turns

TEXT = "Let me look at the notes first, then I will read the rest of the project files one by one."


@pytest.mark.parametrize("resize_to", [None, 60], ids=["stale-COLUMNS", "resized-mid-stream"])
def test_text_before_a_tool_call_is_printed_once(home: Path, project: Path, resize_to: int | None) -> None:
    script = [turns.tool_calls(turns.call("read_file", {"file_path": "notes.txt"}, id="r1"), content=TEXT)
              | {"chunk_delay": 0.04}, turns.text("All done here.")]
    with ScriptedModelServer(script) as server:
        columns = 100 if resize_to else 60
        # the environment says 100 columns; the terminal has 60 (now, or after the resize)
        screen = open_screen(home, project, model_args(server), columns=columns, lines=40, COLUMNS="100")
        screen.wait_text(PROMPT)
        screen.send("go\r")
        if resize_to:
            screen.wait_text("Let me look")
            screen.resize(resize_to, 40)
        screen.wait_text("All done here.")
        time.sleep(0.5)
        screen.pump()
        shown = screen.text()
        screen.child.terminate(force=True)
    assert shown.count("Let me look at the notes") == 1, shown
    assert "● read_file notes.txt" in shown
