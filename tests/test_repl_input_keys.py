"""The input line's keys through a pseudo-terminal at 80x24 (one at 120x40): Ctrl-R then Enter
sends the prompt found, Ctrl-G edits the input in $EDITOR, `[ui] editing_mode = "vi"` gives vi
keys, and the menus that open as `/` and `@` are typed (`@` fuzzy over the project's files,
git-aware), and `@folder/` attaching a listing."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import last_user_message, model_args
from screen_support import PROMPT, Screen, open_screen, spawn_screen

from agentica_cli.testing import ScriptedModelServer, turns


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    started: list[Screen] = []
    yield started
    for screen in started:
        if screen.child.isalive():
            screen.child.terminate(force=True)


def _wait_requests(server: ScriptedModelServer, count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while len(server.requests) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(server.requests)} request(s), wanted {count}")
        time.sleep(0.05)


def _history(home: Path, *prompts: str) -> None:
    """~/.agentica/history as prompt_toolkit's FileHistory writes it."""
    (home / "history").write_text("".join(f"\n# 2026-12-01 10:00:00.000000\n+{p}\n" for p in prompts))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_ctrl_r_then_enter_sends_the_prompt_found(
    home: Path, project: Path, screens: list[Screen], size: tuple[int, int],
) -> None:
    _history(home, "explain the parser module", "run the linter")
    with ScriptedModelServer([turns.text("Explained.")]) as server:
        screen = spawn_screen(home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        screen.send("\x12")  # Ctrl-R
        screen.send("parser")
        screen.wait_text("explain the parser module")
        screen.send("\r")
        screen.wait_text("Explained.")
        assert last_user_message(server.requests[0]) == "explain the parser module"
        screen.pump()
        assert "i-search" not in screen.text().lower()  # the search line went with the search


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_ctrl_g_edits_the_input_in_the_editor(home: Path, project: Path, tmp_path: Path,
                                              screens: list[Screen], size: tuple[int, int]) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "%s" "$(cat "$1") and the tests too" > "$1"\n')
    editor.chmod(0o755)
    with ScriptedModelServer([turns.text("Fixed.")]) as server:
        screen = open_screen(home, project, model_args(server), columns=size[0], lines=size[1], VISUAL=str(editor),
                             EDITOR=None)
        screens.append(screen)
        screen.wait_text(PROMPT)
        screen.send("fix the parser")
        screen.wait_text("fix the parser")
        screen.send("\x07")  # Ctrl-G
        screen.wait_text("and the tests too")  # back in the input, not sent yet
        assert not server.requests
        screen.send("\r")
        screen.wait_text("Fixed.")
        assert last_user_message(server.requests[0]) == "fix the parser and the tests too"


@pytest.fixture
def vi_home(home: Path) -> Path:
    (home / "config.toml").write_text('[ui]\nediting_mode = "vi"\n')
    return home


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_vi_editing_mode_from_config(
    vi_home: Path, project: Path, screens: list[Screen], size: tuple[int, int],
) -> None:
    with ScriptedModelServer([turns.text("Done.")]) as server:
        screen = spawn_screen(vi_home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        screen.send("hello brave world")
        screen.wait_text("hello brave world")
        time.sleep(0.1)
        screen.send("\x1b")  # normal mode
        time.sleep(0.6)  # past prompt_toolkit's wait for a longer escape sequence
        screen.send("0dw")  # to the start, delete a word
        screen.wait_for(lambda text: "❯ brave world" in text, what="the first word deleted")
        screen.send("\r")
        screen.wait_text("Done.")
        assert last_user_message(server.requests[0]) == "brave world"


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_the_command_menu_opens_as_slash_is_typed(home: Path, project: Path, screens: list[Screen],
        columns: int, lines: int) -> None:
    with ScriptedModelServer([]) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        screen.send("/re")  # no Tab
        text = screen.wait_text("/rewind")
        assert "/resume" in text and "/redo" in text
        assert "/clear" not in text  # only the commands that start with what was typed


def _git_project(project: Path, files: int = 0) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs the git program")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "src" / "deep" / "pkg").mkdir(parents=True)
    (project / "src" / "deep" / "pkg" / "module_util.py").write_text("def helper():\n    return 42\n")
    (project / "generated").mkdir()
    (project / "generated" / "module_gen.py").write_text("ignored\n")
    (project / ".gitignore").write_text("generated/\n")
    for number in range(files):
        folder = project / "bulk" / f"d{number // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{number}.txt").write_text("")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_at_matches_the_projects_files_fuzzily_as_typed(home: Path, project: Path, screens: list[Screen],
                                                        size: tuple[int, int]) -> None:
    _git_project(project)
    with ScriptedModelServer([turns.text("Read it.")]) as server:
        screen = spawn_screen(home, project, server, columns=size[0], lines=size[1])
        screens.append(screen)
        screen.send("what does @modutil")  # no Tab: the menu opens by itself, fuzzy (m-o-d-u-t-i-l)
        text = screen.wait_text("src/deep/pkg/module_util.py")
        assert "module_gen.py" not in text  # .gitignore'd
        screen.send("\t")  # the only entry: taken at once
        screen.wait_text("@src/deep/pkg/module_util.py")
        screen.send(" do\r")
        screen.wait_text("Read it.")
        sent = last_user_message(server.requests[0])
        assert sent.startswith("what does @src/deep/pkg/module_util.py do")
        assert "return 42" in sent  # the file went with the message


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_at_folder_attaches_a_listing(home: Path, project: Path, screens: list[Screen],
        columns: int, lines: int) -> None:
    _git_project(project)
    with ScriptedModelServer([turns.text("Listed.")]) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        screen.send("what is in @src/deep/pkg/ ?\r")
        screen.wait_text("Listed.")
        sent = last_user_message(server.requests[0])
        assert "module_util.py" in sent.split("?", 1)[1]  # a listing after the message


def _typed_at_once(keys: str, project: Path, dynamic: dict[str, tuple[str, list[str]]] | None = None) -> str:
    """What the input line sends for `keys` arriving in one read (a paste, a fast typist, pexpect),
    through the REPL's own session: its key bindings, its completer, its as-you-type menus."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from agentica_cli.tui.prompt_input import make_session

    with create_pipe_input() as pipe:
        session = make_session(None, {"review": "Review one file (project)", "rewind": "Rewind"}, project)
        session.app.input = pipe
        session.app.output = DummyOutput()
        if dynamic is not None:
            session.completer.dynamic = lambda: dynamic  # type: ignore[union-attr]
        pipe.send_text(keys)
        return session.prompt()


def test_tab_typed_with_the_word_completes_it(project: Path) -> None:
    """Tab in the same read as `/revi`: the menu opening as you type is still pending, and
    prompt_toolkit's own Tab completion would be dropped (the word stayed `/revi`)."""
    (project / "calculator.py").write_text("x = 1\n")
    assert _typed_at_once("/revi\t\r", project) == "/review"
    assert _typed_at_once("see @calcul\t\r", project) == "see @calculator.py"
    assert _typed_at_once("/re\t\r", project) == "/re"  # two match: nothing taken, the menu opens


def test_a_name_from_two_sources_is_one_completion(project: Path) -> None:
    """An MCP prompt named like a command: one entry (the command's), so Tab takes it at once."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from agentica_cli.tui.prompt_input import ReplCompleter

    entries = {"review": ("An MCP prompt", ["path"]), "summarise": ("MCP", [])}
    completer = ReplCompleter({"review": "Review one file (project)"}, project)
    completer.dynamic = lambda: entries
    found = completer.get_completions(Document("/revi"), CompleteEvent(completion_requested=True))
    assert [(c.text, c.display_meta_text) for c in found] == [("/review", "Review one file (project)")]
    assert _typed_at_once("/revi\t\r", project, entries) == "/review"
    assert _typed_at_once("/summ\t\r", project, entries) == "/summarise"


@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (120, 40)])
def test_a_message_typed_while_a_command_runs_is_sent_at_the_next_prompt(home: Path, project: Path,
                                                                         screens: list[Screen],
        columns: int, lines: int) -> None:
    """Typed (with Enter) before `!cmd` or a slash command is done: the terminal between prompts
    turned that Enter into a newline, and the message stayed an unsent two-line draft."""
    with ScriptedModelServer([turns.text("Yes, done.")]) as server:
        screen = spawn_screen(home, project, server, columns=columns, lines=lines)
        screens.append(screen)
        screen.send("!echo started; sleep 1.5; echo finished\r")
        screen.wait_text("started")
        screen.send("is it done?\r")  # while the command still runs
        text = screen.wait_text("Yes, done.")
        assert "is it done?" not in text.split("finished")[0]  # not echoed into the command's output
        assert last_user_message(server.requests[0]).endswith("is it done?")
