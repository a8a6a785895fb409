"""The docs' tool examples are runnable: execute the "Defining tools" code blocks of docs/tools.md in order."""

from __future__ import annotations

from readme_support import DOCS, python_blocks


def test_defining_tools_examples_run() -> None:
    blocks = python_blocks("Defining tools", DOCS / "tools.md")
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "readme_example"}
    for block in blocks:
        exec(compile(block, str(DOCS / "tools.md"), "exec"), namespace)
    assert "DatabaseTool" in namespace and "fetch_stock_price" in namespace
