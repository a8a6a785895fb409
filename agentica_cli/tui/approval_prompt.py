"""The approval question in the REPL: what the call will do, then one key to answer.

The call (its exact command, or the diff of an edit) and the choices are printed as
ordinary lines first, so they wrap at any width and stay in the scrollback; only then a
one-line key reader starts. Keys typed before the question was on screen are discarded
(a `y` typed into a turn must not answer a question the user never saw). Answers:

    y  yes, once          a  yes, and don't ask again for <scope> this session
    p  the same, in this project from now on (saved; /permissions lists and revokes it)
    n  no                 e  no, and tell the agent what to do instead
    Esc / Ctrl-C  no, and stop the turn
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentica_cli.app.safe_text import has_controls, has_odd_spaces, safe_command, safe_text


@dataclass(frozen=True)
class Choice:
    key: str
    label: str
    answer: str  # "once", "always", "project", "no", "reason", "stop"


def choices_for(always_scope: str | None, *, in_project: bool = False) -> list[Choice]:
    """The answers offered; "always" when `always_scope` says what it would allow, and "always
    in this project" beside it when `in_project` (edits are granted by a mode, not saved)."""
    found = [Choice("y", "yes", "once")]
    if always_scope:
        found.append(Choice("a", f"yes, and don't ask again for {always_scope} this session", "always"))
        if in_project:
            found.append(Choice("p", "yes, and not in this project either (saved)", "project"))
    found += [
        Choice("n", "no", "no"),
        Choice("e", "no, and tell it what to do instead", "reason"),
        Choice("esc", "no, and stop", "stop"),
    ]
    return found


def request_renderable(name: str, args: dict[str, Any], diff: str | None, note: str = "") -> Any:
    """The panel that shows the call: a diff for edits, the exact command for commands
    (control characters shown visibly, so what is shown is what runs), else the arguments."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.text import Text

    parts: list[Any] = []
    if note:
        parts.append(Text(safe_text(note), style="bold yellow"))
    command = args.get("command")
    if diff:
        from agentica_cli.tui.diff_preview import render_diff

        parts.append(render_diff(diff))  # the whole diff, numbered: the question hides nothing
    elif isinstance(command, str):
        parts.append(Syntax(safe_command(command), "bash", theme="ansi_dark", background_color="default",
                            word_wrap=True))
        if has_controls(command) or has_odd_spaces(command):
            parts.append(Text("the command holds control characters or unusual spaces (shown as ␛, ␍, <U+…>): "
                              "check what it really does", style="bold red"))
        # e.g. a timeout: the user sees it all; an empty value (reason="") says nothing
        others = {k: v for k, v in args.items() if k != "command" and v not in ("", None)}
        if others:
            parts.append(Text("  ".join(f"{k}={safe_text(json.dumps(v, ensure_ascii=False))}"
                                        for k, v in others.items()), "dim"))
    else:
        parts.append(Text(safe_text(json.dumps(args, indent=2, ensure_ascii=False))))
    return Panel(Group(*parts), title=f"[bold]{safe_text(name)}[/bold] wants to run", border_style="yellow",
                 title_align="left")


def choices_text(choices: list[Choice]) -> Any:
    from rich.text import Text

    text = Text()
    for i, choice in enumerate(choices):
        if i:
            text.append("  ")
        text.append(f"[{choice.key}]", style="bold")
        text.append(f" {choice.label}")
    return text


def discard_typeahead() -> None:
    """Drop keys typed before the question was shown."""
    try:
        import termios

        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError):
        pass


def redraw_on_resize(app: Any, redraw: Callable[[], None]) -> None:
    """Call `redraw` (above `app`'s line, through run_in_terminal) whenever the terminal's width
    changes while `app` waits: what was printed at the old width is cut or re-wrapped by the
    terminal, so the question is drawn again at the new one (a burst of resizes, one redraw each)."""
    from prompt_toolkit.application import run_in_terminal

    width = [app.output.get_size().columns]

    def check(_: Any) -> None:
        columns = app.output.get_size().columns
        if columns != width[0]:
            width[0] = columns
            run_in_terminal(redraw)  # scheduled: printed above the question line, which is drawn again

    app.before_render += check


async def read_choice(choices: list[Choice], redraw: Callable[[], None] | None = None, *, question: str = "Allow? ",
                      escape_answer: str = "stop") -> str:
    """Wait for one key of `choices` (no Enter needed); returns its answer (Esc and Ctrl-C:
    `escape_answer`, Ctrl-D: "no"). `redraw` prints the question again after the window's width
    changed (redraw_on_resize)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.layout.containers import Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    keys = "/".join(c.key for c in choices if c.key != "esc")
    bindings = KeyBindings()

    def answer_with(value: str) -> Any:
        def handler(event: KeyPressEvent) -> None:
            event.app.exit(result=value)

        return handler

    for choice in choices:
        if choice.key == "esc":
            bindings.add("escape", eager=True)(answer_with(escape_answer))
        else:
            bindings.add(choice.key)(answer_with(choice.answer))
            bindings.add(choice.key.upper())(answer_with(choice.answer))
    if not any(c.key == "esc" for c in choices):
        bindings.add("escape", eager=True)(answer_with(escape_answer))
    bindings.add("c-c")(answer_with(escape_answer))
    bindings.add("c-d")(answer_with("no" if escape_answer == "stop" else escape_answer))
    bindings.add("<any>")(lambda event: None)  # other keys do nothing (Enter alone never answers)
    prompt = FormattedText([("ansiyellow bold", question), ("", f"[{keys}, esc] ")])
    window = Window(FormattedTextControl(prompt, show_cursor=True), wrap_lines=True, dont_extend_height=True)
    app: Application[str] = Application(layout=Layout(window), key_bindings=bindings, erase_when_done=True)
    app.ttimeoutlen = 0.05  # a lone Esc answers at once, not after prompt_toolkit's 0.5 s
    if redraw is not None:
        redraw_on_resize(app, redraw)

    # The call and the choices are printed by now: anything typed before this point was typed
    # without them on screen, and is void. (prompt_toolkit attaches its reader and draws the
    # question before it reads a key, so nothing typed after this is lost.)
    discard_typeahead()
    return await app.run_async()


async def read_yes_no(question: str, *, default: bool) -> bool:
    """A yes/no question answered with one key, as the approval question is: y or n, Enter
    for the default (the capital in `[Y/n]`); Esc and Ctrl-C raise KeyboardInterrupt (the
    caller's "leave"). The question and its answer stay on screen."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.layout.containers import Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    bindings = KeyBindings()

    def answer_with(value: bool | None) -> Any:
        def handler(event: KeyPressEvent) -> None:
            future = event.app.future
            assert future is not None  # a key is only handled while the app runs: run_async set its future
            if not future.done():  # "y\r" arrives as one read: the Enter after it is not a second answer
                event.app.exit(result=value)

        return handler

    for key in ("y", "Y"):
        bindings.add(key)(answer_with(True))
    for key in ("n", "N"):
        bindings.add(key)(answer_with(False))
    bindings.add("enter")(answer_with(default))
    bindings.add("escape", eager=True)(answer_with(None))
    bindings.add("c-c")(answer_with(None))
    bindings.add("c-d")(answer_with(None))
    bindings.add("<any>")(lambda event: None)
    window = Window(FormattedTextControl(FormattedText([("ansiyellow", question)]), show_cursor=True),
                    wrap_lines=True, dont_extend_height=True)
    app: Application[bool | None] = Application(layout=Layout(window), key_bindings=bindings,
                                                erase_when_done=True)
    app.ttimeoutlen = 0.05
    discard_typeahead()
    answer = await app.run_async()
    from agentica_cli.tui.terminal import plain

    plain(f"{question}{'' if answer is None else 'y' if answer else 'n'}", "33")
    if answer is None:
        raise KeyboardInterrupt
    return answer
