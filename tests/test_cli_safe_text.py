"""Nothing the model or a tool controls can drive the terminal: escape sequences in text,
reasoning, commands, paths, diffs, results, notices, errors and todos are shown, not obeyed.

The REPL renderer is fed events through a real rich Console writing to a StringIO as to a
terminal; `-p` runs as a subprocess against the scripted model server (stderr a pipe, and
stdout and stderr a pseudo-terminal)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pexpect
from cli_support import model_args, run_cli
from screen_support import spawn_agentica

from agentica_cli.agent.events import (
    Error,
    ModelRequestStarted,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    TurnFinished,
    TurnStarted,
)
from agentica_cli.testing import ScriptedModelServer, turns

ERASE = "\x1b[2K\x1b[1G"  # erase the line, back to its start: what hid `rm -f` behind `ls -la`
TITLE = "\x1b]0;pwned\x07"  # set the window title
PAYLOAD = f"A{ERASE}B{TITLE}C"
SHOWN = "A␛[2K␛[1GB␛]0;pwned␇C"
SGR = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]")  # rich's own styling, and hiding the cursor


def _terminal() -> tuple[io.StringIO, object]:
    from rich.console import Console

    out = io.StringIO()
    # A terminal for colours and styles; not interactive, so the live area is never drawn
    # into `out` (its renderables are checked on their own below).
    return out, Console(file=out, width=100, force_terminal=True, force_interactive=False, color_system="truecolor")


def _assert_no_escape_but_styling(screen: str) -> None:
    assert "\x07" not in screen
    leftover = SGR.sub("", screen)
    assert "\x1b" not in leftover, repr(leftover[max(0, leftover.index("\x1b") - 40):][:80])


def test_the_repl_renderer_shows_every_payload_and_obeys_none(tmp_path: Path) -> None:
    from agentica_cli.tui.render import EventRenderer

    (tmp_path / "old.txt").write_text("keep\n")
    out, console = _terminal()
    for markdown in (True, False):
        renderer = EventRenderer(console, tmp_path, markdown=markdown)
        events = [
            TurnStarted("x"),
            ModelRequestStarted(1),
            ReasoningDelta(f"thinking {PAYLOAD}\n"),
            TextDelta(f"# Title {PAYLOAD}\n\nText {PAYLOAD}\n\n```sh\necho {PAYLOAD}\n```\n\n"),
            Notice(f"retrying in 1 s: server said {PAYLOAD}", kind="retry"),
            TextDelta(f"Again {PAYLOAD}\n\n"),
            ToolCallStarted("x1", "execute", {"command": f"rm -f victim.txt # {PAYLOAD} ls -la"}),
            ToolOutput("x1", f"live {PAYLOAD}\n", source="task:x1"),
            ToolCallFinished("x1", "execute", f"[exit code 0; 0.1 s]\n--- stdout ---\nout {PAYLOAD}", elapsed=0.1),
            ToolCallStarted("w1", "write_file", {"file_path": f"run{PAYLOAD}.sh", "content": f"echo hi\n{PAYLOAD}\n"}),
            ToolCallFinished("w1", "write_file", f"Wrote run.sh {PAYLOAD}", elapsed=0.1),
            ToolCallStarted("e1", "edit_file", {"file_path": "old.txt", "old_string": "keep", "new_string": PAYLOAD}),
            ToolCallFinished("e1", "edit_file", "Edited old.txt", elapsed=0.1),
            ToolCallStarted("m1", f"mcp{PAYLOAD}", {"query": PAYLOAD}),
            ToolCallFinished("m1", f"mcp{PAYLOAD}", f"server says {PAYLOAD}", elapsed=0.1, show_result=True),
            ToolCallStarted("b1", f"bad{PAYLOAD}", {}),
            ToolCallFinished("b1", f"bad{PAYLOAD}", "", error=f"Error: {PAYLOAD}", status="error"),
            ToolCallStarted("t1", "write_todos", {"todos": [{"content": PAYLOAD, "status": "pending"}]}),
            ToolCallFinished("t1", "write_todos", "ok", elapsed=0.1),
            Error(f"HTTP 500: {PAYLOAD}"),
            TurnFinished("done"),
        ]
        for event in events:
            renderer.handle(event)
        assert renderer.expand_last()  # /expand prints a whole result
    screen = out.getvalue()
    _assert_no_escape_but_styling(screen)
    plain = SGR.sub("", screen)
    for where in ("thinking", "Title", "Text", "echo", "server said", "Again", "rm -f victim.txt #", "out",
                  "server says", "Error:", "HTTP 500:"):
        assert f"{where} {SHOWN}" in plain, where
    assert f"run{SHOWN}.sh" in plain and f"[ ] {SHOWN}" in plain and f"+{SHOWN}" in plain


def test_the_live_area_shows_payloads_too(tmp_path: Path) -> None:
    from agentica_cli.tui.render import EventRenderer

    out, console = _terminal()
    renderer = EventRenderer(console, tmp_path)

    def live_area() -> str:
        out.seek(0)
        out.truncate()
        console.print(renderer._live_renderable())
        screen = out.getvalue()
        _assert_no_escape_but_styling(screen)
        return SGR.sub("", screen)

    for event in (TurnStarted("x"), ModelRequestStarted(1),
                  Notice(f"retrying in 5 s (attempt 2 of 5): {PAYLOAD}", kind="retry")):
        renderer.handle(event)
    assert f"retrying in 5 s (attempt 2 of 5): {SHOWN}" in live_area()  # the countdown line
    renderer.handle(ReasoningDelta(f"r {PAYLOAD}"))
    renderer.handle(TextDelta(f"streaming {PAYLOAD}"))
    screen = live_area()
    assert f"streaming {SHOWN}" in screen and f"r {SHOWN}" in screen
    renderer.handle(ToolCallStarted("x1", "execute", {"command": f"make {PAYLOAD}"}))
    renderer.handle(ToolOutput("x1", f"building {PAYLOAD}\nstep {PAYLOAD}", source="task:x1"))
    screen = live_area()
    assert f"building {SHOWN}" in screen and f"step {SHOWN}" in screen and f"make {SHOWN}" in screen
    renderer.pause()


def _spoofing_script() -> list:
    return [
        turns.tool_calls(turns.call("execute", {"command": f"printf 'out {ERASE}{TITLE}\\n' # {PAYLOAD}"}, id="x1")),
        turns.text(f"Answer {PAYLOAD}"),
    ]


def test_print_mode_stderr_progress_shows_payloads(home: Path, tmp_path: Path) -> None:
    with ScriptedModelServer(_spoofing_script()) as server:
        done = run_cli(["-p", "go", "--yes", *model_args(server)], cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert f"> execute printf 'out ␛[2K␛[1G␛]0;pwned␇\\n' # {SHOWN}" in done.stderr
    assert done.stdout == f"Answer {PAYLOAD}\n"  # a pipe gets the answer byte for byte


def test_print_mode_on_a_terminal_shows_the_answer_safely(home: Path, tmp_path: Path) -> None:
    with ScriptedModelServer(_spoofing_script()) as server:
        child = spawn_agentica(home, tmp_path, ["-p", "go", "--yes", *model_args(server)], columns=200)
        try:
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    screen = child.before
    assert child.exitstatus == 0, screen
    _assert_no_escape_but_styling(screen)
    assert f"Answer {SHOWN}" in screen


def test_plain_session_lines_show_quoted_server_text(capsys) -> None:  # type: ignore[no-untyped-def]
    from agentica_cli.tui.terminal import plain

    plain(f"server failed: {PAYLOAD}", "31")  # e.g. an MCP server's error, shown by the REPL and /mcp
    out = capsys.readouterr().out
    _assert_no_escape_but_styling(out)
    assert f"server failed: {SHOWN}" in out
