"""/help and the docs list every command and every key the REPL binds (issue 28, items 11 and 12);
the text helpers behind "everything fits the terminal" (tui/wrapping.py) on their own."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.keys import Keys

from agentica_cli.tui.prompt_input import PastedTexts, make_key_bindings
from agentica_cli.tui.slash import COMMANDS, INPUT_HELP, KEYS
from agentica_cli.tui.wrapping import cell_width, fit_line, pack_fields, wrap_line

ROOT = Path(__file__).resolve().parent.parent
# How /help and the docs name prompt_toolkit's keys.
KEY_NAMES = {"c-o": "Ctrl-O", "s-tab": "Shift+Tab", "enter": "Enter", "c-j": "Ctrl-J", "c-v": "Ctrl-V",
             "c-c": "Ctrl-C", "c-d": "Ctrl-D", "c-r": "Ctrl-R", "c-g": "Ctrl-G", "escape": "Esc", "up": "Up",
             "down": "Down", "tab": "Tab", "v": "V", "c-m": "Enter", "c-i": "Tab", "c-@": "Ctrl-Space"}


def _binding_names() -> set[str]:
    bindings = make_key_bindings(PastedTexts(), on_shift_tab=lambda: None, on_expand=lambda: None)
    names: set[str] = set()
    for binding in bindings.bindings:
        if binding.keys == (Keys.BracketedPaste,):
            continue  # a paste, not a key
        keys = [key.value if isinstance(key, Keys) else str(key) for key in binding.keys]
        names.add(" ".join(KEY_NAMES.get(key, key) for key in keys))
    return names


def test_help_lists_every_key_the_input_line_binds() -> None:
    listed = " ".join(key for key, _ in KEYS)
    for name in _binding_names():
        words = name.split()
        assert all(word in listed for word in words), f"/help does not list {name}"
    for key in ("Shift+Tab", "Esc", "Ctrl-O", "Up / Down", "Ctrl-R", "Ctrl-V"):  # the list
        assert key in listed


def test_the_docs_list_every_command_and_key() -> None:
    for page in (ROOT / "docs" / "cli.md", ROOT / "docs" / "zh" / "cli.md"):
        text = page.read_text(encoding="utf-8")
        for name in COMMANDS:
            assert f"`/{name}" in text, f"{page.name} does not list /{name}"
        for subcommand in ("restart", "login", "logout"):
            assert "/mcp [restart\\|login\\|logout NAME]" in text and subcommand in text
        for key in ("Shift+Tab", "Ctrl-O", "Ctrl-R", "Ctrl-V", "Ctrl-C", "Ctrl-D", "Ctrl-J", "Tab", "Esc"):
            assert key in text, f"{page.name} does not list {key}"
        for _, meaning in INPUT_HELP:
            assert meaning


def test_wrapping_breaks_between_words_and_hangs_under_the_text() -> None:
    rows = wrap_line("  /status       model, folders, permission mode and the command sandbox", 40, 16)
    assert rows == ["  /status       model, folders,", "                permission mode and the",
                    "                command sandbox"]
    assert all(cell_width(row) <= 40 for row in rows)
    sentence = "中文文本在表格单元格中按显示宽度换行就像英文一样"
    cjk = wrap_line(sentence, 20)
    assert all(cell_width(row) <= 20 for row in cjk) and "".join(cjk) == sentence
    assert wrap_line("short", 0) == ["short"]  # not a terminal: not wrapped


def test_fit_line_squeezes_padding_before_it_cuts() -> None:
    line = "tests/test_a.py ...." + " " * 54 + "[100%]"
    fitted = fit_line(line, 76)
    assert cell_width(fitted) == 76 and fitted.endswith("[100%]") and fitted.startswith("tests/test_a.py ....")
    assert fit_line("x" * 100, 10) == "x" * 9 + "…"
    assert pack_fields(["agentica 1.0", "model", "/a/very/long/folder", "mode default"], 30) == [
        "agentica 1.0  ·  model", "/a/very/long/folder", "mode default"]
