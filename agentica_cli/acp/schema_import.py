"""The ACP SDK imported without pydantic reading its source for attribute docstrings.

`acp.schema` defines ~270 pydantic models with `use_attribute_docstrings=True`. On Python
before 3.13 pydantic then finds each class's source through the stack, tokenizes the class's
block and parses it twice, to copy each attribute's docstring into its field's description:
~60% of the import (605 -> 224-344 ms on 2 cores), paid before `agentica acp` can answer the
editor's `initialize`. The descriptions only document the models' JSON schema; validation
and serialisation never read them. So while the server imports the SDK, pydantic's
extraction finds no docstrings, and it is put back right after. Anything that differs from a
plain import is a description (tests/test_acp_schema_import.py compares the two).

If pydantic's internals are not what this expects, the SDK is imported the usual way.
"""

from __future__ import annotations

import sys
from typing import Any


def _no_docstrings(cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
    return {}


def import_protocol_schema() -> None:
    """Import `acp` and `acp.schema` (nothing if they are imported already)."""
    if "acp.schema" in sys.modules:
        return
    try:
        from pydantic._internal import _fields as fields
    except ImportError:
        fields = None  # type: ignore[assignment]
    original = getattr(fields, "extract_docstrings_from_cls", None)
    if original is None:
        import acp.schema
        return
    fields.extract_docstrings_from_cls = _no_docstrings
    try:
        import acp.schema  # noqa: F401 - imports acp first
    finally:
        fields.extract_docstrings_from_cls = original
