"""Text from the model, a tool or a repository, made safe to print on a terminal.

Everything such a source controls may carry control characters: an escape sequence can
erase a line, move the cursor, recolour text or set the window title, so that an approval
shows `ls -la` while `rm -f victim.txt` runs. Before it reaches the terminal, every control
character except newline (and tab, expanded) is replaced by a visible stand-in: ESC becomes
`␛`, other C0 controls their Control Pictures glyph (`␀`…`␟`), DEL `␡`, and C1 controls
(U+0080–U+009F, which some terminals obey as CSI/OSC) `\\x9b`-style escapes. Bidirectional
overrides and isolates (which can reorder what is displayed, "Trojan Source") and zero-width
characters are shown as `<U+202E>` so the bytes shown are the bytes that run.

Pure string work, no imports beyond the standard library: -p and the REPL both use it.
"""

from __future__ import annotations

import re

# Unicode format characters that change how the rest of a line is displayed.
_BIDI_AND_INVISIBLE = (
    "\u200b\u200c\u200d\u200e\u200f"  # zero-width space/joiners, LRM, RLM
    "\u202a\u202b\u202c\u202d\u202e"  # embeddings and overrides
    "\u2066\u2067\u2068\u2069"  # isolates
    "\u2028\u2029"  # line/paragraph separators (some terminals break lines on them)
    "\ufeff"  # zero-width no-break space
)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI_AND_INVISIBLE + "]")
_UNSAFE_WITH_NEWLINES = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f" + _BIDI_AND_INVISIBLE + "]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (Control Pictures)
    if code == 0x7F:
        return "␡"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def safe_text(text: str, *, keep_newlines: bool = True, tab_size: int = 4) -> str:
    """`text` with every terminal control neutralised (see the module docstring).

    Newlines are kept unless `keep_newlines` is False (then shown as `␊`); a carriage return
    is always shown (`␍`), since `\\r` can overwrite the start of a line."""
    if not text:
        return text
    text = str(text)
    if "\t" in text:
        text = text.expandtabs(tab_size)
    pattern = _UNSAFE if keep_newlines else _UNSAFE_WITH_NEWLINES
    return pattern.sub(_visible, text)


def has_controls(text: str) -> bool:
    """Whether `text` holds anything `safe_text` would change (besides tabs)."""
    return bool(_UNSAFE.search(text or ""))


# Spaces other than the ASCII one: bash does not split words at them, a reader does.
_ODD_SPACES = re.compile("[\u00a0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]")


def safe_command(text: str) -> str:
    """A shell command for the approval question: `safe_text`, and every non-ASCII space shown
    as `<U+00A0>` (`ls\u00a0# list; touch x` is one command `ls\u00a0#` and then `touch x`,
    not `ls` and a comment)."""
    return _ODD_SPACES.sub(lambda m: f"<U+{ord(m.group()):04X}>", safe_text(text))


def has_odd_spaces(text: str) -> bool:
    return bool(_ODD_SPACES.search(text or ""))

