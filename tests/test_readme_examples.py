"""The README's tool examples are runnable: execute its "Defining tools" code blocks in order."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_defining_tools_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", _section("Defining tools"), flags=re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "readme_example"}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    assert "DatabaseTool" in namespace and "fetch_stock_price" in namespace
