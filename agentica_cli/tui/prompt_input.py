"""The REPL's input line: prompt_toolkit session, key bindings, completion, @mentions.

Enter sends; Alt+Enter (Esc Enter) or a trailing backslash adds a newline; pasted text
(bracketed paste) stays one message, and a large paste shows as `[Pasted text #1 +200 lines]`
until it is sent whole. Menus open as you type `/` (commands) and `@` (the project's files,
matched fuzzily: agentica_cli/file_index.py); Tab completes too. Ctrl-R searches the history
backwards, and Enter runs the prompt found (as in bash; Esc keeps it to edit). Ctrl-G edits the
input in $VISUAL / $EDITOR. `[ui] editing_mode = "vi"` gives vi keys. Shift+Tab calls
`on_shift_tab` (the REPL cycles the permission mode). Ctrl-C clears a non-empty line, and at
an empty line asks to press it again to exit.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.buffer import Buffer, CompletionState
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, get_common_complete_suffix
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.styles import Style

from agentica_cli.app.mentions import IGNORED_DIRS, attach_mentions, folder_listing
from agentica_cli.file_index import FileIndex

__all__ = ["attach_mentions", "folder_listing"]  # the REPL's and older callers' names

PROMPT = "❯ "

STYLE = Style.from_dict({
    "prompt": "ansicyan bold",
    "continuation": "ansibrightblack",
    "toolbar": "ansibrightblack",
    "status": "ansibrightblack",
    "status.mode.accept-edits": "ansimagenta",
    "status.mode.plan": "ansicyan",
    "status.mode.auto": "ansired",
})

# A paste longer than this is shown as a placeholder in the input line.
PASTE_MAX_LINES = 10
PASTE_MAX_CHARS = 1000
PASTE_PLACEHOLDER = re.compile(r"\[Pasted text #(\d+) \+\d+ lines?\]")


class PastedTexts:
    """Large pastes of this session, by number: the input line shows a placeholder for each,
    the message sent (and the history kept) has the text itself."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def collapse(self, data: str) -> str:
        """What to insert for pasted `data`: itself, or a placeholder if it is large."""
        lines = len(data.splitlines())
        if lines <= PASTE_MAX_LINES and len(data) <= PASTE_MAX_CHARS:
            return data
        number = len(self.texts) + 1
        self.texts[number] = data
        return f"[Pasted text #{number} +{lines} line{'s' if lines != 1 else ''}]"

    def expand(self, text: str) -> str:
        """`text` with every placeholder of this session replaced by what was pasted."""
        if not self.texts:
            return text
        return PASTE_PLACEHOLDER.sub(lambda m: self.texts.get(int(m.group(1)), m.group(0)), text)


class PasteExpandingHistory(FileHistory):
    """The history file keeps pasted text itself: a placeholder means nothing next session."""

    def __init__(self, filename: str, pastes: PastedTexts):
        super().__init__(filename)
        self.pastes = pastes

    def store_string(self, string: str) -> None:
        super().store_string(self.pastes.expand(string))


def completing_word(before: str) -> bool:
    """Is the cursor in a word a menu should open for while typing: `/command` (the first
    word) or `@mention`?"""
    if before.startswith("/") and " " not in before:
        return True
    return MENTION_AT_END.search(before) is not None


MENTION_AT_END = re.compile(r"(?:^|\s)@([^\s@]*)$")


class ReplCompleter(Completer):
    def __init__(self, commands: dict[str, str], work_dir: Path):
        self.commands = commands
        self.work_dir = work_dir
        self.index = FileIndex(work_dir)  # the project's files for `@` (listed off the event loop)
        # Commands that come and go (MCP server prompts): name -> (help, argument names).
        self.dynamic: Callable[[], dict[str, tuple[str, list[str]]]] | None = None
        # MCP resources for `@server:uri`: server -> URIs.
        self.resources: Callable[[], dict[str, list[str]]] | None = None

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        dynamic = self.dynamic() if self.dynamic is not None else {}
        if before.startswith("/") and " " not in before:
            # One entry per name: `commands` (built-in, then custom: the project's over the
            # user's) before an MCP prompt of the same name, which that name does not reach.
            entries = dict(self.commands)
            for name, (help_text, _) in dynamic.items():
                entries.setdefault(name, help_text)
            for name, help_text in entries.items():
                if name.startswith(before[1:]):
                    yield Completion("/" + name, start_position=-len(before), display_meta=help_text)
            return
        command = before[1:].split(" ", 1)[0] if before.startswith("/") else ""
        if command in dynamic:  # a prompt's arguments, as name=
            word = before.rsplit(" ", 1)[-1]
            used = set(re.findall(r"(\w+)=", before))
            for arg in dynamic[command][1]:
                if arg not in used and arg.startswith(word):
                    yield Completion(f"{arg}=", start_position=-len(word), display_meta="argument")
            return
        match = MENTION_AT_END.search(before)
        if match:
            yield from self._resources(match.group(1))
            yield from self._paths(match.group(1))

    def _resources(self, partial: str) -> Iterable[Completion]:
        resources = self.resources() if self.resources is not None else {}
        server, colon, rest = partial.partition(":")
        for name, uris in resources.items():
            if not colon and name.startswith(server):
                yield Completion(f"{name}:", start_position=-len(partial), display_meta="MCP resources")
            elif colon and name == server:
                for uri in uris:
                    if uri.startswith(rest):
                        yield Completion(f"{name}:{uri}", start_position=-len(partial), display_meta="MCP resource")

    def _paths(self, partial: str) -> Iterable[Completion]:
        """The project's files matching `partial` fuzzily (`@module` finds src/pkg/module_util.py);
        a path outside the project (`/`, `~`, `..`) is completed name by name from its folder."""
        if partial.startswith(("/", "~", "..")):
            yield from self._folder_entries(partial)
            return
        for match in self.index.match(partial):
            yield Completion(match.path, start_position=-len(partial), display=match.path,
                             display_meta="folder" if match.path.endswith("/") else "")

    def _folder_entries(self, partial: str) -> Iterable[Completion]:
        folder_part, _, name_part = partial.rpartition("/")
        folder = Path(folder_part or "/").expanduser()
        folder = folder if folder.is_absolute() else self.work_dir / folder
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name in IGNORED_DIRS or not entry.name.startswith(name_part):
                continue
            if entry.name.startswith(".") and not name_part.startswith("."):
                continue
            suffix = "/" if entry.is_dir() else ""
            text = (folder_part + "/" if folder_part else "") + entry.name + suffix
            yield Completion(text, start_position=-len(partial), display=entry.name + suffix)


def complete_now(buffer: Buffer) -> None:
    """Complete the word at the cursor from the completer itself, not from the menu.

    The menu that opens as you type is filled by a background task that runs after the keys
    typed at once have been handled (`/revi` and Tab in one read, as a paste or a fast typist
    sends them), and prompt_toolkit drops a Tab's own completion while that menu is pending or
    open. So Tab asks the completer here: one completion is applied, several insert what they
    share and open the menu on them.
    """
    if buffer.completer is None:
        return
    document = buffer.document
    completions = list(buffer.completer.get_completions(document, CompleteEvent(completion_requested=True)))
    if len(completions) == 1:
        buffer.apply_completion(completions[0])
        return
    if not completions:
        return
    common = get_common_complete_suffix(document, completions)
    if common:
        buffer.insert_text(common)  # the menu reopens as typed, on what now matches
    else:
        buffer.complete_state = CompletionState(original_document=document, completions=completions)


def make_key_bindings(
    pastes: PastedTexts | None = None,
    on_shift_tab: Callable[[], object] | None = None,
    on_expand: Callable[[], object] | None = None,
) -> KeyBindings:
    from prompt_toolkit.filters import is_searching

    kb = KeyBindings()

    @kb.add("enter", filter=is_searching)
    def _run_found(event: KeyPressEvent) -> None:
        """Enter in Ctrl-R's search: the prompt found is sent (bash's reverse-i-search)."""
        from prompt_toolkit.search import accept_search

        target = event.app.layout.search_target_buffer_control
        accept_search()  # the match into the input, the search line gone, the input focused again
        (target.buffer if target is not None else event.app.current_buffer).validate_and_handle()

    @kb.add("tab", filter=~is_searching)
    def _complete(event: KeyPressEvent) -> None:
        """Tab: the only completion is taken at once (the menu open as you type shows it); among
        several, the next one is selected (and the menu opened if it is not)."""
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and (state.current_completion is not None or len(state.completions) > 1):
            buffer.complete_next()
        else:
            complete_now(buffer)

    @kb.add("c-g")
    def _edit_in_editor(event: KeyPressEvent) -> None:
        """Ctrl-G: the input in $VISUAL / $EDITOR; what is saved there comes back to edit or send."""
        event.current_buffer.open_in_editor(validate_and_handle=False)

    if on_expand is not None:
        @kb.add("c-o")
        def _expand(event: KeyPressEvent) -> None:
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(on_expand)  # printed above the input line, which is then redrawn

    if pastes is not None:
        @kb.add(Keys.BracketedPaste)
        def _paste(event: KeyPressEvent) -> None:
            data = event.data.replace("\r\n", "\n").replace("\r", "\n")  # as prompt_toolkit's own handler
            event.current_buffer.insert_text(pastes.collapse(data))

    if on_shift_tab is not None:
        @kb.add("s-tab")
        def _shift_tab(event: KeyPressEvent) -> None:
            on_shift_tab()
            event.app.invalidate()  # the status line shows the change at once

    @kb.add("enter", filter=~is_searching)
    def _submit(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None and buffer.complete_state.current_completion is not None:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        if buffer.document.text_before_cursor.endswith("\\") and buffer.document.is_cursor_at_the_end:
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
            return
        buffer.validate_and_handle()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-j")  # Ctrl-J, and what some terminals send for Shift-Enter
    def _newline_j(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-v")
    def _paste_image(event: KeyPressEvent) -> None:
        from prompt_toolkit.application import run_in_terminal

        from agentica_cli.tui.image_input import paste_clipboard_image

        paste_clipboard_image(event.current_buffer, lambda why: run_in_terminal(lambda: print(f"(Ctrl-V: {why})")))

    if sys.platform == "win32":  # Windows Terminal may keep Ctrl-V for its own text paste: Alt-V too
        kb.add("escape", "v")(_paste_image)

    @kb.add("c-c", filter=~is_searching)  # in Ctrl-R's search, Ctrl-C leaves the search
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt)

    return kb


def continuation(width: int, line_number: int, wrap_count: int) -> FormattedText:
    """What starts the input's second and later lines: `… `, right-aligned under the prompt
    (`width` is the prompt's) so a new line's text lines up with the first.

    Never as wide as the terminal: prompt_toolkit counts this again on every row of a line
    wider than the window, and when it does not leave room on a row (a question longer than
    the terminal is wide, e.g. the first run's save question at 40 columns: `width` is then
    wider than the terminal) it gives the input an endless height and draws nothing at all.
    So a wrapped row gets the bare `… `, a new line at most half the width.
    """
    from prompt_toolkit.application import get_app

    room = get_app().output.get_size().columns // 2
    width = 2 if wrap_count else min(width, room)
    if width > room:  # a terminal three columns wide: no mark rather than nothing drawn
        return FormattedText([])
    return FormattedText([("class:continuation", "… ".rjust(width))])


def make_session(
    history_path: Path | None,
    commands: dict[str, str],
    work_dir: Path,
    *,
    status: Callable[[], FormattedText] | None = None,
    pastes: PastedTexts | None = None,
    on_shift_tab: Callable[[], object] | None = None,
    on_expand: Callable[[], object] | None = None,
    editing_mode: str = "emacs",
) -> PromptSession[str]:
    """The input line. `status` draws the line under it; `pastes` collapses large pastes
    (the caller expands the result with `pastes.expand`); `editing_mode` "vi" gives vi keys."""
    history: InMemoryHistory | FileHistory = InMemoryHistory()
    if history_path is not None:
        try:
            from agentica_cli.private_files import private_file

            path = str(private_file(history_path))  # every prompt typed: 0600
            history = PasteExpandingHistory(path, pastes) if pastes is not None else FileHistory(path)
        except OSError:
            pass
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition

    completer = ReplCompleter(commands, work_dir)
    session: PromptSession[str] = PromptSession(
        message=FormattedText([("class:prompt", PROMPT)]),
        history=history,
        multiline=True,
        key_bindings=make_key_bindings(pastes, on_shift_tab, on_expand),
        completer=completer,
        complete_while_typing=Condition(lambda: completing_word(get_app().current_buffer.document.text_before_cursor)),
        vi_mode=editing_mode == "vi",
        prompt_continuation=continuation,
        style=STYLE,
        enable_history_search=False,
        mouse_support=False,
    )
    if status is not None:
        add_status_line(session, status)
    edit_in_ordinary_terminal(session.default_buffer)
    return session


def edit_in_ordinary_terminal(buffer: Buffer) -> None:
    """Ctrl-G's editor runs with the terminal's own settings (echo, line editing), not those
    the session holds it in between prompts (terminal.typeahead_kept)."""
    from agentica_cli.tui.terminal import ordinary_terminal

    run_editor = buffer._open_file_in_editor

    def in_ordinary_terminal(filename: str) -> bool:
        with ordinary_terminal():
            return run_editor(filename)

    buffer._open_file_in_editor = in_ordinary_terminal  # type: ignore[method-assign]


def add_status_line(session: PromptSession[str], status: Callable[[], FormattedText]) -> None:
    """A line right under the input, while it is being typed.

    Not `bottom_toolbar`: a non-fullscreen prompt fills the rows below the cursor, so a
    toolbar sits at the bottom of the terminal, far from a prompt near the top; and it is
    drawn only once the terminal has answered a cursor-position query. Here the line follows
    the input, and an empty filler at the end (heavily weighted) takes the spare rows.
    """
    from prompt_toolkit.filters import is_done
    from prompt_toolkit.layout import ConditionalContainer, Dimension, FormattedTextControl, Window

    line = Window(FormattedTextControl(status), height=1, dont_extend_height=True, style="class:status")
    rows = session.layout.container.children  # type: ignore[attr-defined]  # an HSplit: the input first, then prompt_toolkit's toolbars
    rows.insert(1, ConditionalContainer(line, filter=~is_done))
    rows.append(Window(height=Dimension(weight=10_000)))
