"""Reading the README's code examples, for the tests that run them."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks(section_title: str) -> list[str]:
    """The ```python blocks of the README section headed `## section_title`, in order."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {section_title}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
