"""The README's tool examples are runnable: execute its "Defining tools" code blocks in order."""

from __future__ import annotations

from readme_support import README, python_blocks


def test_defining_tools_examples_run() -> None:
    blocks = python_blocks("Defining tools")
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "readme_example"}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    assert "DatabaseTool" in namespace and "fetch_stock_price" in namespace
