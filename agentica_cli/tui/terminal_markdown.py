"""The model's Markdown as the REPL prints it: one blank line between blocks, headings on the
left, and code blocks whose lines are never broken.

rich's own Markdown centres level-1 headings, pads code blocks with blank lines (two or three
blank lines around each block) and soft-wraps long code lines by inserting newlines, so a
copied command comes out in pieces. Here a fenced code block of a printed answer is written
out with its lines whole: a line wider than the terminal is wrapped by the terminal itself,
which most terminals join again when the text is copied. In the live area at the bottom of
the screen (the block still streaming), where every line must fit for the area to redraw
cleanly, a long code line is cut at the edge and ends in `…` instead.

The text is made safe (`safe_text`) before it is parsed: the model controls all of it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement, TableElement
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from agentica_cli.app.safe_text import safe_text

CODE_THEME = "ansi_dark"  # the terminal's own palette, no background block


def highlight_code(code: str, lexer: str) -> Text:
    """`code` coloured for `lexer` (plain when the lexer is unknown), without a trailing newline."""
    syntax = Syntax(code, lexer or "text", theme=CODE_THEME, background_color="default")
    text = syntax.highlight(code)
    text.rstrip()
    return text


class _LeftHeading(Heading):
    LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")  # type: ignore[assignment]


class _CroppedCodeBlock(CodeBlock):
    """A code block with no padding and no soft wrap: a line too wide is cut with `…`."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in highlight_code(str(self.text).rstrip(), self.lexer_name).split("\n"):
            line.no_wrap = True
            line.overflow = "ellipsis"
            yield line


class _WrappingTable(TableElement):
    """rich's Markdown table, with cells that wrap whatever their script. rich breaks lines
    only at spaces and cuts a longer "word" with `…`: a Chinese or Japanese sentence, which
    has no spaces, lost its end. Here a run too wide for its column continues on the next
    row (folded by display width, two cells a CJK character), as English words wrap."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(box=box.SIMPLE, pad_edge=False, style="markdown.table.border", show_edge=True,
                      collapse_padding=True)
        if self.header is not None and self.header.row is not None:
            for column in self.header.row.cells:
                heading = column.content.copy()
                heading.stylize("markdown.table.header")
                table.add_column(heading, overflow="fold")
        if self.body is not None:
            for row in self.body.rows:
                table.add_row(*(_folding(element.content) for element in row.cells))
        yield table


def _folding(content: Text) -> Text:
    content = content.copy()
    content.overflow = "fold"
    return content


class TerminalMarkdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "fence": _CroppedCodeBlock,
        "code_block": _CroppedCodeBlock,
        "table_open": _WrappingTable,
    }

    def __init__(self, markup: str, **options: Any):
        super().__init__(safe_text(markup), code_theme=CODE_THEME, **options)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # rich starts a block that opens with a list with a blank line (the list's last
        # paragraph asks for one): the caller puts the one blank line between blocks.
        started = False
        for segment in super().__rich_console__(console, options):
            if not started and isinstance(segment, Segment) and segment.text == "\n":
                continue
            started = True
            yield segment


def _fence_marker(line: str) -> str | None:
    stripped = line.rstrip("\n")
    for mark in ("```", "~~~"):
        if stripped.startswith(mark):  # only unindented fences: indented ones belong to a list
            return mark
    return None


def markdown_parts(text: str) -> list[tuple[str, str, str]]:
    """`text` as ("prose", markdown, "") and ("code", code, language) parts, in order: the
    top-level fenced code blocks are cut out of the prose. An unclosed fence runs to the end."""
    parts: list[tuple[str, str, str]] = []
    prose: list[str] = []
    code: list[str] = []
    fence: str | None = None
    language = ""
    for line in text.splitlines(keepends=True):
        marker = _fence_marker(line)
        if fence is None and marker is not None:
            if "".join(prose).strip():
                parts.append(("prose", "".join(prose), ""))
            prose = []
            fence, code = marker, []
            language = line.strip()[len(marker):].strip().split(" ")[0] if line.strip() != marker else ""
        elif fence is not None and marker == fence and line.strip() == fence:
            parts.append(("code", "".join(code), language))
            fence = None
        elif fence is not None:
            code.append(line)
        else:
            prose.append(line)
    if fence is not None:
        parts.append(("code", "".join(code), language))
    if "".join(prose).strip():
        parts.append(("prose", "".join(prose), ""))
    return parts


def print_markdown(console: Console, text: str) -> None:
    """Print finished Markdown blocks for good: prose through rich, code blocks with whole lines."""
    for index, (kind, body, language) in enumerate(markdown_parts(safe_text(text))):
        if index:
            console.print()
        if kind == "prose":
            console.print(TerminalMarkdown(body))
        else:
            console.print(highlight_code(body.rstrip("\n"), language), soft_wrap=True)
