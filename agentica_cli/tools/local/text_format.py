"""How a text file is laid out on disk (BOM, line endings, final newline), so edits keep it."""

from __future__ import annotations

from dataclasses import dataclass

UTF8_BOM = b"\xef\xbb\xbf"
BINARY_SNIFF_BYTES = 8192


class NotEditableTextError(ValueError):
    """The file is binary or not UTF-8: editing it as text would mangle it."""


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first 8 KB marks a file as binary (the rule git and grep use)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


@dataclass(frozen=True)
class TextFormat:
    bom: bool = False
    newline: str = "\n"
    final_newline: bool | None = None  # None: the file was empty, there is no state to keep

    def apply(self, text: str) -> str:
        """`text` with this format's line endings and final-newline state (no BOM: see encode)."""
        if text.startswith("\ufeff"):
            text = text[1:]
        normalized = text.replace("\r\n", "\n")
        if self.newline == "\r\n":
            normalized = normalized.replace("\n", "\r\n")
        return self.keep_final_newline(normalized)

    def keep_final_newline(self, text: str) -> str:
        """`text` with the final-newline state the file had (edits may have changed it)."""
        if self.final_newline is True and text and not text.endswith("\n"):
            return text + self.newline
        if self.final_newline is False and text.endswith("\n"):
            return text[:-2] if text.endswith("\r\n") else text[:-1]
        return text

    def encode(self, text: str) -> bytes:
        data = text.encode("utf-8")
        return UTF8_BOM + data if self.bom else data

    def adapt_newlines(self, fragment: str) -> str:
        """A fragment (old/new string) written with "\\n" in this file's line-ending style."""
        if self.newline == "\r\n":
            return fragment.replace("\r\n", "\n").replace("\n", "\r\n")
        return fragment


def detect_format(text: str, had_bom: bool) -> TextFormat:
    crlf = text.count("\r\n")
    lf_only = text.count("\n") - crlf
    newline = "\r\n" if crlf > lf_only else "\n"
    final = None if not text else text.endswith("\n")
    return TextFormat(bom=had_bom, newline=newline, final_newline=final)


def decode_text(data: bytes, display_name: str) -> tuple[str, TextFormat]:
    """Decode file bytes for editing, or refuse with a message the model can act on."""
    if looks_binary(data):
        raise NotEditableTextError(f"{display_name} is a binary file (NUL byte found); it cannot be edited as text.")
    had_bom = data.startswith(UTF8_BOM)
    body = data[len(UTF8_BOM):] if had_bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise NotEditableTextError(
            f"{display_name} is not valid UTF-8 (byte {err.start}); refusing to edit it so it is "
            "not mangled. Use execute (e.g. iconv or a script) if it must change."
        ) from None
    return text, detect_format(text, had_bom)
